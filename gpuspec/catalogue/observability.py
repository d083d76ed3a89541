"""Observability and label findings (GS70x-GS74x)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry, Param
from gpuspec.catalogue.labels_workload import ENTRIES as WORKLOAD_ENTRIES
from gpuspec.findings import Severity

DCGM_EXPORTER_ON = Entry(
    id="GS701",
    title="DCGM exporter is on",
    severity=Severity.WARNING,
    rationale="GPU health and utilisation are invisible without DCGM metrics.",
    doc="""
The DCGM exporter runs (`operator.operands.dcgmExporter.enabled`).

Without it there are no GPU metrics: no utilisation, no XID errors, no
temperature or ECC data for dashboards and alerts.

Failing: `dcgmExporter: {enabled: false}`.  Passing: the default, or
`enabled: true`.
""",
    tags=("observability",),
)

SERVICE_MONITOR_ON = Entry(
    id="GS702",
    title="DCGM exporter ServiceMonitor is on",
    severity=Severity.WARNING,
    rationale="Metrics nobody scrapes do not reach dashboards or alerts.",
    doc="""
The DCGM exporter has a ServiceMonitor (`dcgmExporter.serviceMonitor`), so Prometheus scrapes it.

Failing: `dcgmExporter: {serviceMonitor: false}`.  Passing: the default.
Clusters with the exporter off are left to GS701.
""",
    tags=("observability",),
)

ALERTS_ON = Entry(
    id="GS703",
    title="GPU alerting is on",
    severity=Severity.WARNING,
    rationale="Failed driver upgrades, XID errors and lost GPUs must page someone.",
    doc="""
gpuspec renders its GPU and operator alerts (`operator.operands.alerts`).

Failing: `operands: {alerts: false}`.  Passing: the default.
""",
    tags=("observability",),
)

SELECTORS_AVOID_OWNED_LABELS = Entry(
    id="GS704",
    title="Node selectors do not use operator-owned labels",
    severity=Severity.ERROR,
    rationale="Labels the operator writes move under the pool when drivers or MIG change, and lag provisioning.",
    doc="""
Pool node selectors do not use labels that the GPU Operator, NFD or GFD own.

`nvidia.com/*` and `feature.node.kubernetes.io/*` labels are written by
the operator's components from what they detect; they appear only after
the operator runs (a selector on them cannot bootstrap the pool) and
change when the driver or MIG layout changes.  Select pools with labels
your provisioning sets.

Failing: `nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}`.
Passing: `nodeSelector: {acme.example/gpu-pool: h100}`.
""",
    params=(
        Param(
            "reserved_domains",
            list,
            ("nvidia.com", "feature.node.kubernetes.io"),
            "Label domains (and their subdomains) owned by the operator, NFD and GFD.",
        ),
    ),
    tags=("labels",),
)

SELECTORS_DISJOINT = Entry(
    id="GS705",
    title="Pool node selectors are disjoint",
    severity=Severity.ERROR,
    rationale="A node in two pools gets two driver and MIG configurations; the operator flaps between them.",
    doc="""
No node can belong to two pools: pool node selectors exclude each other.

By default two selectors clash when one is a subset of the other, so every
node of the narrower pool also matches the wider one.  With
`strict_disjoint` they clash unless they share a key with different
values.  Clashing pools form groups (a pool that clashes with a member
joins the group): one finding per group, on its second pool.

Failing: `{acme.example/gpu: "true"}` and
`{acme.example/gpu: "true", acme.example/pool: h100}`.  Passing:
`{acme.example/gpu-pool: h100}` and `{acme.example/gpu-pool: a100}`.
""",
    params=(
        Param(
            "strict_disjoint",
            bool,
            False,
            "Also clash when the selectors merely do not contradict each other (no shared key with different values).",
        ),
    ),
    tags=("labels",),
)

SELECTOR_MATCHES_EVERY_NODE = Entry(
    id="GS706",
    title="Pool selected only by labels every node has",
    severity=Severity.ERROR,
    rationale="A selector of well-known labels such as kubernetes.io/arch also matches CPU and other pools' nodes.",
    doc="""
A pool's node selector uses only labels that the kubelet sets on every node (`kubernetes.io/arch`,
`kubernetes.io/os` and their `beta.` forms).  It selects every node of that architecture: CPU nodes get the
pool's driver and configs, and the canary pool's nodes are caught as well.

Failing: `nodeSelector: {kubernetes.io/arch: amd64}`.
Passing: `nodeSelector: {kubernetes.io/arch: amd64, acme.example/gpu-pool: h100}`.
""",
    tags=("labels",),
    source="Kubernetes \"Well-Known Labels, Annotations and Taints\" (kubelet sets kubernetes.io/arch and "
    "kubernetes.io/os on every node)",
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    DCGM_EXPORTER_ON,
    SERVICE_MONITOR_ON,
    ALERTS_ON,
    SELECTORS_AVOID_OWNED_LABELS,
    SELECTORS_DISJOINT,
    SELECTOR_MATCHES_EVERY_NODE,
    *WORKLOAD_ENTRIES,
)
