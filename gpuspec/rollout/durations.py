"""Worst-case duration of a disruption on a pool: the driver upgrade controller's arithmetic, written down.

A driver reload is rolled by the GPU Operator's upgrade controller (NVIDIA k8s-operator-libs ``pkg/upgrade``,
vendored by gpu-operator v26.7.0 at k8s-operator-libs v0.0.0-20260629200812-d720f2557494):

- ``upgrade_inplace.go`` ``ProcessUpgradeRequiredNodes``: ``maxUnavailable`` is
  ``intstr.GetScaledValueFromIntOrPercent(maxUnavailable, totalNodes, true)`` -- a percentage of the nodes the
  policy manages, *rounded up*;
- ``common_manager.go`` ``GetUpgradesAvailable``: ``maxParallelUpgrades: 0`` lets every waiting node start,
  otherwise at most ``maxParallelUpgrades`` run at once, and never more than ``maxUnavailable``; with
  ``maxUnavailable`` 0 no node ever starts;
- ``upgrade_state.go`` ``ApplyState``: a node goes cordon -> wait for jobs (``waitForCompletion``, only with a pod
  selector; timeout 0 = until they finish) -> GPU pod deletion (``podDeletion``/``gpuPodDeletion`` timeout) ->
  drain (only with ``drain.enable``) -> driver pod restart -> validation -> uncordon.  Deletion and drain use the
  kubectl drain helper, whose timeout 0 means no timeout.
- gpu-operator ``controllers/upgrade_controller.go`` (v26.7.0): with the ClusterPolicy the policy manages every
  node with an operator-installed driver; with NVIDIADriver resources each NVIDIADriver applies its own policy to
  its own nodes (the percentage base), and NVIDIADrivers roll side by side.

Absent ``drain``/``podDeletion`` take the chart's defaults (values.yaml ``driver.upgradePolicy``: 300 s each, drain
off), which are also the NVIDIADriver CRD's defaults.  Operand restarts are DaemonSet rolling updates
(values.yaml ``daemonsets.rollingUpdate.maxUnavailable: "1"``): one node at a time.  mig-manager reconfigures
every node of a pool on its own when the pool's layout changes, so a MIG repartition takes one node's time.

The per-node times (``rollout.perNodeSeconds``) are gpuspec's assumptions, overridable per cluster; the estimate
is a worst case: every node takes every timeout in full.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuspec.errors import GpuspecError
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.cluster_specs import RolloutSpec
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.types import IntOrPercent
from gpuspec.render.context import ClusterContext, cluster_context
from gpuspec.rollout.records import Disruption

#: Chart default of ``driver.upgradePolicy.gpuPodDeletion.timeoutSeconds`` and ``drain.timeoutSeconds``
#: (gpu-operator values.yaml v26.7.0; the NVIDIADriver CRD's ``default: 300`` for both).
CHART_TIMEOUT_SECONDS = 300
#: Chart default ``daemonsets.rollingUpdate.maxUnavailable`` (values.yaml v26.7.0): operand pods roll node by node.
OPERAND_NODES_AT_ONCE = 1


@dataclass(frozen=True, slots=True)
class DurationEstimate:
    """A worst-case duration and the arithmetic behind it.

    ``seconds`` is None when no bound exists (a timeout of 0 waits forever, ``maxUnavailable`` 0 never starts a
    node) or when no controller rolls the change (``manual``: auto-upgrade off, host-installed drivers).
    """

    seconds: int | None
    explanation: str
    manual: bool = False

    @property
    def bounded(self) -> bool:
        """True when the estimate has an upper bound."""
        return self.seconds is not None

    @property
    def text(self) -> str:
        """The bound in words: ``≤ 1h 20m``, ``unbounded`` or ``manual``."""
        if self.seconds is None:
            return "manual" if self.manual else "unbounded"
        if self.seconds == 0:
            return "0s"
        return f"≤ {format_seconds(self.seconds)}"

    def to_json(self) -> dict[str, object]:
        """The estimate as JSON-ready data."""
        return {"seconds": self.seconds, "text": self.text, "explanation": self.explanation, "manual": self.manual}


def format_seconds(seconds: int) -> str:
    """``seconds`` as ``2h 5m``, ``40m``, ``45s`` or ``0s`` (minutes rounded up once past a minute)."""
    if seconds < 60:
        return f"{seconds}s"
    minutes = math.ceil(seconds / 60)
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest}m"
    return f"{hours}h {rest}m" if rest else f"{hours}h"


def scaled_max_unavailable(value: IntOrPercent, total: int) -> int:
    """``maxUnavailable`` as a node count, as ``intstr.GetScaledValueFromIntOrPercent(value, total, true)`` does:
    an integer as it is, a percentage of ``total`` rounded up (``10%`` of 12 nodes = 2)."""
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    # Same float arithmetic as apimachinery's intstr (math.Ceil(float64(v) * float64(total) / 100)).
    return math.ceil(float(percent) * float(total) / 100)


def _timeout(seconds: int, what: str) -> tuple[int | None, str]:
    if seconds == 0:
        return None, f"{what} without timeout (0)"
    return seconds, f"{what} {seconds}s"


def driver_node_seconds(rollout: RolloutSpec) -> tuple[int | None, str]:
    """Worst-case seconds one node spends in a driver upgrade (None: unbounded), and its parts in words."""
    parts: list[tuple[int | None, str]] = []
    wait = rollout.wait_for_completion
    if wait is not None:
        parts.append(_timeout(wait.timeout_seconds, "wait for jobs"))
    deletion = rollout.pod_deletion.timeout_seconds if rollout.pod_deletion else CHART_TIMEOUT_SECONDS
    parts.append(_timeout(deletion, "pod deletion"))
    if rollout.drain is not None and rollout.drain.enable:
        parts.append(_timeout(rollout.drain.timeout_seconds, "drain"))
    parts.append((rollout.per_node_seconds.driver_reload, f"reload {rollout.per_node_seconds.driver_reload}s"))
    words = " + ".join(w for _, w in parts)
    if any(s is None for s, _ in parts):
        return None, words
    return sum(s for s, _ in parts if s is not None), words


def estimate_driver_reload(rollout: RolloutSpec, nodes: int, scope: int) -> DurationEstimate:
    """Worst case of a driver upgrade of ``nodes`` nodes under ``rollout``'s policy, ``scope`` being the nodes the
    policy manages (the base of a ``maxUnavailable`` percentage)."""
    if nodes <= 0:
        return DurationEstimate(0, "no nodes")
    if not rollout.auto_upgrade:
        return DurationEstimate(
            None,
            "rollout.autoUpgrade is false: no controller rolls the driver; nodes take it "
            "when their driver pods are restarted by hand",
            manual=True,
        )
    scope = max(scope, nodes)
    limit = scaled_max_unavailable(rollout.max_unavailable, scope)
    parallel = rollout.max_parallel_upgrades
    exact = isinstance(rollout.max_unavailable, int) or int(rollout.max_unavailable[:-1]) * scope % 100 == 0
    unavailable = f"maxUnavailable {rollout.max_unavailable} of {scope} node(s) = {limit}" + (
        "" if exact else " rounded up"
    )
    if limit <= 0:
        return DurationEstimate(None, f"{unavailable}: the upgrade controller never starts a node")
    at_once = min(parallel or nodes, limit, nodes)
    batches = math.ceil(nodes / at_once)
    per_node, parts = driver_node_seconds(rollout)
    head = (
        f"{nodes} node(s), {at_once} at a time (maxParallelUpgrades {parallel or 'unlimited'}, {unavailable})"
        f": {batches} batch(es) x ({parts})"
    )
    if per_node is None:
        return DurationEstimate(None, head)
    return DurationEstimate(batches * per_node, f"{head} = {format_seconds(batches * per_node)}")


def estimate_operand_restart(rollout: RolloutSpec, nodes: int) -> DurationEstimate:
    """Worst case of an operand DaemonSet rolling update over ``nodes`` nodes."""
    if nodes <= 0:
        return DurationEstimate(0, "no nodes")
    each = rollout.per_node_seconds.operand_restart
    batches = math.ceil(nodes / OPERAND_NODES_AT_ONCE)
    return DurationEstimate(
        batches * each,
        f"{nodes} node(s), {OPERAND_NODES_AT_ONCE} at a time (DaemonSet rolling update) x operand restart {each}s"
        f" = {format_seconds(batches * each)}",
    )


def estimate_mig_repartition(rollout: RolloutSpec, nodes: int) -> DurationEstimate:
    """Worst case of a MIG layout change on ``nodes`` nodes (mig-manager works on every node at once)."""
    if nodes <= 0:
        return DurationEstimate(0, "no nodes")
    each = rollout.per_node_seconds.mig_repartition
    return DurationEstimate(
        each, f"{nodes} node(s) at once (mig-manager on each node) x MIG repartition {each}s = {format_seconds(each)}"
    )


def operator_driver(pool: Pool) -> bool:
    """True when the operator installs the pool's driver (so the upgrade controller rolls it)."""
    return pool.managed and pool.driver.source is not DriverSource.HOST


def driver_scopes(cluster: Cluster, fleet: Fleet | None = None) -> dict[str, str]:
    """Pool name → the upgrade policy that rolls its driver: ``clusterpolicy`` for all of them, or the name of
    the pool's NVIDIADriver (``default`` for the chart's default one) when NVIDIADriver resources manage drivers.

    Without ``fleet`` (or when the cluster's release does not resolve) every operator-installed pool is taken as
    managed by the ClusterPolicy.
    """
    ctx = None
    if fleet is not None:
        with contextlib.suppress(GpuspecError):
            ctx = cluster_context(fleet, cluster)
    return context_scopes(cluster, ctx)


def context_scopes(cluster: Cluster, ctx: ClusterContext | None) -> dict[str, str]:
    """:func:`driver_scopes` from the cluster's render context (None: it did not resolve)."""
    if ctx is not None and ctx.driver_mode == "nvidiadriver":
        default = ctx.default_driver
        return {
            d.pool.name: ("default" if default is not None and d.key == default.key else d.resource_name)
            for d in ctx.drivers
        }
    return {p.name: "clusterpolicy" for p in cluster.pools if operator_driver(p)}


def _longest(estimates: Sequence[DurationEstimate]) -> DurationEstimate:
    """The estimate of work that runs side by side: the longest part (unbounded wins, then manual)."""
    unbounded = [e for e in estimates if e.seconds is None and not e.manual]
    if unbounded:
        return unbounded[0]
    bounded = [e for e in estimates if e.seconds is not None]
    if bounded:
        return max(bounded, key=lambda e: e.seconds or 0)
    return estimates[0] if estimates else DurationEstimate(0, "no nodes")


def estimate_targets(
    cluster: Cluster, targets: Sequence[tuple[Pool | None, Disruption]], fleet: Fleet | None = None,
    *, scopes: Mapping[str, str] | None = None,
) -> DurationEstimate:
    """Worst case of one rollout step that applies each ``(pool, disruption)`` at once (pool None: every pool of
    the cluster): pools under one upgrade policy share its slots, different policies and mechanisms run side by
    side, so the step takes as long as its longest part.  ``scopes``: the cluster's :func:`driver_scopes`, when
    the caller has them."""
    if scopes is None:
        scopes = driver_scopes(cluster, fleet)
    scope_nodes: dict[str, int] = {}
    for member in cluster.pools:
        if member.name in scopes:
            scope_nodes[scopes[member.name]] = scope_nodes.get(scopes[member.name], 0) + member.nodes
    driver: dict[str, int] = {}
    manual_driver: list[str] = []
    operand_nodes = 0
    mig_nodes = 0
    seen: set[tuple[str, Disruption]] = set()
    for target, disruption in targets:
        for p in cluster.pools if target is None else [target]:
            if (p.name, disruption) in seen or not p.managed:
                continue
            seen.add((p.name, disruption))
            if disruption is Disruption.DRIVER_RELOAD:
                if p.name in scopes:
                    driver[scopes[p.name]] = driver.get(scopes[p.name], 0) + p.nodes
                elif target is not None:
                    manual_driver.append(p.name)
            elif disruption is Disruption.OPERAND_RESTART:
                operand_nodes += p.nodes
            elif disruption is Disruption.MIG_REPARTITION:
                mig_nodes = max(mig_nodes, p.nodes)
    rollout = cluster.rollout
    parts: list[DurationEstimate] = []
    for scope, nodes in sorted(driver.items()):
        estimate = estimate_driver_reload(rollout, nodes, scope_nodes.get(scope, nodes))
        label = "" if scope == "clusterpolicy" else f"NVIDIADriver {scope}: "
        parts.append(DurationEstimate(estimate.seconds, label + estimate.explanation, estimate.manual))
    if manual_driver:
        parts.append(
            DurationEstimate(
                None,
                f"pool(s) {', '.join(manual_driver)}: the driver is installed on the "
                "host image; the node image rollout decides",
                manual=True,
            )
        )
    if operand_nodes:
        parts.append(estimate_operand_restart(rollout, operand_nodes))
    if mig_nodes:
        parts.append(estimate_mig_repartition(rollout, mig_nodes))
    if not parts:
        return DurationEstimate(0, "no node restarts")
    longest = _longest(parts)
    if len(parts) == 1:
        return longest
    return DurationEstimate(
        longest.seconds, "longest of, side by side: " + "; ".join(p.explanation for p in parts), longest.manual
    )


def estimate_duration(
    cluster: Cluster, pool: Pool | None, disruption: Disruption, *, fleet: Fleet | None = None,
    scopes: Mapping[str, str] | None = None,
) -> DurationEstimate:
    """Worst-case duration of ``disruption`` on ``pool`` of ``cluster`` (None: on every pool of the cluster).

    ``fleet`` lets the estimate find the pool's NVIDIADriver (whose nodes are the base of a ``maxUnavailable``
    percentage); without it every operator-installed pool counts as managed by the ClusterPolicy.  ``scopes``
    as for :func:`estimate_targets`.
    """
    return estimate_targets(cluster, [(pool, disruption)], fleet, scopes=scopes)
