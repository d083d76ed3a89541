"""Findings of `gpuspec audit` about what sits under the GPU stack (GS789, GS794-GS799): kernel, OS, kubelet, runtime,
hand-set labels, and an export that belongs to another cluster."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

OPERATOR_ON_UNMANAGED = Entry(
    id="GS789",
    title="GPU Operator operands on a node of an unmanaged pool",
    severity=Severity.ERROR,
    rationale=(
        "A `managed: false` pool is configured by hand: its nodes must carry nvidia.com/gpu.deploy.operands=false. "
        "Without it the operator deploys its driver, toolkit and device plugin over the host's."
    ),
    tags=("audit",),
)

KERNEL_MISMATCH = Entry(
    id="GS794",
    title="node kernel differs from the pool's kernel",
    severity=Severity.WARNING,
    rationale=(
        "The driver container compiles (or a precompiled driver matches) against the running kernel: a node "
        "updated to another kernel than the pool declares is the usual cause of a driver that does not come back."
    ),
    tags=("audit",),
)

OS_IMAGE_MISMATCH = Entry(
    id="GS795",
    title="node OS image differs from the pool's OS",
    severity=Severity.WARNING,
    rationale=(
        "Driver images are built per OS distribution and version (`<version>-<os><version>` tags); a node on "
        "another OS than the pool declares pulls another image, or none exists."
    ),
    tags=("audit",),
)

KUBELET_MISMATCH = Entry(
    id="GS796",
    title="node kubelet minor differs from the cluster's Kubernetes version",
    severity=Severity.WARNING,
    rationale=(
        "The support matrix checks the spec's Kubernetes minor; a node whose kubelet runs another minor is "
        "outside what validate checked."
    ),
    tags=("audit",),
)

RUNTIME_MISMATCH = Entry(
    id="GS797",
    title="node container runtime differs from the cluster's runtime",
    severity=Severity.WARNING,
    rationale=(
        "The container toolkit configures the runtime the spec names (containerd or CRI-O); on a node with "
        "another runtime GPU containers do not get the NVIDIA runtime."
    ),
    tags=("audit",),
)

HAND_SET_LABELS = Entry(
    id="GS798",
    title="hand-set node labels no selector, controller or spec field explains",
    severity=Severity.WARNING,
    rationale=(
        "Labels that neither a pool's nodeSelector, NFD, GFD or the GPU Operator, the cloud provider, "
        "Karpenter, Cluster API nor Kubernetes itself sets were put there by hand: they are lost when the node "
        "is replaced, and they are what a migration to the spec must record and remove."
    ),
    tags=("audit",),
)

NO_NODE_OF_CLUSTER = Entry(
    id="GS799",
    title="node export matches no pool of the cluster",
    severity=Severity.ERROR,
    rationale=(
        "When not one node of the export matches a pool's nodeSelector, the export is of another cluster (or "
        "the selectors are all wrong): every other audit result would be meaningless."
    ),
    tags=("audit",),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    OPERATOR_ON_UNMANAGED,
    KERNEL_MISMATCH,
    OS_IMAGE_MISMATCH,
    KUBELET_MISMATCH,
    RUNTIME_MISMATCH,
    HAND_SET_LABELS,
    NO_NODE_OF_CLUSTER,
)
