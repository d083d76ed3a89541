"""What a node says about its GPUs, read from the labels GPU Operator, GFD and NFD set and from its resources."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuspec.audit.products import ProductMatch, lookup_product

if TYPE_CHECKING:  # the node models (pydantic) only where nodes are read: the handover page needs the label names
    from gpuspec.audit.inventory import Node

# Labels written by NFD (node-feature-discovery).
NFD_PCI_NVIDIA = "feature.node.kubernetes.io/pci-10de.present"
NFD_OS_ID = "feature.node.kubernetes.io/system-os_release.ID"
NFD_OS_VERSION = "feature.node.kubernetes.io/system-os_release.VERSION_ID"
NFD_KERNEL = "feature.node.kubernetes.io/kernel-version.full"

# Labels written by the GPU Operator.
GPU_PRESENT = "nvidia.com/gpu.present"
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
UPGRADE_STATE = "nvidia.com/gpu-driver-upgrade-state"

# Labels written by GPU Feature Discovery (GFD) and the device plugin.
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_COUNT = "nvidia.com/gpu.count"
DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
DRIVER_PARTS = (
    ("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor",
     "nvidia.com/cuda.driver-version.revision"),
    ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
)
MIG_STRATEGY = "nvidia.com/mig.strategy"
SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"
GPU_REPLICAS = "nvidia.com/gpu.replicas"

# Labels read and written by MIG Manager.
MIG_CONFIG = "nvidia.com/mig.config"
MIG_STATE = "nvidia.com/mig.config.state"

# Extended resources the device plugin advertises.
GPU_RESOURCE = "nvidia.com/gpu"
SHARED_SUFFIX = ".shared"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"

#: The MIG Manager config name meaning "MIG off" (migManager.config.default).
MIG_DISABLED = "all-disabled"

#: Driver upgrade states (nvidia.com/gpu-driver-upgrade-state) in which the node is being worked on.
UPGRADE_IN_PROGRESS = frozenset({
    "upgrade-required", "cordon-required", "wait-for-jobs-required", "pod-deletion-required", "drain-required",
    "node-maintenance-required", "post-maintenance-required", "pod-restart-required", "validation-required",
    "uncordon-required",
})
#: The node labels and annotations the driver upgrade state machine acts on besides its state label, and what each
#: says of a node: k8s-operator-libs pkg/upgrade/consts.go (NVIDIA/k8s-operator-libs main 11e747a; the GPU
#: Operator names the driver "gpu": nvidia.com/gpu-driver-upgrade...).
UPGRADE_SKIP = "nvidia.com/gpu-driver-upgrade.skip"
UPGRADE_MARKS: dict[str, str] = {
    "nvidia.com/gpu-driver-upgrade-requested": "an upgrade is requested: the controller moves it to upgrade-required",
    "nvidia.com/gpu-driver-upgrade.driver-wait-for-safe-load":
        "its driver waits for a safe load: the node is to be cordoned and emptied before the driver loads",
    "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time":
        "the controller waits for its jobs to complete (wait-for-jobs)",
    "nvidia.com/gpu-driver-upgrade-validation-start-time": "the controller waits for the new driver's validation",
    "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable":
        "an upgrade started on it while it was cordoned and has not finished",
}
UPGRADE_FAILED = "upgrade-failed"


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def gpu_resources(resources: dict[str, str]) -> dict[str, int]:
    """The NVIDIA GPU extended resources (full GPUs, shared GPUs, MIG devices) of a capacity/allocatable map."""
    out: dict[str, int] = {}
    for name, quantity in resources.items():
        if name == GPU_RESOURCE or name == GPU_RESOURCE + SHARED_SUFFIX or name.startswith(MIG_RESOURCE_PREFIX):
            out[name] = _int(quantity) or 0
    return out


def driver_version(labels: dict[str, str]) -> str | None:
    """The NVIDIA driver version GFD recorded on a node (e.g. 580.95.05), or None when it recorded none."""
    full = labels.get(DRIVER_FULL)
    if full:
        return full.strip()
    for names in DRIVER_PARTS:
        parts = [labels.get(n) for n in names]
        if parts[0] and parts[1]:
            return ".".join(p for p in parts if p)
    return None


def version_key(version: str) -> tuple[int, ...]:
    """A driver version as numbers, so 580.95.5 and 580.95.05 compare equal."""
    out: list[int] = []
    for part in version.split("."):
        try:
            out.append(int(part))
        except ValueError:
            return (-1,)
    return tuple(out)


@dataclass(frozen=True)
class NodeFacts:
    """The GPU-related state of one node, read from its labels, taints, conditions and resources."""

    name: str
    labels: dict[str, str]
    ready: bool
    ready_reason: str | None
    unschedulable: bool
    taints: frozenset[tuple[str, str, str]]
    allocatable: dict[str, int]
    capacity: dict[str, int]
    product_label: str | None
    product: ProductMatch | None
    gpu_count: int | None
    driver: str | None
    mig_config: str | None
    mig_state: str | None
    mig_strategy: str | None
    upgrade_state: str | None
    deploy: dict[str, str] = field(default_factory=dict)
    #: Labels and annotations of the upgrade state machine besides its state (see :data:`UPGRADE_MARKS`), by key.
    upgrade_marks: dict[str, str] = field(default_factory=dict)
    kernel: str = ""
    os_image: str = ""
    kubelet: str = ""
    runtime: str = ""

    @property
    def advertised(self) -> int:
        """Total NVIDIA GPU resources the node offers to pods (full, shared and MIG devices)."""
        return sum(self.allocatable.values())

    @property
    def labelled_gpu(self) -> bool:
        """True when NFD, the operator or GFD labelled the node as having NVIDIA GPUs."""
        return (
            self.labels.get(GPU_PRESENT) == "true"
            or self.labels.get(NFD_PCI_NVIDIA) == "true"
            or self.product_label is not None
            or (self.gpu_count or 0) > 0
        )

    @property
    def has_gpus(self) -> bool:
        """True when the node carries NVIDIA GPUs by its labels or its advertised resources."""
        return self.labelled_gpu or self.advertised > 0 or sum(self.capacity.values()) > 0


def node_facts(node: Node) -> NodeFacts:
    """Read the GPU-related facts of ``node``."""
    labels = node.labels
    ready_condition = next((c for c in node.status.conditions if c.type == "Ready"), None)
    product_label = labels.get(GPU_PRODUCT)
    return NodeFacts(
        name=node.name,
        labels=dict(labels),
        ready=ready_condition is not None and ready_condition.status == "True",
        ready_reason=(ready_condition.reason if ready_condition else "no Ready condition reported"),
        unschedulable=node.spec.unschedulable,
        taints=frozenset((t.key, t.value, t.effect) for t in node.spec.taints),
        allocatable=gpu_resources(node.status.allocatable),
        capacity=gpu_resources(node.status.capacity),
        product_label=product_label,
        product=lookup_product(product_label) if product_label else None,
        gpu_count=_int(labels.get(GPU_COUNT)),
        driver=driver_version(labels),
        mig_config=labels.get(MIG_CONFIG),
        mig_state=labels.get(MIG_STATE),
        mig_strategy=labels.get(MIG_STRATEGY),
        upgrade_state=labels.get(UPGRADE_STATE) or None,
        deploy={k[len(DEPLOY_PREFIX):]: v for k, v in labels.items() if k.startswith(DEPLOY_PREFIX)},
        upgrade_marks={k: v for k, v in {**node.annotations, **labels}.items()
                       if k in UPGRADE_MARKS or k == UPGRADE_SKIP},
        kernel=node.status.node_info.kernel_version,
        os_image=node.status.node_info.os_image,
        kubelet=node.status.node_info.kubelet_version,
        runtime=node.status.node_info.container_runtime_version,
    )


#: How many node names a message lists before it says "and N more".
MAX_NAMES = 8


def node_names(nodes: Iterable[NodeFacts | str]) -> str:
    """A readable, bounded list of node names."""
    names = sorted(n if isinstance(n, str) else n.name for n in nodes)
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")
