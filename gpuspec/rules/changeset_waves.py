"""Change-set rules of the rollout order: fleet waves one at a time (GS821), the rollback flag's life (GS822)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import changeset as cat
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import EffectiveDriver, effective_driver, operator_version
from gpuspec.rollout.diff import driver_proves, operator_proves
from gpuspec.rollout.records import Change, ChangeKind
from gpuspec.rules.base import Problem, Rule
from gpuspec.rules.changeset import ChangeSetContext, ChangeSetRule

_MOVES = (ChangeKind.OPERATOR_UPGRADE, ChangeKind.OPERATOR_DOWNGRADE, ChangeKind.DRIVER)
_DOWNGRADES = (ChangeKind.OPERATOR_DOWNGRADE,)


def _runs_driver(fleet: Fleet, cluster: Cluster, product: str, target: EffectiveDriver) -> bool | None:
    """True when a pool of ``product`` runs ``target`` or a later driver (it has proven it); None when the cluster
    has no pool of that product."""
    pools = [p for p in cluster.pools if p.gpu.product == product]
    if not pools:
        return None
    return any(driver_proves(effective_driver(fleet, cluster, p), target) for p in pools)


class FleetWavesInOrder(ChangeSetRule):
    """Operator and driver changes reach one fleet wave per change, after every earlier wave runs them."""

    entry = cat.FLEET_WAVES_IN_ORDER

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per cluster moved with an earlier wave, or ahead of an earlier wave's clusters."""
        base = ctx.base
        if base is None:
            return
        moved: dict[str, Change] = {}
        for change in ctx.changes:
            if change.kind in _MOVES and change.cluster is not None and ctx.fleet.cluster(change.cluster):
                moved.setdefault(change.cluster, change)
        if not moved:
            return
        waves = {name: cluster.rollout.wave for name in moved if (cluster := ctx.fleet.cluster(name))}
        first = min(waves.values())
        leaders = sorted(name for name, wave in waves.items() if wave == first)
        reported: set[str] = set()
        for name, change in sorted(moved.items()):
            if waves[name] == first:
                continue
            reported.add(name)
            yield Problem(
                f"cluster {name!r} (fleet wave {waves[name]}) takes an operator or driver change in the same change "
                f"as {', '.join(repr(n) for n in leaders)} (fleet wave {first}): GitOps applies both at merge",
                change.file or "", change.path,
                hint=f"change the wave-{first} cluster(s) now and {name!r} in a later pull request",
            )
        for change in ctx.changes:
            if change.kind not in _MOVES or change.cluster is None or change.cluster in reported:
                continue
            yield from self._ahead(ctx, base, change)

    def _ahead(self, ctx: ChangeSetContext, base: Fleet, change: Change) -> Iterator[Problem]:
        cluster = ctx.fleet.cluster(change.cluster or "")
        if cluster is None:
            return
        earlier = [c for c, h in ctx.unchanged_or_head() if h.rollout.wave < cluster.rollout.wave]
        if change.kind is ChangeKind.DRIVER:
            if change.pool is None or change.derived or (pool := cluster.pool(change.pool)) is None:
                return
            target = effective_driver(ctx.fleet, cluster, pool)
            behind = [c.name for c in earlier if _runs_driver(base, c, pool.gpu.product, target) is False]
            what = f"driver {target.version or target.branch} on {pool.gpu.product}"
        else:
            if change.after is None:
                return
            if change.kind is ChangeKind.OPERATOR_DOWNGRADE:
                behind = [c.name for c in earlier if operator_version(base, c) != change.after]
            else:
                behind = [c.name for c in earlier if not operator_proves(operator_version(base, c), change.after)]
            what = f"operator {change.after}"
        if behind:
            yield Problem(
                f"cluster {cluster.name!r} (fleet wave {cluster.rollout.wave}) moves to {what} before earlier-wave "
                f"cluster(s) {', '.join(repr(n) for n in sorted(behind))} run it (or a later one) in the base",
                change.file or cluster.source_file, change.path,
                hint="move the earlier waves first; a cluster that deliberately stays behind takes a GS821 exception",
            )


class RollbackFlagLifecycle(ChangeSetRule):
    """`operator.rollback: true` appears only in a change that downgrades that cluster."""

    entry = cat.ROLLBACK_FLAG_LIFECYCLE

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per cluster that carries the rollback flag in a change that downgrades nothing of it."""
        downgraded = {c.cluster for c in ctx.changes if c.downgrade and not c.derived}
        for cluster in ctx.fleet.clusters:
            if not cluster.operator.rollback or cluster.name in downgraded:
                continue
            kept = ctx.base is not None and (old := ctx.base.cluster(cluster.name)) is not None \
                and old.operator.rollback
            yield Problem(
                f"cluster {cluster.name!r}: operator.rollback: true "
                + ("is left from the previous change's downgrade" if kept else "but this change downgrades nothing")
                + "; it would acknowledge the next downgrade unseen",
                cluster.source_file, ("operator", "rollback"),
                hint="remove operator.rollback from the cluster spec in this change",
            )


#: This module's change-set rules.
WAVE_RULES: list[Rule] = [FleetWavesInOrder(), RollbackFlagLifecycle()]
