"""Verify rendered output with real tools: helm template, kustomize build, CRD and Kubernetes schema validation."""
