"""Change-set rules (GS8xx): they judge the difference between a base revision and the working tree.

They follow the rule contract of :mod:`gpuspec.rules.base` with one extension:
:class:`ChangeSetContext` is a :class:`~gpuspec.rules.base.RuleContext` whose
``fleet`` is the head (working tree) and which also carries the base fleet,
the diff between them and the files changed since the base.  A change-set rule
given a plain ``RuleContext`` (no ``--base``) finds nothing.

:func:`gpuspec.rules.registry.changeset_findings` runs them all at their defaults; ``gpuspec lint --base REV`` runs them
through the policy engine instead (:func:`changeset_context` builds the context both use).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuspec.catalogue import changeset as cat
from gpuspec.loader.fleetload import display_path
from gpuspec.matrix.component_query import nvidiadriver_crd_migration
from gpuspec.matrix.query import upgrade_supported
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import effective_driver, operator_version
from gpuspec.policy.load import LocatedException
from gpuspec.rollout.diff import operator_proves
from gpuspec.rollout.records import Change, ChangeKind, Dimension
from gpuspec.rules.base import Problem, Rule, RuleContext

if TYPE_CHECKING:  # the render stamp's reader is imported only when a change set is built (lint --base)
    from gpuspec.render.generator import Regeneration


@dataclass(frozen=True)
class ChangeSetContext(RuleContext):
    """A rule context for change-set rules: ``fleet`` is the head; the base and the diff come along.

    ``changed_files`` are repository-relative POSIX paths that differ between the base commit and the working
    tree (untracked files included); ``fleet_rel``, ``policies_rel`` and ``rendered_rel`` name the three folders
    the same way.  ``exceptions`` are the policy exceptions of the packs in effect (the typed policy of the run).
    """

    base: Fleet | None = None
    base_rev: str = ""
    changes: tuple[Change, ...] = ()
    changed_files: tuple[str, ...] = ()
    repo_root: Path | None = None
    fleet_rel: str = "fleet"
    policies_rel: str = "policies"
    rendered_rel: str = "rendered"
    exceptions: tuple[LocatedException, ...] = field(default=())
    regeneration: Regeneration | None = None
    #: Clusters outside ``base`` and ``fleet`` that the change leaves as they are (``gpuspec upgrade`` judges a step
    #: on the clusters it moves): the fleet-wide rules (fleet waves) count them as they run.
    context: tuple[Cluster, ...] = ()

    def unchanged_or_head(self) -> list[tuple[Cluster, Cluster]]:
        """Every cluster as (base, head) pairs: those in both fleets, and the unchanged context clusters."""
        base = self.base
        pairs = [(c, h) for c in (base.clusters if base is not None else []) if (h := self.fleet.cluster(c.name))]
        return pairs + [(c, c) for c in self.context]


class ChangeSetRule(Rule):
    """Base of GS8xx rules: :meth:`check` hands a :class:`ChangeSetContext` to :meth:`check_changes`."""

    needs_base = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield the rule's problems, or nothing when ``ctx`` carries no base (not a change-set run)."""
        if isinstance(ctx, ChangeSetContext):
            yield from self.check_changes(ctx)

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield every problem in the change from ``ctx.base`` to ``ctx.fleet``."""
        raise NotImplementedError


def _changes(ctx: ChangeSetContext, *kinds: ChangeKind) -> Iterator[Change]:
    return (c for c in ctx.changes if c.kind in kinds)


class OneLayerPerChange(ChangeSetRule):
    """At most ``max_dimensions`` of {Kubernetes, OS or kernel, driver, operator} change per cluster in one change."""

    entry = cat.ONE_LAYER_PER_CHANGE

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose change touches more layers than allowed."""
        limit = int(self.param(ctx, "max_dimensions"))
        by_cluster: dict[str, dict[Dimension, Change]] = {}
        for change in ctx.changes:
            if change.dimension is not None and change.cluster is not None:
                by_cluster.setdefault(change.cluster, {}).setdefault(change.dimension, change)
        for name, layers in by_cluster.items():
            if len(layers) <= limit:
                continue
            cluster = ctx.fleet.cluster(name)
            order = [d for d in Dimension if d in layers]
            words = "; ".join(f"{d.value}: {layers[d].summary}" for d in order)
            first = layers[order[0]]
            yield Problem(
                f"cluster {name!r} changes {len(layers)} layers in one change (at most {limit}): {words}",
                cluster.source_file if cluster else (first.file or ""), (),
                hint="split the change: one pull request per layer, each after the previous one rolled out",
            )


class OperatorUpgradePath(ChangeSetRule):
    """A GPU Operator upgrade stays within its release line or goes to the next line only."""

    entry = cat.OPERATOR_UPGRADE_PATH

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per operator upgrade the support matrix does not support or cannot verify."""
        for change in _changes(ctx, ChangeKind.OPERATOR_UPGRADE):
            if change.before is None or change.after is None:
                continue
            ok, reason = upgrade_supported(change.before, change.after)
            if ok is True:
                continue
            yield Problem(
                f"cluster {change.cluster!r}: operator upgrade {change.before} -> {change.after}: {reason}",
                change.file or "", change.path,
                hint="upgrade to the newest patch of the next release line first, then continue in a later change",
            )


class DowngradeAcknowledged(ChangeSetRule):
    """An operator or driver downgrade carries ``operator.rollback: true`` in the head spec of its cluster."""

    entry = cat.DOWNGRADE_ACKNOWLEDGED

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per operator or driver downgrade of a cluster without the acknowledgment."""
        for change in ctx.changes:
            if not change.downgrade or change.derived or change.cluster is None:
                continue
            cluster = ctx.fleet.cluster(change.cluster)
            if cluster is None or cluster.operator.rollback:
                continue
            what = "operator" if change.kind is ChangeKind.OPERATOR_DOWNGRADE else f"pool {change.pool!r} driver"
            yield Problem(
                f"cluster {change.cluster!r}: {what} downgrade {change.before} -> {change.after} "
                "without operator.rollback: true",
                change.file or cluster.source_file, change.path,
                hint=f"if the downgrade is intended, set operator.rollback: true in {cluster.source_file}",
            )


class CanaryFirst(ChangeSetRule):
    """Driver and operator changes reach non-canary targets only after the canary runs the target in the base."""

    entry = cat.CANARY_FIRST

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per non-canary driver change and per operator change that is not preceded by its canary."""
        base = ctx.base
        if base is None:
            return
        reported: set[tuple[str | None, str | None]] = set()
        for problem, change in self._canary(ctx, base):
            reported.add((change.cluster, change.pool))
            yield problem
        yield from self._waves(ctx, reported)
        yield from self._operator(ctx, base)

    def _yields(self, ctx: ChangeSetContext, name: str | None) -> str | None:
        """Why canary first and pool waves cannot hold for cluster ``name`` (None: they can): ClusterPolicy driver
        management on a release that cannot move a running cluster to per-pool NVIDIADriver resources."""
        base = ctx.base
        head_cluster = ctx.fleet.cluster(name or "")
        base_cluster = base.cluster(name or "") if base is not None else None
        if base is None or head_cluster is None or base_cluster is None:
            return None
        from gpuspec.render.context import driver_mode

        modes = {driver_mode(ctx.fleet, head_cluster), driver_mode(base, base_cluster)}
        if modes != {"clusterpolicy"}:
            return None
        version = operator_version(ctx.fleet, head_cluster)
        if version is None or nvidiadriver_crd_migration(version):
            return None
        rollout = head_cluster.rollout
        return (f"GPU Operator {version} runs one driver for every pool from the ClusterPolicy, and NVIDIA moves a "
                "running cluster to per-pool NVIDIADriver resources only from v26.7.0, so no pool can run a driver "
                "of its own first; the upgrade controller rolls the new driver node by node (maxParallelUpgrades "
                f"{rollout.max_parallel_upgrades}, maxUnavailable {rollout.max_unavailable})")

    def _waves(self, ctx: ChangeSetContext, reported: set[tuple[str | None, str | None]]) -> Iterator[Problem]:
        """Written driver changes of one cluster reach pools of one rollout wave per change (lowest first)."""
        by_cluster: dict[str, list[Change]] = {}
        for change in _changes(ctx, ChangeKind.DRIVER):
            if not change.derived and change.cluster is not None and change.pool is not None:
                by_cluster.setdefault(change.cluster, []).append(change)
        for changes in by_cluster.values():
            first = min(c.pool_wave or 0 for c in changes)
            lead = [c.pool for c in changes if (c.pool_wave or 0) == first]
            for change in changes:
                if (change.pool_wave or 0) == first or (change.cluster, change.pool) in reported:
                    continue
                yield Problem(
                    f"cluster {change.cluster!r}: pool {change.pool!r} (wave {change.pool_wave}) changes its driver in "
                    f"the same change as pool(s) {', '.join(repr(p) for p in lead)} of wave {first}: one rollout "
                    "wave per change",
                    change.file or "", change.path,
                    hint=f"change the wave-{first} pools now and wave {change.pool_wave} in a later pull request",
                    yields=self._yields(ctx, change.cluster),
                )

    def _canary(self, ctx: ChangeSetContext, base: Fleet) -> Iterator[tuple[Problem, Change]]:
        from gpuspec.rollout.diff import driver_key, driver_text  # plan machinery only with --base

        for change in _changes(ctx, ChangeKind.DRIVER):
            if change.canary or change.cluster is None or change.pool is None:
                continue
            if change.derived:
                if change.dimension is Dimension.DRIVER:
                    yield from ((p, change) for p in self._implied(ctx, base, change))
                continue
            head_cluster, base_cluster = ctx.fleet.cluster(change.cluster), base.cluster(change.cluster)
            canary_name = head_cluster.rollout.canary_pool if head_cluster else None
            if head_cluster is None or base_cluster is None or canary_name is None:
                continue
            pool = head_cluster.pool(change.pool)
            if pool is None:
                continue
            target = effective_driver(ctx.fleet, head_cluster, pool)
            base_canary = base_cluster.pool(canary_name)
            if base_canary is not None and driver_key(effective_driver(base, base_cluster, base_canary)) == driver_key(
                target
            ):
                continue
            state = (
                f"runs {driver_text(effective_driver(base, base_cluster, base_canary))} in the base"
                if base_canary is not None else "does not exist in the base"
            )
            yield Problem(
                f"cluster {change.cluster!r}: pool {change.pool!r} moves to driver {driver_text(target)} but canary "
                f"pool {canary_name!r} {state}",
                change.file or head_cluster.source_file, change.path,
                hint=f"move only {canary_name!r} to the new driver in this change; the other pools in a later one",
                yields=self._yields(ctx, change.cluster),
            ), change

    def _implied(self, ctx: ChangeSetContext, base: Fleet, change: Change) -> Iterator[Problem]:
        """A release-default driver that moves with the operator: the canary must run the new default already."""
        from gpuspec.rollout.driver_facts import resolved_driver_version

        head_cluster, base_cluster = ctx.fleet.cluster(change.cluster or ""), base.cluster(change.cluster or "")
        canary_name = head_cluster.rollout.canary_pool if head_cluster else None
        if head_cluster is None or base_cluster is None or canary_name is None:
            return
        base_canary = base_cluster.pool(canary_name)
        running = resolved_driver_version(base, base_cluster, base_canary) if base_canary is not None else None
        if running is not None and running == change.after:
            return
        yield Problem(
            f"cluster {change.cluster!r}: pool {change.pool!r} moves to driver {change.after or 'unknown'} with the "
            f"operator release but canary pool {canary_name!r} "
            + (f"runs {running or 'an unknown driver'} in the base" if base_canary is not None
               else "does not exist in the base"),
            change.file or head_cluster.source_file, change.path,
            hint=f"pin the drivers to what runs now, move {canary_name!r} to {change.after} first, "
            "then the operator and the other pools",
            yields=self._yields(ctx, change.cluster),
        )

    def _operator(self, ctx: ChangeSetContext, base: Fleet) -> Iterator[Problem]:
        if not ctx.fleet.clusters:
            return
        first_wave = min(c.rollout.wave for c in [*ctx.fleet.clusters, *ctx.context])
        for change in _changes(ctx, ChangeKind.OPERATOR_UPGRADE, ChangeKind.OPERATOR_DOWNGRADE):
            cluster = ctx.fleet.cluster(change.cluster or "")
            if cluster is None or cluster.rollout.wave <= first_wave or change.after is None:
                continue
            ahead = [
                c.name for c, h in ctx.unchanged_or_head()
                if h.rollout.wave < cluster.rollout.wave
                and (operator_version(base, c) == change.after or (
                    change.kind is ChangeKind.OPERATOR_UPGRADE
                    and operator_proves(operator_version(base, c), change.after)))
            ]
            if ahead:
                continue
            yield Problem(
                f"cluster {cluster.name!r} (wave {cluster.rollout.wave}) moves to operator {change.after} but no "
                f"cluster of an earlier wave runs {change.after} (or a later release) in the base",
                change.file or cluster.source_file, change.path,
                hint=f"move a wave-{first_wave} (canary) cluster to {change.after} first, "
                "this cluster in a later change",
            )


def _names(exc_cluster: str, exc_pool: str | None, cluster: str, pool: str | None) -> bool:
    """True when an exception for ``exc_cluster``/``exc_pool`` names ``pool`` of ``cluster`` (or the cluster)."""
    if pool is None:
        return exc_cluster == cluster
    return exc_pool == pool and exc_cluster in ("*", cluster)


class RemovedPoolUnreferenced(ChangeSetRule):
    """A removed pool (or cluster) is no longer referenced by tenants or policy exceptions."""

    entry = cat.REMOVED_POOL_UNREFERENCED

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per tenant and per exception that still names a removed pool or cluster."""
        for change in _changes(ctx, ChangeKind.POOL_REMOVED, ChangeKind.CLUSTER_REMOVED):
            if change.cluster is None:
                continue
            cluster = ctx.fleet.cluster(change.cluster)
            pool = change.pool
            if cluster is not None and pool is not None:
                for t_index, tenant in enumerate(cluster.tenants):
                    if pool in tenant.pools:
                        yield Problem(
                            f"pool {pool!r} is removed from cluster {cluster.name!r} but tenant {tenant.name!r} "
                            "still lists it",
                            cluster.source_file, ("tenants", t_index, "pools", tenant.pools.index(pool)),
                            hint="move the tenant to another pool or remove the tenant in the same change",
                        )
            yield from self._exceptions(ctx, change.cluster, pool)

    def _exceptions(self, ctx: ChangeSetContext, cluster: str, pool: str | None) -> Iterator[Problem]:
        for located in ctx.exceptions:
            named = located.exception
            if not _names(named.cluster, named.pool, cluster, pool):
                continue
            if named.cluster == "*" and pool is not None and any(c.pool(pool) for c in ctx.fleet.clusters):
                continue  # the exception still applies to a pool of that name elsewhere
            what = f"pool {pool!r} of cluster {cluster!r}" if pool else f"cluster {cluster!r}"
            yield Problem(
                f"{what} is removed but a policy exception still names it", located.place.file,
                located.place.path,
                hint="remove the exception in the same change",
            )


class RenderedNotHandEdited(ChangeSetRule):
    """``rendered/`` changes only together with ``fleet/`` or ``policies/``."""

    entry = cat.RENDERED_NOT_HAND_EDITED

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield one problem when rendered files changed while fleet and policy files did not."""
        def under(folder: str, path: str) -> bool:
            return not folder or path == folder or path.startswith(folder.rstrip("/") + "/")

        rendered = [p for p in ctx.changed_files if under(ctx.rendered_rel, p)]
        sources = [p for p in ctx.changed_files if under(ctx.fleet_rel, p) or under(ctx.policies_rel, p)]
        if not rendered or sources:
            return
        regen = ctx.regeneration
        if regen is not None and regen.after != regen.before and regen.by_newer:
            return
        shown = ", ".join(rendered[:3]) + (f" and {len(rendered) - 3} more" if len(rendered) > 3 else "")
        first = (ctx.repo_root / rendered[0]) if ctx.repo_root else Path(rendered[0])
        yield Problem(
            f"{len(rendered)} file(s) in {ctx.rendered_rel}/ changed since {ctx.base_rev or 'the base'} while "
            f"{ctx.fleet_rel}/ and {ctx.policies_rel}/ did not: {shown}",
            display_path(first), (),
            hint=(f"rendered/ was regenerated by an older gpuspec ({regen.before} -> {regen.after}); render with "
                  f"gpuspec {regen.before} or newer" if regen is not None and regen.after and regen.before
                  and regen.after != regen.before else
                  f"undo the hand edit (git checkout {ctx.base_rev or 'BASE'} -- {ctx.rendered_rel}) or change the "
                  "fleet spec and run gpuspec render"),
        )


#: Every change-set rule, in id order.
class MigNeedsNodeLabel(ChangeSetRule):
    """A MIG layout change names the provisioning step that relabels the pool's nodes."""

    entry = cat.MIG_NEEDS_NODE_LABEL

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per MIG change whose nodes must get a new (or re-set) nvidia.com/mig.config label."""
        for change in _changes(ctx, ChangeKind.MIG):
            step = next((d for d in change.details if "mig.config" in d), None)
            if step is None:
                continue
            yield Problem(
                f"cluster {change.cluster!r}, pool {change.pool!r}: {change.summary}; {step}",
                change.file or "", change.path,
                hint="cordon and drain the nodes first: mig-manager needs the GPUs free and does not evict pods",
            )


class DriverManagementAlone(ChangeSetRule):
    """A switch between ClusterPolicy and NVIDIADriver driver management is alone in its change."""

    entry = cat.DRIVER_MANAGEMENT_ALONE

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per switch that shares its change or runs on a release without the migration."""
        for change in _changes(ctx, ChangeKind.DRIVER_MANAGEMENT):
            cluster = ctx.fleet.cluster(change.cluster or "")
            if cluster is None:
                continue
            others = [
                c for c in ctx.changes
                if c.cluster == change.cluster and c is not change
                and c.kind not in (ChangeKind.REGENERATED, ChangeKind.POD_TEMPLATES)
            ]
            if others:
                words = "; ".join(c.summary for c in others[:3]) + ("; ..." if len(others) > 3 else "")
                yield Problem(
                    f"cluster {cluster.name!r}: {change.summary} replaces every GPU node's driver pod and must be the "
                    f"only change of the cluster, but this change also has: {words}",
                    change.file or cluster.source_file, change.path,
                    hint="first set operator.driverManagement to the new mode with every driver unchanged; "
                    "make the other changes in later pull requests",
                )
            version = operator_version(ctx.fleet, cluster)
            if version is not None and (change.after != "NVIDIADriver resources"
                                        or not nvidiadriver_crd_migration(version)):
                yield Problem(
                    f"cluster {cluster.name!r}: GPU Operator {version} does not support {change.summary} on a "
                    "running cluster (NVIDIA documents the migration from ClusterPolicy to NVIDIADriver "
                    "management from v26.7.0 only)",
                    change.file or cluster.source_file, change.path,
                    hint="upgrade the operator to v26.7.0 or later first (in its own change), then switch",
                )


class NvidiaDriverUpgradeAlone(ChangeSetRule):
    """An operator upgrade does not also change which NVIDIADriver resources a cluster has."""

    entry = cat.NVIDIADRIVER_UPGRADE_ALONE

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose operator change turns the default NVIDIADriver on or drops a pool's."""
        from gpuspec.errors import GpuspecError
        from gpuspec.render.context import ClusterContext, cluster_context  # render facts only for change sets

        def context(fleet: Fleet, name: str) -> ClusterContext | None:
            cluster = fleet.cluster(name)
            try:
                return cluster_context(fleet, cluster) if cluster is not None else None
            except GpuspecError:
                return None

        base = ctx.base
        for change in _changes(ctx, ChangeKind.OPERATOR_UPGRADE, ChangeKind.OPERATOR_DOWNGRADE):
            name = change.cluster or ""
            old, new = (context(base, name) if base else None), context(ctx.fleet, name)
            if old is None or new is None or "nvidiadriver" not in (old.driver_mode, new.driver_mode):
                continue
            if old.driver_mode != "nvidiadriver":
                continue  # a switch of management: GS808
            kept = {p.name for p in new.cluster.pools}
            gone = sorted({d.pool.name for d in old.pool_drivers} - {d.pool.name for d in new.pool_drivers} & kept)
            default_on = old.default_driver is None and new.default_driver is not None
            if not gone and not default_on:
                continue
            what = ("turns the chart's default NVIDIADriver on (deployDefaultCR: true)" if default_on else "")
            if gone:
                what += (" and " if what else "") + "removes the NVIDIADriver of pool(s) " + ", ".join(gone)
            yield Problem(
                f"cluster {name!r}: {change.summary} also {what}; with pruning the removed NVIDIADriver's driver "
                "DaemonSet is garbage-collected and those nodes lose their driver at once, outside the upgrade "
                "policy (NVIDIA: do not upgrade and change driver management in one Helm operation)",
                change.file or new.cluster.source_file, change.path,
                hint="first upgrade alone with operator.defaultNVIDIADriver: false (every pool keeps its "
                "NVIDIADriver); later, in a change of its own and after draining "
                + (", ".join(gone) if gone else "the pools the default takes over")
                + ", drop defaultNVIDIADriver: false",
            )


class OverrideStaleAfterUpgrade(ChangeSetRule):
    """An operator upgrade leaves no override on a path the new chart lacks or whose default it changed."""

    entry = cat.OVERRIDE_STALE_AFTER_UPGRADE

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per override the operator change of its cluster leaves stale."""
        from gpuspec.rollout.deviations import stale_overrides  # plan machinery only for change sets

        base = ctx.base
        if base is None:
            return
        for cluster in ctx.fleet.clusters:
            old = base.cluster(cluster.name)
            if old is None or not cluster.overrides:
                continue
            for stale in stale_overrides(base, old, ctx.fleet, cluster):
                yield Problem(
                    f"cluster {cluster.name!r}: {stale.text}", cluster.source_file,
                    ("overrides", stale.index, "path"),
                    hint="drop the override" if stale.removed else
                    "re-check the override's reason against the new default; update the reason or drop it",
                )


CHANGESET_RULES: list[Rule] = [
    OneLayerPerChange(),
    OperatorUpgradePath(),
    DowngradeAcknowledged(),
    CanaryFirst(),
    RemovedPoolUnreferenced(),
    RenderedNotHandEdited(),
    MigNeedsNodeLabel(),
    DriverManagementAlone(),
    NvidiaDriverUpgradeAlone(),
    OverrideStaleAfterUpgrade(),
]


def changeset_context(
    repo_root: Path | None,
    base_rev: str,
    fleet_dir: Path,
    *,
    policies_dir: Path | None = None,
    rendered_dir: Path | None = None,
    head: Fleet | None = None,
    params: Mapping[str, Any] | None = None,
    as_of: date | None = None,
    exceptions: Sequence[LocatedException] = (),
) -> ChangeSetContext:
    """Build the change-set context: base fleet from git, head fleet, diff, changed files and exceptions.

    ``repo_root`` is the git work tree to compare in (None: the one containing ``fleet_dir``); relative
    folders are relative to the current directory, as on the command line.  ``policies_dir`` and
    ``rendered_dir`` default to ``policies`` and ``rendered`` next to ``fleet_dir``.
    A bad revision or an unusable base fleet is a GpuspecError (exit 2).
    """
    # The plan and git machinery is imported only when a change set is asked for (lint --base).
    from gpuspec.history.comparison import compare
    from gpuspec.history.gitread import changed_paths, relative_to_repo
    from gpuspec.rollout.diff import diff_fleets
    from gpuspec.rollout.regen import read_regeneration

    comparison = compare(fleet_dir, base_rev, head, repo=repo_root)
    parent = fleet_dir.parent
    policies = policies_dir if policies_dir is not None else parent / "policies"
    rendered = rendered_dir if rendered_dir is not None else parent / "rendered"
    base = comparison.base_fleet
    rendered_rel = relative_to_repo(comparison.repo_root, rendered)
    return ChangeSetContext(
        fleet=comparison.head,
        params=dict(params or {}),
        as_of=as_of,
        base=base,
        base_rev=base_rev,
        changes=tuple(diff_fleets(base, comparison.head)),
        changed_files=tuple(changed_paths(comparison.repo_root, comparison.base.commit)),
        repo_root=comparison.repo_root,
        fleet_rel=comparison.fleet_rel,
        policies_rel=relative_to_repo(comparison.repo_root, policies),
        rendered_rel=rendered_rel,
        exceptions=tuple(exceptions),
        regeneration=read_regeneration(comparison.repo_root, comparison.base.commit, rendered_rel),
    )
