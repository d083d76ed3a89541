"""Rule ids of `gpuspec audit` (GS750–GS79x): id, title, default severity and rationale, as plain data.

Audit checks compare exported node state with the spec, so they are not
policy-engine rules over the fleet alone; this table is what reporters and
`docs/audit.md` show about them.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuspec.findings import Severity
from gpuspec.report.base import RuleDoc


@dataclass(frozen=True, slots=True)
class AuditRule:
    """Metadata of one audit rule id."""

    id: str
    title: str
    severity: Severity
    rationale: str


UNMATCHED_GPU_NODE = "GS750"
MULTI_POOL_NODE = "GS751"
POOL_SHORT = "GS752"
POOL_OVER = "GS753"
NODE_NOT_READY = "GS754"
TAINT_MISSING = "GS755"
NO_GPUS_ADVERTISED = "GS760"
ADVERTISED_MISMATCH = "GS761"
PRODUCT_MISMATCH = "GS762"
COUNT_MISMATCH = "GS763"
PRODUCT_UNKNOWN = "GS764"
GFD_LABELS_MISSING = "GS765"
DRIVER_DRIFT = "GS770"
DRIVER_SPEC_MISMATCH = "GS771"
UPGRADE_FAILED = "GS772"
UPGRADE_IN_PROGRESS = "GS773"
DRIVER_OWNER_MISMATCH = "GS775"
OPERAND_DISABLED = "GS776"
MIG_FAILED = "GS780"
MIG_PENDING = "GS781"
MIG_CONFIG_MISMATCH = "GS782"
CLUSTERPOLICY_NOT_READY = "GS790"
NVIDIADRIVER_NOT_READY = "GS791"
OPERATOR_RESOURCE_MISSING = "GS792"
NVIDIADRIVER_VERSION_MISMATCH = "GS793"

_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

AUDIT_RULES: dict[str, AuditRule] = {r.id: r for r in (
    AuditRule(UNMATCHED_GPU_NODE, "GPU node matched by no pool", _W,
              "A node with NVIDIA GPUs that no pool selects gets no spec-managed driver, MIG layout or sharing "
              "settings, and its GPUs are invisible to capacity planning."),
    AuditRule(MULTI_POOL_NODE, "node matched by more than one pool", _E,
              "Overlapping selectors give a node two drivers, MIG layouts or sharing configs; NVIDIADriver "
              "resources with overlapping selectors report ConflictingNodeSelector."),
    AuditRule(POOL_SHORT, "pool has fewer ready nodes than declared", _W,
              "Capacity and quotas are planned from the declared node count."),
    AuditRule(POOL_OVER, "pool matches more nodes than declared", _I,
              "The spec's node count is out of date; quotas and rollout limits are computed from it."),
    AuditRule(NODE_NOT_READY, "pool node not ready or cordoned", _W,
              "A NotReady or cordoned node takes no GPU work; cordons left behind by a failed upgrade are a "
              "common cause of idle GPUs."),
    AuditRule(TAINT_MISSING, "pool node lacks a taint the pool declares", _W,
              "Without the taint, pods that do not need GPUs are scheduled onto expensive GPU nodes."),
    AuditRule(NO_GPUS_ADVERTISED, "GPU node advertises no GPUs", _E,
              "The idle-cluster case: the node is labelled as a GPU node but the device plugin offers no "
              "nvidia.com/gpu (or MIG) resources, usually because the driver or toolkit did not come up."),
    AuditRule(ADVERTISED_MISMATCH, "advertised GPU resources differ from the spec", _E,
              "Fewer (or other) allocatable GPU resources than the pool's GPUs, MIG layout and sharing "
              "imply: a GPU fell off the bus, MIG was not applied, or sharing is misconfigured."),
    AuditRule(PRODUCT_MISMATCH, "GPU product differs from the spec", _E,
              "Support-matrix checks and MIG layouts were validated for the declared product."),
    AuditRule(COUNT_MISMATCH, "GPU count differs from the spec", _E,
              "The node reports a different number of GPUs than the pool declares."),
    AuditRule(PRODUCT_UNKNOWN, "GFD product string not in gpuspec's map", _I,
              "gpuspec cannot compare a product it cannot name; add the string to "
              "gpuspec/audit/data/gfd_products.yaml."),
    AuditRule(GFD_LABELS_MISSING, "GPU node without GPU Feature Discovery labels", _W,
              "Without GFD labels (product, count, driver) the node's GPUs cannot be checked; GFD or NFD is "
              "not running."),
    AuditRule(DRIVER_DRIFT, "driver versions differ within a pool", _W,
              "Nodes of one pool should run one driver; drift means a stuck or partial upgrade."),
    AuditRule(DRIVER_SPEC_MISMATCH, "driver version differs from the spec", _E,
              "The node runs another driver than the version or branch the spec pins."),
    AuditRule(UPGRADE_FAILED, "driver upgrade failed on a node", _E,
              "The upgrade controller marked the node upgrade-failed; it stays cordoned or on the old driver "
              "until relabelled upgrade-required."),
    AuditRule(UPGRADE_IN_PROGRESS, "driver upgrade in progress on a node", _I,
              "The node is being upgraded; its other findings may be transient."),
    AuditRule(DRIVER_OWNER_MISMATCH, "who installs the driver differs from the spec", _E,
              "The spec says operator-managed but the operator found a preinstalled host driver, or the "
              "spec says host but the operator deploys its driver container."),
    AuditRule(OPERAND_DISABLED, "operand disabled on a pool node by its deploy label", _W,
              "nvidia.com/gpu.deploy.<operand>=false keeps that operand off the node."),
    AuditRule(MIG_FAILED, "MIG configuration failed", _E,
              "MIG Manager set nvidia.com/mig.config.state=failed: the node's GPUs are not partitioned as asked."),
    AuditRule(MIG_PENDING, "MIG configuration pending", _W,
              "MIG Manager has not finished applying nvidia.com/mig.config (pending or rebooting)."),
    AuditRule(MIG_CONFIG_MISMATCH, "MIG config label differs from the pool's layout", _E,
              "nvidia.com/mig.config selects the MIG Manager layout; a different value partitions the GPUs "
              "differently from the spec."),
    AuditRule(CLUSTERPOLICY_NOT_READY, "ClusterPolicy not ready", _E,
              "The GPU Operator reports its operands are not all running."),
    AuditRule(NVIDIADRIVER_NOT_READY, "NVIDIADriver not ready", _E,
              "The driver of the nodes that NVIDIADriver selects is not running (or selectors conflict)."),
    AuditRule(OPERATOR_RESOURCE_MISSING, "operator resource missing, ignored or disabled", _W,
              "An input without a ClusterPolicy, or a ClusterPolicy/NVIDIADriver in state ignored or disabled, "
              "means the operator is not managing the nodes the way the spec assumes."),
    AuditRule(NVIDIADRIVER_VERSION_MISMATCH, "NVIDIADriver version differs from the pool's pinned driver", _E,
              "The NVIDIADriver selecting a pool's nodes installs another driver than the pool pins."),
)}


def rule_docs() -> dict[str, RuleDoc]:
    """Reporter metadata for every audit rule id."""
    return {r.id: RuleDoc(r.id, r.title, r.severity.value, r.rationale) for r in AUDIT_RULES.values()}
