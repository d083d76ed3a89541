"""Acceptance evidence: the exported Jobs and Pods of the acceptance namespace, read against the rendered revision."""
