"""Upgrade and rollout findings (GS5xx)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry, Param
from gpuspec.catalogue.rollout_acceptance import ENTRIES as ACCEPTANCE_ENTRIES
from gpuspec.catalogue.rollout_chart import ENTRIES as CHART_ENTRIES
from gpuspec.findings import Severity

CANARY_POOL_NAMED = Entry(
    id="GS501",
    title="Multi-pool cluster names a canary pool",
    severity=Severity.WARNING,
    rationale="Without a canary, a bad driver or operator change reaches every pool at once.",
    doc="""
A cluster with several pools names a canary pool (`rollout.canaryPool`).

The canary pool takes every driver and operator change first, so a bad
change hits a few nodes before it hits production capacity.  Clusters with
fewer pools than `min_pools` are exempt.

Failing: three pools and no `rollout.canaryPool`.  Passing:
`rollout: {canaryPool: h100-canary}`.
""",
    params=(Param("min_pools", int, 2, "Clusters with at least this many pools need a canary pool."),),
    tags=("rollout",),
)

MAX_PARALLEL_UPGRADES_BOUNDED = Entry(
    id="GS502",
    title="Parallel driver upgrades within policy bounds",
    severity=Severity.WARNING,
    rationale="Each upgrading node drains its GPU workloads; too many at once is an outage.",
    doc="""
`rollout.maxParallelUpgrades` is between 1 and `max_parallel_upgrades`.

0 means "unlimited" to the operator's upgrade controller: every node of the
cluster may reload its driver at the same time.

Failing: `maxParallelUpgrades: 0` or above the bound.  Passing:
`maxParallelUpgrades: 1`.
""",
    params=(Param("max_parallel_upgrades", int, 4, "Most nodes that may upgrade their driver at once."),),
    tags=("rollout", "upgrade"),
)

MAX_UNAVAILABLE_BOUNDED = Entry(
    id="GS503",
    title="maxUnavailable within policy bounds",
    severity=Severity.WARNING,
    rationale="The capacity lost while nodes upgrade must stay within what the workloads tolerate.",
    doc="""
`rollout.maxUnavailable` is at most `max_unavailable_percent` of the cluster's GPU nodes.

A count is judged against the cluster's total node count (sum of pool
`nodes`).  A percentage is judged as the upgrade controller applies it: a
share of the driver nodes rounded **up** to whole nodes, so `25%` of 5
nodes lets 2 nodes (40%) go unavailable.

Failing: `maxUnavailable: 50%` with the default bound 25; `25%` on 5 nodes.
Passing: `maxUnavailable: 10%` or `1` on a cluster of 20 nodes; `20%` on 5.
""",
    params=(Param("max_unavailable_percent", int, 25, "Largest share of GPU nodes that may be unavailable."),),
    tags=("rollout", "upgrade"),
    source="cloud-native-docs gpu-operator/gpu-driver-upgrades.rst (maxUnavailable: percentage of nodes at "
    "upgrade start, rounded up)",
)

AUTO_UPGRADE_HAS_DRAIN_SETTINGS = Entry(
    id="GS504",
    title="Driver auto-upgrade has explicit drain and pod-deletion settings",
    severity=Severity.WARNING,
    rationale="Reviewers must see how GPU jobs are evicted when a driver upgrade rolls.",
    doc="""
With driver auto-upgrade on, `rollout.drain` and `rollout.podDeletion` are written out.

The upgrade controller evicts pods with these settings; leaving them to the
chart defaults hides from reviewers how running jobs are treated.

Failing: `autoUpgrade: true` without `drain` or `podDeletion`.
Passing: both are set, or `autoUpgrade: false`.
""",
    tags=("rollout", "upgrade"),
)

CANARY_IN_FIRST_WAVE = Entry(
    id="GS505",
    title="Canary pool is alone in the first wave",
    severity=Severity.ERROR,
    rationale="A canary only protects the fleet if it is upgraded before every other pool.",
    doc="""
The canary pool is alone in the lowest wave of its cluster.

A canary that shares its wave with another pool, or that a pool precedes,
no longer goes first.

Failing: canary `wave: 2` while another pool has `wave: 1`, or both
`wave: 1`.  Passing: canary `wave: 1`, every other pool `wave: 2` or
higher.
""",
    tags=("rollout",),
)

POOL_WITHOUT_NODES = Entry(
    id="GS506",
    title="Pool with 0 nodes",
    severity=Severity.WARNING,
    rationale="A pool of no nodes renders drivers, configs and quotas for hardware that is not there.",
    doc="""
A pool declares `nodes: 0`.  Its NVIDIADriver, MIG and device-plugin configuration select no node, tenants
restricted to it get no GPU, and the upgrade controller's percentages are computed over nodes that do not
exist.  Remove the pool, or give it its real size.

Failing: `nodes: 0`.  Passing: `nodes: 1`.
""",
    tags=("rollout",),
    source="cloud-native-docs gpu-operator/gpu-driver-upgrades.rst (limits are computed over the driver nodes)",
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    CANARY_POOL_NAMED,
    MAX_PARALLEL_UPGRADES_BOUNDED,
    MAX_UNAVAILABLE_BOUNDED,
    AUTO_UPGRADE_HAS_DRAIN_SETTINGS,
    CANARY_IN_FIRST_WAVE,
    POOL_WITHOUT_NODES,
    *CHART_ENTRIES,
    *ACCEPTANCE_ENTRIES,
)
