"""How node autoscalers decide a new GPU node is ready (packaged data with its source notes)."""

from __future__ import annotations

import functools
from typing import Any

from gpuspec.matrix.load import read_data_file


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = read_data_file("autoscaling")
    return data


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())


def gpu_label(cloud: str, kubernetes: str | None = None) -> str | None:
    """The node label cluster-autoscaler's cloud provider ``cloud`` reads as "this node has GPUs", if it has one,
    in the cluster-autoscaler release of Kubernetes minor ``kubernetes`` (which it follows; None = the newest)."""
    ca = _data()["cluster_autoscaler"]
    label = ca["gpu_labels"].get(cloud)
    if kubernetes is not None:
        for first, older in sorted(ca.get("gpu_labels_before", {}).get(cloud, {}).items(),
                                   key=lambda item: _minor(item[0]), reverse=True):
            if _minor(kubernetes) < _minor(first):
                label = older
    return str(label) if label else None


def gpu_label_set_by_platform(cloud: str) -> bool:
    """Whether the platform of ``cloud`` puts the GPU label on every GPU node itself (GKE, AKS), rather than the
    node group gpuspec describes."""
    return cloud in _data()["cluster_autoscaler"]["gpu_label_set_by_platform"]


def platform_gpu_type(cloud: str) -> str | None:
    """The GPU label's value (cluster-autoscaler's GPU type) the platform of ``cloud`` sets, where the sources
    give it (azure ``nvidia``); None where it is the platform's own accelerator name (GKE) or not the platform's."""
    value = _data()["cluster_autoscaler"]["gpu_label_set_by_platform"].get(cloud)
    return str(value) if value else None


def ready_gpu_resource() -> str:
    """The resource whose allocatable count tells cluster-autoscaler a labelled node's NVIDIA GPUs are ready."""
    return str(_data()["cluster_autoscaler"]["ready_gpu_resource"])


def unready_limits() -> tuple[int, int]:
    """cluster-autoscaler's defaults (``--ok-total-unready-count``, ``--max-total-unready-percentage``) past which
    it halts."""
    limits = _data()["cluster_autoscaler"]["unready_limits"]
    return int(limits["ok_total_unready_count"]), int(limits["max_total_unready_percentage"])


def template_resources_clouds() -> tuple[str, ...]:
    """Clouds whose node-group template gpuspec can make list extended resources (aws and azure tags)."""
    return tuple(_data()["cluster_autoscaler"]["template_resources_clouds"])


def azure_template_tag_prefix() -> str:
    """Prefix of the VMSS tags that describe a scale set's template to cluster-autoscaler on Azure."""
    return str(_data()["cluster_autoscaler"]["azure_template_tag_prefix"])


def karpenter_instance_gpu_resource() -> str:
    """The one GPU resource Karpenter's instance types offer without a NodeOverlay."""
    return str(_data()["karpenter"]["instance_type_gpu_resource"])


def node_overlay() -> dict[str, str]:
    """The NodeOverlay API: ``api_version``, the Karpenter release it came with (``since``) and its feature gate."""
    return {k: str(v) for k, v in _data()["karpenter"]["node_overlay"].items()}


def startup_taint_prefixes() -> tuple[str, ...]:
    """Taint key prefixes cluster-autoscaler treats as startup taints (node not ready while present)."""
    return tuple(_data()["cluster_autoscaler"]["startup_taint_prefixes"])


def aws_template_tag_prefix() -> str:
    """Prefix of the Auto Scaling Group tags that describe a node group's template to cluster-autoscaler on AWS."""
    return str(_data()["cluster_autoscaler"]["aws_template_tag_prefix"])


def operator_removes_taints() -> bool:
    """Whether the GPU Operator removes any node taint once the GPUs are advertised (it does not)."""
    return bool(_data()["gpu_operator"]["removes_taints"])
