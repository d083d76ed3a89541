"""gpuspec: declarative, reviewable NVIDIA GPU Operator fleets for Kubernetes and GitOps."""

__version__ = "0.1.0"
