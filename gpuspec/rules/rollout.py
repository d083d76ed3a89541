"""Upgrade and rollout rules (GS5xx): canary first, bounded parallelism, explicit drain settings."""

from __future__ import annotations

import math
from collections.abc import Iterator

from gpuspec.catalogue import rollout as cat
from gpuspec.model.resolve import pool_path
from gpuspec.rules import rollout_acceptance, rollout_chart
from gpuspec.rules.base import Problem, Rule, RuleContext


class CanaryPoolNamed(Rule):
    """A cluster with several pools names a canary pool (``rollout.canaryPool``)."""

    entry = cat.CANARY_POOL_NAMED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster with at least ``min_pools`` pools and no canary pool."""
        minimum = int(self.param(ctx, "min_pools"))
        for cluster in ctx.fleet.clusters:
            if len(cluster.pools) >= minimum and cluster.rollout.canary_pool is None:
                yield Problem(
                    f"cluster {cluster.name!r} has {len(cluster.pools)} pools but no canary pool",
                    cluster.source_file, ("rollout",) if "rollout" in cluster.model_fields_set else ("pools",),
                    at_key=True,
                    hint="add a small pool and name it in rollout.canaryPool",
                )


class MaxParallelUpgradesBounded(Rule):
    """``rollout.maxParallelUpgrades`` is between 1 and ``max_parallel_upgrades``."""

    entry = cat.MAX_PARALLEL_UPGRADES_BOUNDED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose maxParallelUpgrades is 0 (unlimited) or above the bound."""
        bound = int(self.param(ctx, "max_parallel_upgrades"))
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


def unavailable_nodes(value: int | str, nodes: int) -> int:
    """Nodes ``maxUnavailable`` lets go unavailable: a count as written, a percentage rounded up (as the upgrade
    controller applies it)."""
    if isinstance(value, str):
        return math.ceil(float(value.rstrip("%")) * nodes / 100)
    return value


def unavailable_percent(value: int | str, nodes: int) -> float:
    """``maxUnavailable`` (a count or a percentage) as the share of ``nodes`` it makes unavailable, in percent."""
    if nodes <= 0:
        return float(value.rstrip("%")) if isinstance(value, str) else 100.0
    return 100.0 * min(unavailable_nodes(value, nodes), nodes) / nodes


class MaxUnavailableBounded(Rule):
    """``rollout.maxUnavailable`` is at most ``max_unavailable_percent`` of the cluster's GPU nodes."""

    entry = cat.MAX_UNAVAILABLE_BOUNDED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose maxUnavailable exceeds the bound."""
        bound = float(self.param(ctx, "max_unavailable_percent"))
        for cluster in ctx.fleet.clusters:
            value = cluster.rollout.max_unavailable
            nodes = sum(p.nodes for p in cluster.pools)
            share = unavailable_percent(value, nodes)
            if share > bound:
                count = unavailable_nodes(value, nodes)
                shown = (
                    f"{value} (rounded up: {count} of {nodes} nodes, {share:.0f}%)" if isinstance(value, str)
                    else f"{value} of {nodes} nodes ({share:.0f}%)"
                )
                yield Problem(
                    f"maxUnavailable {shown} is above the policy bound of {bound:g}%",
                    cluster.source_file, ("rollout", "maxUnavailable"),
                    hint=f"use at most {bound:g}%",
                )


class AutoUpgradeHasDrainSettings(Rule):
    """With driver auto-upgrade on, ``rollout.drain`` and ``rollout.podDeletion`` are written out."""

    entry = cat.AUTO_UPGRADE_HAS_DRAIN_SETTINGS
    per_cluster = True

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
    """The canary pool is alone in the lowest wave of its cluster."""

    entry = cat.CANARY_IN_FIRST_WAVE
    per_cluster = True

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


class PoolWithoutNodes(Rule):
    """A pool declares ``nodes: 0``."""

    entry = cat.POOL_WITHOUT_NODES
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per pool of 0 nodes."""
        for cluster in ctx.fleet.clusters:
            for pool in cluster.pools:
                if pool.nodes == 0:
                    yield Problem(
                        f"pool {pool.name!r} has 0 nodes: its driver, MIG and sharing configuration select nothing",
                        cluster.source_file, pool_path(cluster, pool, "nodes"),
                        hint="remove the pool, or set its real node count",
                    )


RULES: list[Rule] = [
    CanaryPoolNamed(),
    MaxParallelUpgradesBounded(),
    MaxUnavailableBounded(),
    AutoUpgradeHasDrainSettings(),
    CanaryInFirstWave(),
    PoolWithoutNodes(),
    *rollout_chart.RULES,
    *rollout_acceptance.RULES,
]
