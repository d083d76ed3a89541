"""Find and run the external tools gpuspec drives (helm, kubectl/kustomize, git)."""

from gpuspec.tools.discover import (
    ENV_HELM,
    ENV_KUBECTL,
    ENV_KUSTOMIZE,
    KustomizeCommand,
    find_git,
    find_helm,
    find_kubectl,
    find_kustomize,
    local_tool_dirs,
)
from gpuspec.tools.runner import DEFAULT_TIMEOUT, ToolResult, run_tool
from gpuspec.tools.versions import helm_version, kubectl_version

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_HELM",
    "ENV_KUBECTL",
    "ENV_KUSTOMIZE",
    "KustomizeCommand",
    "ToolResult",
    "find_git",
    "find_helm",
    "find_kubectl",
    "find_kustomize",
    "helm_version",
    "kubectl_version",
    "local_tool_dirs",
    "run_tool",
]
