"""How node autoscalers decide a new GPU node is ready (packaged data with its source notes)."""

from __future__ import annotations

import functools
from typing import Any

from gpuspec.matrix.load import read_data_file


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = read_data_file("autoscaling")
    return data


def gpu_label(cloud: str) -> str | None:
    """The node label cluster-autoscaler's cloud provider ``cloud`` reads as "this node has GPUs", if it has one."""
    label = _data()["cluster_autoscaler"]["gpu_labels"].get(cloud)
    return str(label) if label else None


def startup_taint_prefixes() -> tuple[str, ...]:
    """Taint key prefixes cluster-autoscaler treats as startup taints (node not ready while present)."""
    return tuple(_data()["cluster_autoscaler"]["startup_taint_prefixes"])


def aws_template_tag_prefix() -> str:
    """Prefix of the Auto Scaling Group tags that describe a node group's template to cluster-autoscaler on AWS."""
    return str(_data()["cluster_autoscaler"]["aws_template_tag_prefix"])


def operator_removes_taints() -> bool:
    """Whether the GPU Operator removes any node taint once the GPUs are advertised (it does not)."""
    return bool(_data()["gpu_operator"]["removes_taints"])
