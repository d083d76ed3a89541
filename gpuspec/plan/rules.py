"""Change-set rules (GS8xx): they judge the difference between a base revision and the working tree.

They follow the rule contract of :mod:`gpuspec.rules.base` with one extension:
:class:`ChangeSetContext` is a :class:`~gpuspec.rules.base.RuleContext` whose
``fleet`` is the head (working tree) and which also carries the base fleet,
the diff between them and the files changed since the base.  A change-set rule
given a plain ``RuleContext`` (no ``--base``) finds nothing.

:func:`changeset_findings` runs them all at their defaults; ``gpuspec lint --base REV`` runs them
through the policy engine instead (:func:`changeset_context` builds the context both use).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from gpuspec.findings import Finding, Severity
from gpuspec.loader.fleetload import display_path
from gpuspec.matrix.query import upgrade_supported
from gpuspec.plan.build import compare
from gpuspec.plan.diff import diff_fleets, driver_key, driver_text
from gpuspec.plan.exceptions import ExceptionRef, read_exceptions
from gpuspec.plan.gitread import changed_paths, relative_to_repo
from gpuspec.plan.model import Change, ChangeKind, Dimension
from gpuspec.plan.regen import read_regeneration
from gpuspec.render.generator import Regeneration
from gpuspec.rules.base import Param, Problem, Rule, RuleContext, run_rule
from gpuspec.spec.models import Fleet
from gpuspec.spec.resolve import effective_driver, operator_version


@dataclass(frozen=True)
class ChangeSetContext(RuleContext):
    """A rule context for change-set rules: ``fleet`` is the head; the base and the diff come along.

    ``changed_files`` are repository-relative POSIX paths that differ between the base commit and the working
    tree (untracked files included); ``fleet_rel``, ``policies_rel`` and ``rendered_rel`` name the three folders
    the same way.  ``exceptions`` are the policy exceptions of the head's policy packs.
    """

    base: Fleet | None = None
    base_rev: str = ""
    changes: tuple[Change, ...] = ()
    changed_files: tuple[str, ...] = ()
    repo_root: Path | None = None
    fleet_rel: str = "fleet"
    policies_rel: str = "policies"
    rendered_rel: str = "rendered"
    exceptions: tuple[ExceptionRef, ...] = field(default=())
    regeneration: Regeneration | None = None


class ChangeSetRule(Rule):
    """Base of GS8xx rules: :meth:`check` hands a :class:`ChangeSetContext` to :meth:`check_changes`."""

    tags = ("change-set",)

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield the rule's problems, or nothing when ``ctx`` carries no base (not a change-set run)."""
        if isinstance(ctx, ChangeSetContext):
            yield from self.check_changes(ctx)

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield every problem in the change from ``ctx.base`` to ``ctx.fleet``."""
        raise NotImplementedError

    def param(self, ctx: RuleContext, name: str) -> Any:
        """The policy's value of parameter ``name``, else its default."""
        return ctx.params[name] if name in ctx.params else type(self).defaults()[name]


def _changes(ctx: ChangeSetContext, *kinds: ChangeKind) -> Iterator[Change]:
    return (c for c in ctx.changes if c.kind in kinds)


class OneLayerPerChange(ChangeSetRule):
    """At most ``max_dimensions`` of {Kubernetes, OS or kernel, driver, operator} change per cluster in one change.

    Changing several layers of the GPU stack at once makes a failure impossible to attribute and a
    rollback ambiguous: which layer broke the nodes?  Upgrade Kubernetes, the node OS or kernel, the
    driver and the GPU Operator in separate pull requests, each after the previous one has rolled out.

    Only written changes count: a driver that moves because it follows the operator release is part of
    the operator change.  Kubernetes counts version, distribution and runtime; OS counts version and
    kernel of any pool; driver counts source, branch, version and module type of any pool (including
    through a channel); operator counts the effective release.

    Failing: one pull request bumps ``kubernetes.version`` and a pool's ``driver.branch``.
    Passing: the same two changes in two pull requests.
    """

    id = "GS801"
    title = "One platform layer per change and cluster"
    rationale = "Several layers changed at once cannot be attributed or rolled back one by one."
    severity = Severity.ERROR
    params = (Param("max_dimensions", int, 1, "Most layers (kubernetes, os, driver, operator) one change may touch."),)

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose change touches more layers than allowed."""
        limit = int(self.param(ctx, "max_dimensions"))
        by_cluster: dict[str, dict[Dimension, Change]] = {}
        for change in ctx.changes:
            if change.dimension is not None and change.cluster is not None and not change.derived:
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
    """A GPU Operator upgrade stays within its release line or goes to the next line only.

    NVIDIA supports upgrades within a release line (YY.MM) or to the next line; skipping a line
    (25.3 -> 25.10 -> 26.3: going from 25.3 straight to 26.3) is not supported and may leave CRDs and
    operands in a state no release was tested with.  Upgrade one line at a time.  The answer comes from
    the support matrix's ``upgrade_supported``; a release the matrix does not know cannot be verified and
    is reported too.

    Failing: ``v25.3.4 -> v26.3.0``.  Passing: ``v25.3.4 -> v25.10.1``.
    """

    id = "GS802"
    title = "Operator upgrade skips no release line"
    rationale = "Upgrades are supported only within a release line or to the next one."
    severity = Severity.ERROR

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
    """An operator or driver downgrade carries ``operator.rollback: true`` in the head spec of its cluster.

    Downgrades are rollbacks: Helm does not downgrade CRDs, and a driver downgrade reloads every
    node again.  They must be deliberate, so the cluster spec acknowledges them with
    ``operator.rollback: true`` (remove it in the next change).

    Failing: ``operator.version: v26.3.1`` after ``v26.7.0`` without ``rollback: true``.
    Passing: the same with ``operator: {version: v26.3.1, rollback: true}``.
    """

    id = "GS803"
    title = "Downgrade acknowledged with operator.rollback"
    rationale = "An unintended downgrade reloads drivers and leaves newer CRDs behind."
    severity = Severity.ERROR

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
    """Driver and operator changes reach non-canary targets only after the canary runs the target in the base.

    Pools: a driver change on a pool that is not the cluster's ``rollout.canaryPool`` needs the canary
    pool to run exactly that driver (source, branch, version, module type) in the base already: change
    the canary in one pull request, the other pools in a later one.  Clusters without a canary pool are
    not checked here (GS501 asks for one).

    Clusters: the operator runs once per cluster, so its canary is a cluster.  An operator change on a
    cluster outside the fleet's first rollout wave needs a cluster of an earlier wave to run the target
    release in the base already.

    Failing: one change moves ``h100-canary`` and ``h100`` to branch 595.  Passing: the canary moved in
    the base; this change moves ``h100``.
    """

    id = "GS804"
    title = "Canary first for driver and operator changes"
    rationale = "A bad driver or operator must hit the canary before it hits production capacity."
    severity = Severity.ERROR

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per non-canary driver change and per operator change that is not preceded by its canary."""
        base = ctx.base
        if base is None:
            return
        for change in _changes(ctx, ChangeKind.DRIVER):
            if change.derived or change.canary or change.cluster is None or change.pool is None:
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
            )
        yield from self._operator(ctx, base)

    def _operator(self, ctx: ChangeSetContext, base: Fleet) -> Iterator[Problem]:
        if not ctx.fleet.clusters:
            return
        first_wave = min(c.rollout.wave for c in ctx.fleet.clusters)
        for change in _changes(ctx, ChangeKind.OPERATOR_UPGRADE, ChangeKind.OPERATOR_DOWNGRADE):
            cluster = ctx.fleet.cluster(change.cluster or "")
            if cluster is None or cluster.rollout.wave <= first_wave or change.after is None:
                continue
            ahead = [
                c.name for c in base.clusters
                if (h := ctx.fleet.cluster(c.name)) is not None and h.rollout.wave < cluster.rollout.wave
                and operator_version(base, c) == change.after
            ]
            if ahead:
                continue
            yield Problem(
                f"cluster {cluster.name!r} (wave {cluster.rollout.wave}) moves to operator {change.after} but no "
                f"cluster of an earlier wave runs {change.after} in the base",
                change.file or cluster.source_file, change.path,
                hint=f"move a wave-{first_wave} (canary) cluster to {change.after} first, "
                "this cluster in a later change",
            )


class RemovedPoolUnreferenced(ChangeSetRule):
    """A removed pool (or cluster) is no longer referenced by tenants or policy exceptions.

    A tenant whose ``pools`` still list a removed pool loses its capacity without anyone deciding it;
    a policy exception that names a removed pool is dead weight that will silently cover a future pool
    of the same name.  Move the tenant and drop the exception in the same change.

    Failing: pool ``t4-batch`` removed while tenant ``batch`` lists it.  Passing: tenant ``batch`` moved to
    another pool in the same change.
    """

    id = "GS805"
    title = "Removed pool still referenced"
    rationale = "Tenants and exceptions that name a removed pool break or linger unnoticed."
    severity = Severity.ERROR

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
        for ref in ctx.exceptions:
            if not ref.names(cluster, pool):
                continue
            if ref.cluster == "*" and pool is not None and any(c.pool(pool) for c in ctx.fleet.clusters):
                continue  # the exception still applies to a pool of that name elsewhere
            what = f"pool {pool!r} of cluster {cluster!r}" if pool else f"cluster {cluster!r}"
            yield Problem(
                f"{what} is removed but a policy exception still names it", ref.file, ref.path,
                hint="remove the exception in the same change",
            )


class RenderedNotHandEdited(ChangeSetRule):
    """``rendered/`` changes only together with ``fleet/`` or ``policies/``.

    ``rendered/`` is generated by ``gpuspec render``; a change there without a change to its sources
    is a hand edit that the next render silently overwrites (and that Argo CD / Flux applies
    meanwhile).  A newer gpuspec whose output differs re-renders without source changes too: that
    regeneration passes, because ``gpuspec render`` records the newer version in the generator stamp
    ``rendered/generator.yaml`` together with the changed files (``gpuspec plan`` lists it as a
    ``regenerated`` change, and ``render --check`` proves the files are exactly that version's output).

    Failing: only ``rendered/clusters/train-east/gpu-operator.values.yaml`` changed.
    Passing: ``fleet/clusters/train-east.yaml`` and the rendered files changed together, or the rendered
    files changed with the generator stamp naming a newer gpuspec.
    """

    id = "GS806"
    title = "rendered/ is not edited by hand"
    rationale = "Hand edits to generated output are applied by GitOps and lost on the next render."
    severity = Severity.ERROR

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
CHANGESET_RULES: list[type[Rule]] = [
    OneLayerPerChange,
    OperatorUpgradePath,
    DowngradeAcknowledged,
    CanaryFirst,
    RemovedPoolUnreferenced,
    RenderedNotHandEdited,
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
) -> ChangeSetContext:
    """Build the change-set context: base fleet from git, head fleet, diff, changed files and exceptions.

    ``repo_root`` is the git work tree to compare in (None: the one containing ``fleet_dir``); relative
    folders are relative to the current directory, as on the command line.  ``policies_dir`` and
    ``rendered_dir`` default to ``policies`` and ``rendered`` next to ``fleet_dir``.
    A bad revision or an unusable base fleet is a GpuspecError (exit 2).
    """
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
        exceptions=tuple(read_exceptions(policies)),
        regeneration=read_regeneration(comparison.repo_root, comparison.base.commit, rendered_rel),
    )


def changeset_findings(
    repo_root: Path | None,
    base_rev: str,
    fleet_dir: Path,
    *,
    policies_dir: Path | None = None,
    rendered_dir: Path | None = None,
    head: Fleet | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    severities: Mapping[str, Severity] | None = None,
    enabled: Mapping[str, bool] | None = None,
    as_of: date | None = None,
) -> list[Finding]:
    """Run every GS8xx rule on the change from ``base_rev`` to the working tree and return their findings.

    ``params``, ``severities`` and ``enabled`` are keyed by rule id (the policy engine's settings); rules
    not named run with their defaults.  ``head`` is the already loaded working-tree fleet, if the caller
    has it.  Findings are not located (``gpuspec.loader.positions.locate_findings`` does that).
    """
    ctx = changeset_context(
        repo_root, base_rev, fleet_dir, policies_dir=policies_dir, rendered_dir=rendered_dir, head=head, as_of=as_of,
    )
    findings: list[Finding] = []
    for rule_class in CHANGESET_RULES:
        if enabled is not None and enabled.get(rule_class.id, True) is False:
            continue
        rule_params = {**rule_class.defaults(), **dict((params or {}).get(rule_class.id, {}))}
        findings.extend(run_rule(rule_class(), replace(ctx, params=rule_params), (severities or {}).get(rule_class.id)))
    return findings
