"""Findings of `gpuspec audit` (GS750-GS79x): exported node state compared with the spec (GS794-GS799 in
:mod:`gpuspec.catalogue.audit_host`; the operator's settings, GS783, GS785 and GS786, in
:mod:`gpuspec.catalogue.audit_operator`)."""

from __future__ import annotations

from gpuspec.catalogue import audit_host, audit_operator
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

UNMATCHED_GPU_NODE = Entry(
    id="GS750",
    title="GPU node matched by no pool",
    severity=Severity.WARNING,
    rationale=(
        "A node with NVIDIA GPUs that no pool selects gets no spec-managed driver, MIG layout or sharing "
        "settings, and its GPUs are invisible to capacity planning."
    ),
    tags=("audit",),
)

MULTI_POOL_NODE = Entry(
    id="GS751",
    title="node matched by more than one pool",
    severity=Severity.ERROR,
    rationale=(
        "Overlapping selectors give a node two drivers, MIG layouts or sharing configs; NVIDIADriver "
        "resources with overlapping selectors report ConflictingNodeSelector."
    ),
    tags=("audit",),
)

POOL_SHORT = Entry(
    id="GS752",
    title="pool has fewer ready nodes than declared",
    severity=Severity.WARNING,
    rationale="Capacity and quotas are planned from the declared node count.",
    tags=("audit",),
)

POOL_OVER = Entry(
    id="GS753",
    title="pool matches more nodes than declared",
    severity=Severity.INFO,
    rationale="The spec's node count is out of date; quotas and rollout limits are computed from it.",
    tags=("audit",),
)

NODE_NOT_READY = Entry(
    id="GS754",
    title="pool node not ready or cordoned",
    severity=Severity.WARNING,
    rationale=(
        "A NotReady or cordoned node takes no GPU work; cordons left behind by a failed upgrade are a common "
        "cause of idle GPUs."
    ),
    tags=("audit",),
)

TAINT_MISSING = Entry(
    id="GS755",
    title="pool node lacks a taint the pool declares",
    severity=Severity.WARNING,
    rationale="Without the taint, pods that do not need GPUs are scheduled onto expensive GPU nodes.",
    tags=("audit",),
)

NO_GPUS_ADVERTISED = Entry(
    id="GS760",
    title="GPU node advertises no GPUs",
    severity=Severity.ERROR,
    rationale=(
        "The idle-cluster case: the node is labelled as a GPU node but the device plugin offers no "
        "nvidia.com/gpu (or MIG) resources, usually because the driver or toolkit did not come up."
    ),
    doc="""
A node carries GPU labels (NFD's NVIDIA PCI label, `nvidia.com/gpu.present`, GFD's product or count) but its
allocatable resources offer no `nvidia.com/gpu`, shared or MIG device.  Reported for pool members and for GPU
nodes outside every pool alike (those also get GS750): an idle GPU node is an error wherever it is.

Failing: a node labelled `nvidia.com/gpu.present: "true"` with `allocatable: {nvidia.com/gpu: "0"}`.
Passing: the same node advertising its GPUs.
""",
    tags=("audit",),
    source="cloud-native-docs gpu-operator/getting-started.rst (verification: nodes advertise nvidia.com/gpu)",
)

ADVERTISED_MISMATCH = Entry(
    id="GS761",
    title="advertised GPU resources differ from the spec",
    severity=Severity.ERROR,
    rationale=(
        "Fewer (or other) allocatable GPU resources than the pool's GPUs, MIG layout and sharing imply: a GPU "
        "fell off the bus, MIG was not applied, or sharing is misconfigured."
    ),
    tags=("audit",),
)

PRODUCT_MISMATCH = Entry(
    id="GS762",
    title="GPU product differs from the spec",
    severity=Severity.ERROR,
    rationale="Support-matrix checks and MIG layouts were validated for the declared product.",
    tags=("audit",),
)

COUNT_MISMATCH = Entry(
    id="GS763",
    title="GPU count differs from the spec",
    severity=Severity.ERROR,
    rationale="The node reports a different number of GPUs than the pool declares.",
    tags=("audit",),
)

PRODUCT_UNKNOWN = Entry(
    id="GS764",
    title="GFD product string not in gpuspec's map",
    severity=Severity.INFO,
    rationale=(
        "gpuspec cannot compare a product it cannot name; add the string to gpuspec/audit/data/gfd_products.yaml."
    ),
    tags=("audit",),
)

GFD_LABELS_MISSING = Entry(
    id="GS765",
    title="GPU node without GPU Feature Discovery labels",
    severity=Severity.WARNING,
    rationale=(
        "Without GFD labels (product, count, driver) the node's GPUs cannot be checked; GFD or NFD is not running."
    ),
    tags=("audit",),
)

DRIVER_DRIFT = Entry(
    id="GS770",
    title="driver versions differ within a pool",
    severity=Severity.WARNING,
    rationale="Nodes of one pool should run one driver; drift means a stuck or partial upgrade.",
    tags=("audit",),
)

DRIVER_SPEC_MISMATCH = Entry(
    id="GS771",
    title="driver version differs from the spec",
    severity=Severity.ERROR,
    rationale="The node runs another driver than the version or branch the spec pins.",
    tags=("audit",),
)

UPGRADE_FAILED = Entry(
    id="GS772",
    title="driver upgrade failed on a node",
    severity=Severity.ERROR,
    rationale=(
        "The upgrade controller marked the node upgrade-failed; it stays cordoned or on the old driver until "
        "relabelled upgrade-required."
    ),
    tags=("audit",),
)

UPGRADE_IN_PROGRESS = Entry(
    id="GS773",
    title="driver upgrade in progress on a node",
    severity=Severity.INFO,
    rationale="The node is being upgraded; its other findings may be transient.",
    tags=("audit",),
)

DRIVER_OWNER_MISMATCH = Entry(
    id="GS775",
    title="who installs the driver differs from the spec",
    severity=Severity.ERROR,
    rationale=(
        "The spec says operator-managed but the operator found a preinstalled host driver, or the spec says "
        "host but the operator deploys its driver container."
    ),
    tags=("audit",),
)

OPERAND_DISABLED = Entry(
    id="GS776",
    title="operand disabled on a pool node by its deploy label",
    severity=Severity.WARNING,
    rationale="nvidia.com/gpu.deploy.<operand>=false keeps that operand off the node.",
    tags=("audit",),
)

MIG_FAILED = Entry(
    id="GS780",
    title="MIG configuration failed",
    severity=Severity.ERROR,
    rationale="MIG Manager set nvidia.com/mig.config.state=failed: the node's GPUs are not partitioned as asked.",
    tags=("audit",),
)

MIG_PENDING = Entry(
    id="GS781",
    title="MIG configuration pending",
    severity=Severity.WARNING,
    rationale="MIG Manager has not finished applying nvidia.com/mig.config (pending or rebooting).",
    tags=("audit",),
)

MIG_CONFIG_MISMATCH = Entry(
    id="GS782",
    title="MIG config label differs from the pool's layout",
    severity=Severity.ERROR,
    rationale=(
        "nvidia.com/mig.config selects the MIG Manager layout; a different value partitions the GPUs "
        "differently from the spec."
    ),
    tags=("audit",),
)

CLUSTERPOLICY_NOT_READY = Entry(
    id="GS790",
    title="ClusterPolicy not ready",
    severity=Severity.ERROR,
    rationale="The GPU Operator reports its operands are not all running.",
    tags=("audit",),
)

NVIDIADRIVER_NOT_READY = Entry(
    id="GS791",
    title="NVIDIADriver not ready",
    severity=Severity.ERROR,
    rationale="The driver of the nodes that NVIDIADriver selects is not running (or selectors conflict).",
    tags=("audit",),
)

OPERATOR_RESOURCE_MISSING = Entry(
    id="GS792",
    title="operator resource missing, ignored or disabled",
    severity=Severity.WARNING,
    rationale=(
        "An input without a ClusterPolicy, or a ClusterPolicy/NVIDIADriver in state ignored or disabled, "
        "means the operator is not managing the nodes the way the spec assumes."
    ),
    tags=("audit",),
)

NVIDIADRIVER_VERSION_MISMATCH = Entry(
    id="GS793",
    title="NVIDIADriver version differs from the pool's pinned driver",
    severity=Severity.ERROR,
    rationale="The NVIDIADriver selecting a pool's nodes installs another driver than the pool pins.",
    tags=("audit",),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    UNMATCHED_GPU_NODE,
    MULTI_POOL_NODE,
    POOL_SHORT,
    POOL_OVER,
    NODE_NOT_READY,
    TAINT_MISSING,
    NO_GPUS_ADVERTISED,
    ADVERTISED_MISMATCH,
    PRODUCT_MISMATCH,
    COUNT_MISMATCH,
    PRODUCT_UNKNOWN,
    GFD_LABELS_MISSING,
    DRIVER_DRIFT,
    DRIVER_SPEC_MISMATCH,
    UPGRADE_FAILED,
    UPGRADE_IN_PROGRESS,
    DRIVER_OWNER_MISMATCH,
    OPERAND_DISABLED,
    MIG_FAILED,
    MIG_PENDING,
    MIG_CONFIG_MISMATCH,
    CLUSTERPOLICY_NOT_READY,
    NVIDIADRIVER_NOT_READY,
    OPERATOR_RESOURCE_MISSING,
    NVIDIADRIVER_VERSION_MISMATCH,
    *audit_host.ENTRIES,
    *audit_operator.ENTRIES,
)
