"""Upgrade and rollout rules (GS5xx): canary first, bounded parallelism, explicit drain settings."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.findings import Severity
from gpuspec.rules.base import Param, Problem, Rule, RuleContext
from gpuspec.rules.common import param
from gpuspec.spec.resolve import pool_path


class CanaryPoolNamed(Rule):
    """A cluster with several pools names a canary pool (``rollout.canaryPool``).

    The canary pool takes every driver and operator change first, so a bad
    change hits a few nodes before it hits production capacity.  Clusters with
    fewer pools than ``min_pools`` are exempt.

    Failing: three pools and no ``rollout.canaryPool``.  Passing:
    ``rollout: {canaryPool: h100-canary}``.
    """

    id = "GS501"
    title = "Multi-pool cluster names a canary pool"
    rationale = "Without a canary, a bad driver or operator change reaches every pool at once."
    severity = Severity.WARNING
    params = (Param("min_pools", int, 2, "Clusters with at least this many pools need a canary pool."),)
    tags = ("rollout",)

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster with at least ``min_pools`` pools and no canary pool."""
        minimum = int(param(self, ctx, "min_pools"))
        for cluster in ctx.fleet.clusters:
            if len(cluster.pools) >= minimum and cluster.rollout.canary_pool is None:
                yield Problem(
                    f"cluster {cluster.name!r} has {len(cluster.pools)} pools but no canary pool",
                    cluster.source_file, ("rollout",) if "rollout" in cluster.model_fields_set else ("pools",),
                    at_key=True,
                    hint="add a small pool and name it in rollout.canaryPool",
                )


class MaxParallelUpgradesBounded(Rule):
    """``rollout.maxParallelUpgrades`` is between 1 and ``max_parallel_upgrades``.

    0 means "unlimited" to the operator's upgrade controller: every node of the
    cluster may reload its driver at the same time.

    Failing: ``maxParallelUpgrades: 0`` or above the bound.  Passing:
    ``maxParallelUpgrades: 1``.
    """

    id = "GS502"
    title = "Parallel driver upgrades within policy bounds"
    rationale = "Each upgrading node drains its GPU workloads; too many at once is an outage."
    severity = Severity.WARNING
    params = (Param("max_parallel_upgrades", int, 4, "Most nodes that may upgrade their driver at once."),)
    tags = ("rollout", "upgrade")

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose maxParallelUpgrades is 0 (unlimited) or above the bound."""
        bound = int(param(self, ctx, "max_parallel_upgrades"))
        for cluster in ctx.fleet.clusters:
            value = cluster.rollout.max_parallel_upgrades
            if value == 0:
                message = "maxParallelUpgrades 0 lets every node upgrade at once"
            elif value > bound:
                message = f"maxParallelUpgrades {value} is above the policy bound of {bound}"
            else:
                continue
            yield Problem(message, cluster.source_file, ("rollout", "maxParallelUpgrades"),
                          hint="use 1" if bound <= 1 else f"use a value from 1 to {bound}")


def unavailable_percent(value: int | str, nodes: int) -> float:
    """``maxUnavailable`` (a count or a percentage) as a percentage of ``nodes``."""
    if isinstance(value, str):
        return float(value.rstrip("%"))
    return 100.0 if nodes <= 0 else 100.0 * value / nodes


class MaxUnavailableBounded(Rule):
    """``rollout.maxUnavailable`` is at most ``max_unavailable_percent`` of the cluster's GPU nodes.

    A count is judged against the cluster's total node count (sum of pool
    ``nodes``); a percentage is judged as written.

    Failing: ``maxUnavailable: 50%`` with the default bound 25.  Passing:
    ``maxUnavailable: 10%`` or ``1`` on a cluster of 20 nodes.
    """

    id = "GS503"
    title = "maxUnavailable within policy bounds"
    rationale = "The capacity lost while nodes upgrade must stay within what the workloads tolerate."
    severity = Severity.WARNING
    params = (Param("max_unavailable_percent", int, 25, "Largest share of GPU nodes that may be unavailable."),)
    tags = ("rollout", "upgrade")

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose maxUnavailable exceeds the bound."""
        bound = float(param(self, ctx, "max_unavailable_percent"))
        for cluster in ctx.fleet.clusters:
            value = cluster.rollout.max_unavailable
            nodes = sum(p.nodes for p in cluster.pools)
            share = unavailable_percent(value, nodes)
            if share > bound:
                shown = value if isinstance(value, str) else f"{value} of {nodes} nodes ({share:.0f}%)"
                yield Problem(
                    f"maxUnavailable {shown} is above the policy bound of {bound:g}%",
                    cluster.source_file, ("rollout", "maxUnavailable"),
                    hint=f"use at most {bound:g}%",
                )


class AutoUpgradeHasDrainSettings(Rule):
    """With driver auto-upgrade on, ``rollout.drain`` and ``rollout.podDeletion`` are written out.

    The upgrade controller evicts pods with these settings; leaving them to the
    chart defaults hides from reviewers how running jobs are treated.

    Failing: ``autoUpgrade: true`` without ``drain`` or ``podDeletion``.
    Passing: both are set, or ``autoUpgrade: false``.
    """

    id = "GS504"
    title = "Driver auto-upgrade has explicit drain and pod-deletion settings"
    rationale = "Reviewers must see how GPU jobs are evicted when a driver upgrade rolls."
    severity = Severity.WARNING
    tags = ("rollout", "upgrade")

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per auto-upgrading cluster missing drain or podDeletion settings."""
        for cluster in ctx.fleet.clusters:
            rollout = cluster.rollout
            if not rollout.auto_upgrade:
                continue
            missing = [name for name, value in (("drain", rollout.drain), ("podDeletion", rollout.pod_deletion))
                       if value is None]
            if missing:
                yield Problem(
                    f"driver auto-upgrade is on but {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
                    "not set",
                    cluster.source_file,
                    ("rollout", "autoUpgrade") if "auto_upgrade" in rollout.model_fields_set else ("rollout",),
                    at_key=True,
                    hint="set rollout.drain and rollout.podDeletion (timeouts, force, deleteEmptyDir)",
                )


class CanaryInFirstWave(Rule):
    """The canary pool is alone in the lowest wave of its cluster.

    A canary that shares its wave with another pool, or that a pool precedes,
    no longer goes first.

    Failing: canary ``wave: 2`` while another pool has ``wave: 1``, or both
    ``wave: 1``.  Passing: canary ``wave: 1``, every other pool ``wave: 2`` or
    higher.
    """

    id = "GS505"
    title = "Canary pool is alone in the first wave"
    rationale = "A canary only protects the fleet if it is upgraded before every other pool."
    severity = Severity.ERROR
    tags = ("rollout",)

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per canary pool that is not strictly before every other pool."""
        for cluster in ctx.fleet.clusters:
            canary = cluster.pool(cluster.rollout.canary_pool or "")
            if canary is None:
                continue
            others = [p for p in cluster.pools if p is not canary]
            earlier = [p.name for p in others if p.wave < canary.wave]
            same = [p.name for p in others if p.wave == canary.wave]
            if earlier:
                message = f"canary pool {canary.name!r} (wave {canary.wave}) comes after {', '.join(earlier)}"
            elif same:
                message = f"canary pool {canary.name!r} shares wave {canary.wave} with {', '.join(same)}"
            else:
                continue
            yield Problem(message, cluster.source_file, pool_path(cluster, canary, "wave"),
                          hint="give the canary pool the lowest wave and every other pool a higher one")


RULES: list[type[Rule]] = [
    CanaryPoolNamed,
    MaxParallelUpgradesBounded,
    MaxUnavailableBounded,
    AutoUpgradeHasDrainSettings,
    CanaryInFirstWave,
]
