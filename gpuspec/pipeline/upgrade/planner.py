"""`gpuspec upgrade`: the sequence of pull requests that takes clusters to a target, each step lint-clean
against the one before (see :mod:`gpuspec.pipeline.upgrade.search`)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

from gpuspec.errors import GpuspecError
from gpuspec.loader.fleetload import display_path
from gpuspec.matrix import query
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import operator_version
from gpuspec.pipeline.upgrade.check import Checker, digest, read_texts
from gpuspec.pipeline.upgrade.model import Blocker, Selection, Step, StepChange, Target, UpgradePlan
from gpuspec.pipeline.upgrade.moves import Move, State, movable_pools, norm_operator
from gpuspec.pipeline.upgrade.search import Found, search
from gpuspec.render.compile import compile_cluster
from gpuspec.render.serialize import serialize
from gpuspec.rollout.diff import diff_fleets
from gpuspec.rollout.records import Change, ChangeKind, Disruption
from gpuspec.rollout.step_durations import step_duration

_QUIET = (ChangeKind.REGENERATED,)
#: The exports `gpuspec gate` judges a promotion on (docs/pr-workflow.md, "Gating a promotion on live evidence").
GATE_EVIDENCE = "--nodes nodes.json --clusterpolicies cp.json --jobs jobs.json"


def check_target(target: Target) -> Target:
    """The target with the operator release normalised; a GpuspecError (exit 2) for one the matrix lacks."""
    operator = target.operator
    if operator is not None:
        if query.release(operator) is None:
            near = query.nearest_release(operator)
            raise GpuspecError(
                f"--operator {operator}: not a GPU Operator release gpuspec's support matrix knows",
                hint=f"the nearest known release is v{near.version}"
                if near
                else "give a release such as v26.7.0 (`gpuspec matrix` lists them)",
            )
        operator = norm_operator(operator)
    branch = target.driver_branch
    if branch is not None:
        branch = query.normalize_branch(branch)
        if not branch.isdigit():
            raise GpuspecError(f"--driver-branch {target.driver_branch}: a driver branch is a number such as 595")
    kube = target.kubernetes
    if kube is not None:
        parts = kube.removeprefix("v").split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise GpuspecError(f"--kubernetes {kube}: give a Kubernetes minor such as 1.35")
        kube = ".".join(parts)
    if operator is None and branch is None and kube is None:
        raise GpuspecError("nothing to upgrade to: give --operator, --driver-branch or --kubernetes (or several)")
    if target.pools and branch is None:
        raise GpuspecError("--pool limits the driver move: give --driver-branch too")
    return Target(operator, branch, kube, tuple(dict.fromkeys(target.pools)))


def select(fleet: Fleet, clusters: Sequence[str], wave: int | None, channel: str | None) -> Selection:
    """The clusters named, of fleet wave ``wave``, or following ``channel`` (exactly one way); exit 2 otherwise."""
    ways = sum((bool(clusters), wave is not None, channel is not None))
    if ways != 1:
        raise GpuspecError("say which clusters move: --cluster NAME (repeatable), --wave N or --channel NAME")
    if clusters:
        unknown = [n for n in clusters if fleet.cluster(n) is None]
        if unknown:
            raise GpuspecError(
                f"--cluster {unknown[0]}: no such cluster in the fleet",
                hint="known: " + ", ".join(sorted(c.name for c in fleet.clusters)),
            )
        names = tuple(dict.fromkeys(clusters))
        return Selection(names, " ".join(f"--cluster {n}" for n in names))
    if wave is not None:
        names = tuple(c.name for c in fleet.clusters if c.rollout.wave == wave)
        if not names:
            raise GpuspecError(
                f"--wave {wave}: no cluster has rollout.wave {wave}",
                hint="waves in the fleet: "
                + ", ".join(str(w) for w in sorted({c.rollout.wave for c in fleet.clusters})),
            )
        return Selection(names, f"--wave {wave}")
    assert channel is not None
    if fleet.channel(channel) is None:
        raise GpuspecError(
            f"--channel {channel}: fleet.yaml has no such channel",
            hint="channels: " + (", ".join(c.name for c in fleet.settings.channels) or "none"),
        )
    names = tuple(c.name for c in fleet.clusters if c.operator.channel == channel)
    return Selection(names, f"--channel {channel}", channel)


def _unreachable(fleet: Fleet, selection: Selection, target: Target) -> Blocker | None:
    """Targets no upgrade reaches: an older operator release or Kubernetes minor than a cluster runs."""
    moves: list[tuple[str, tuple[str, ...]]] = []
    for name in selection.clusters:
        cluster = fleet.cluster(name)
        if cluster is None:
            continue
        current = operator_version(fleet, cluster)
        if target.operator and current:
            a, b = query.parse_version(current), query.parse_version(target.operator)
            if a is not None and b is not None and b < a:
                moves.append(
                    (
                        f"{name}: GPU Operator {current} -> {target.operator}",
                        (
                            f"GS803 a downgrade is a rollback, not an upgrade: revert the change that brought "
                            f"{current} (with operator.rollback: true in that change)",
                        ),
                    )
                )
        if target.kubernetes:
            here, there = cluster.kubernetes.version.split("."), target.kubernetes.split(".")
            if [int(p) for p in there] < [int(p) for p in here if p.isdigit()]:
                moves.append(
                    (
                        f"{name}: Kubernetes {cluster.kubernetes.version} -> {target.kubernetes}",
                        ("Kubernetes does not downgrade; the spec follows the cluster",),
                    )
                )
    return Blocker("from the spec as it is", tuple(moves)) if moves else None


def _nodes(
    state: State, changes: Sequence[StepChange], kinds: Mapping[tuple[str | None, str | None], str]
) -> tuple[str, ...]:
    out: list[str] = []
    for change in changes:
        if change.disruption == Disruption.NONE.value or change.cluster is None:
            continue
        cluster = state.fleet.cluster(change.cluster)
        if cluster is None:
            continue
        if change.pool is not None:
            pool = cluster.pool(change.pool)
            text = f"{cluster.name}/{change.pool}: {pool.nodes if pool else '?'} node(s)"
        elif kinds.get((change.cluster, None)) == Disruption.OPERAND_RESTART.value:
            text = f"{cluster.name}: every GPU node's operands ({sum(p.nodes for p in cluster.pools)} node(s))"
        else:
            managed = movable_pools(cluster)
            text = f"{cluster.name}: every GPU node ({sum(p.nodes for p in managed)} node(s) in {len(managed)} pool(s))"
        if text not in out:
            out.append(text)
    return tuple(out)


def _gate(move: Move, state: State) -> str:
    """The evidence a step needs before the next one: the previous step's clusters (and pools) run it."""
    parts = []
    for name in move.clusters:
        pools = sorted(
            {
                e.shown.split("]", 1)[0].removeprefix("pools[")
                for e in move.edits
                if e.shown.startswith("pools[") and e.file.endswith(f"{name}.yaml")
            }
        )
        cluster = state.fleet.cluster(name)
        if len(pools) == 1 and cluster is not None and pools[0] == cluster.rollout.canary_pool:
            parts.append(f"`gpuspec gate --cluster {name} --pool {pools[0]} {GATE_EVIDENCE}`")
        else:
            parts.append(f"`gpuspec gate --cluster {name} {GATE_EVIDENCE}`")
    return ", ".join(parts) if parts else "its sync finished"


def _rendered(fleet: Fleet, name: str) -> dict[str, bytes] | None:
    cluster = fleet.cluster(name)
    if cluster is None:
        return None
    try:
        plan = compile_cluster(fleet, cluster, "")
    except GpuspecError:
        return None
    return {path: serialize(spec, "") for path, spec in plan.files.items() if "/acceptance/" not in path}


def rendered_unchanged(before: Fleet, after: Fleet, clusters: set[str | None]) -> bool:
    """True when every cluster of ``clusters`` renders to the same files in both fleets but its acceptance Jobs
    (whose names follow the pool's spec, so they run again): nothing of the GPU stack is redeployed."""
    if None in clusters:
        return False
    for name in clusters:
        old, new = _rendered(before, name or ""), _rendered(after, name or "")
        if old is None or new is None or old != new:
            return False
    return True


def _duration(fleet: Fleet, title: str, changes: Sequence[Change]) -> tuple[int | None, str | None, tuple[str, ...]]:
    """The worst-case duration of a step (its clusters roll in parallel: the longest), its text, and each
    cluster's maintenance-window verdict; (None, None, ()) when the step restarts nothing."""
    estimates = [
        d
        for name in dict.fromkeys(c.cluster for c in changes if c.cluster is not None)
        if (d := step_duration(fleet, name, 0, title, [c for c in changes if c.cluster == name])) is not None
    ]
    if not estimates:
        return None, None, ()
    windows = tuple(f"{d.cluster}: {d.window_text}" for d in estimates if d.window_text)
    if any(d.total.seconds is None for d in estimates):
        worst = next(d for d in estimates if d.total.seconds is None)
        return None, worst.total.text + (f" ({worst.cluster})" if len(estimates) > 1 else ""), windows
    longest = max(estimates, key=lambda d: d.total.seconds or 0)
    return longest.total.seconds, longest.total.text, windows


def opening_options(blocker: Blocker, target: Target) -> tuple[str, ...]:
    """The options of `gpuspec upgrade` that would open a path where the blocker's findings say the target
    release drops what the clusters run: a driver branch (GS207) or a Kubernetes minor (GS204) it lists."""
    found = " ".join(f for _, findings in blocker.moves for f in findings)
    release = query.release(target.operator) if target.operator else None
    if release is None:
        return ()
    out: list[str] = []
    if "GS207" in found and target.driver_branch is None:
        branches = sorted({d.branch for d in release.drivers.versions}, key=int, reverse=True)
        out.append(f"--driver-branch with a branch GPU Operator {target.operator} lists ({', '.join(branches)}): the "
                   "drivers move while the running release still lists both")
    if "GS204" in found and target.kubernetes is None:
        out.append(f"--kubernetes with a minor GPU Operator {target.operator} supports on the cluster's distribution "
                   f"(`gpuspec matrix {target.operator}` lists them)")
    if "GS202" in found or "GS204" in found or "GS207" in found:
        out.append("or a policy exception (owner, reason, expiry, values) for the state in between (docs/lint.md)")
    return tuple(out)


def _pool_nodes(state: State, cluster: str, pool: str) -> int:
    """The nodes of ``pool`` of ``cluster`` in ``state`` (0 when absent)."""
    found = state.fleet.cluster(cluster)
    p = found.pool(pool) if found is not None else None
    return p.nodes if p is not None else 0


def build_steps(start: State, found: Found, fleet_texts: Mapping[str, str] | None = None) -> tuple[Step, ...]:
    """The numbered steps of a path, with what each changes, disrupts, and needs first; ``fleet_texts``: the spec
    texts of the whole fleet at the start, when the search held the selected clusters only (each step's starting
    state is then the whole fleet's, as `--apply` reads it)."""
    steps: list[Step] = []
    before_state = start
    for number, (move, state, verdict) in enumerate(
        zip(found.moves, found.states, found.verdicts, strict=True), start=1
    ):
        changes = [c for c in diff_fleets(before_state.fleet, state.fleet) if c.kind not in _QUIET]
        if changes and rendered_unchanged(before_state.fleet, state.fleet, {c.cluster for c in changes}):
            changes = [
                replace(
                    c,
                    disruption=Disruption.NONE,
                    impact="the rendered output does not change but the acceptance Jobs: nothing is redeployed "
                    "(the spec now names what runs)",
                )
                for c in changes
            ]
        drained_first = set(move.drained_first)
        changes = [
            replace(
                c,
                disruption=Disruption.DRIVER_RELOAD,
                impact="the pool's nodes are cordoned and drained before this step syncs (see before), so no GPU "
                "pod runs when their driver pods go; the new owner then starts new driver pods",
            )
            if c.disruption is Disruption.DRIVER_LOST and (c.cluster, c.pool) in drained_first
            else c
            for c in changes
        ]
        records = tuple(StepChange(c.cluster, c.pool, c.summary, c.disruption.value, c.impact) for c in changes)
        worst = max((c.disruption for c in changes), key=lambda d: d.rank, default=Disruption.NONE)
        kinds = {(c.cluster, c.pool): c.disruption.value for c in changes}
        if number == 1:
            needs = ["the spec as it is passes `gpuspec lint` (checked)"]
        else:
            previous = found.moves[number - 2]
            needs = [
                f"step {number - 1} merged, synced and accepted: " + _gate(previous, found.states[number - 2])
                if steps[-1].disruption != Disruption.NONE.label
                else f"step {number - 1} merged (nothing rolls out)"
            ]
            needs += [
                f"the control plane and nodes of {e.file.removeprefix('clusters/').removesuffix('.yaml')} run "
                f"Kubernetes {e.value} (upgraded outside gpuspec after step {number - 1})"
                for e in previous.edits
                if e.shown == "kubernetes.version"
            ]
            needs += [
                f"the nodes of {e.shown.split(']', 1)[0].removeprefix('pools[')} in "
                f"{e.file.removeprefix('clusters/').removesuffix('.yaml')} run a node image with driver branch "
                f"{e.value} (rolled outside gpuspec after step {number - 1})"
                for e in previous.edits
                if "node-image" in previous.kind.split("+") and e.shown.endswith(".driver.branch")
            ]
        needs += [
            f"cordon and drain the {_pool_nodes(before_state, cluster, pool)} node(s) of pool {pool} in {cluster} "
            "(their driver pods go at once when this step syncs: GS814, acknowledged in the spec); uncordon them "
            "once their new driver pods are ready"
            for cluster, pool in sorted(drained_first)
        ]
        after: list[str] = []
        if "kubernetes" in move.kind.split("+"):
            version = next((str(e.value) for e in move.edits if e.shown == "kubernetes.version"), "")
            after.append(
                f"upgrade the control plane and nodes to Kubernetes {version} (outside gpuspec), then "
                "`gpuspec audit` the nodes"
            )
        if "node-image" in move.kind.split("+"):
            pools = sorted({e.shown.split("]", 1)[0].removeprefix("pools[") for e in move.edits
                            if e.shown.startswith("pools[")})
            branch = next((str(e.value) for e in move.edits if e.shown.endswith(".driver.branch")), "")
            after.append(
                f"roll the node group(s) of pool(s) {', '.join(pools)} to a node image with driver branch {branch} "
                "(outside gpuspec: the node image's release notes name its driver), then `gpuspec gate` the "
                "pool(s) with the nodes' export"
            )
        if "driver-management" in move.kind.split("+"):
            after.append(
                "every GPU node's driver pod is replaced by the NVIDIADriver-managed one; wait until every "
                "NVIDIADriver is ready"
            )
        seconds, duration, windows = _duration(state.fleet, move.title, changes)
        steps.append(
            Step(
                number=number,
                title=move.title,
                kind=move.kind,
                clusters=move.clusters,
                edits=move.edits,
                changes=records,
                disruption=worst.label,
                nodes=_nodes(state, records, kinds),
                before=tuple(needs),
                after=tuple(after),
                warnings=verdict.warnings,
                starts_from=digest({**(fleet_texts or {}), **before_state.texts}),
                duration_seconds=seconds,
                duration_text=duration,
                windows=windows,
            )
        )
        before_state = state
    return tuple(steps)


def plan_upgrade(
    fleet_dir: Path,
    policies_dir: Path,
    target: Target,
    *,
    clusters: Sequence[str] = (),
    wave: int | None = None,
    channel: str | None = None,
    today: date | None = None,
    texts: Mapping[str, str] | None = None,
) -> UpgradePlan:
    """Plan the upgrade of the selected clusters to ``target`` from the spec in ``fleet_dir`` (or ``texts``, the
    spec files by path relative to it).  A spec that does not lint clean now is a GpuspecError (exit 2)."""
    target = check_target(target)
    shown = display_path(fleet_dir)
    if texts is None:
        if not (fleet_dir / "fleet.yaml").is_file():
            raise GpuspecError(f"{shown}/fleet.yaml not found: run gpuspec upgrade in a fleet repository")
        texts = read_texts(fleet_dir)
    with tempfile.TemporaryDirectory(prefix="gpuspec-upgrade-") as work:
        checker = Checker(Path(work), policies_dir, today, shown)
        verdict = checker.start(texts)
        if verdict.state is None or verdict.errors:
            first = verdict.errors[0] if verdict.errors else "the fleet does not load"
            raise GpuspecError(
                f"the spec does not pass gpuspec lint now, so no step can: {first}",
                hint="run `gpuspec lint` and fix its errors first, or accept them with a policy exception (owner, "
                "reason, expiry) while the upgrade runs (docs/lint.md)",
            )
        start = verdict.state
        selection = select(start.fleet, clusters, wave, channel)
        unknown = [
            p
            for p in target.pools
            if not any(c.pool(p) for n in selection.clusters if (c := start.fleet.cluster(n)) is not None)
        ]
        if unknown:
            raise GpuspecError(f"--pool {unknown[0]}: no selected cluster has such a pool")
        if not selection.clusters:
            raise GpuspecError(f"{selection.scope}: no cluster follows it")
        blocked = _unreachable(start.fleet, selection, target)
        if blocked is not None:
            return UpgradePlan(selection, target, blocker=blocked)
        # The whole fleet passed lint; every candidate step is linted on the selected clusters only.
        fleet_texts = start.texts
        start = checker.narrow(start, selection.clusters)
        result = search(checker, start, selection, target)
        if isinstance(result, Blocker):
            result = replace(result, options=opening_options(result, target))
            return UpgradePlan(selection, target, blocker=result, checked=checker.checked)
        notes = tuple(
            f"{p.name} in {name}: driver.source host, the node image brings its driver (rolled outside gpuspec in "
            "the node-image steps; the spec names the branch it runs)"
            for name in selection.clusters
            if (c := start.fleet.cluster(name)) is not None and target.driver_branch
            for p in c.pools
            if p.driver.source.value == "host"
        )
        return UpgradePlan(selection, target, steps=build_steps(start, result, fleet_texts), notes=notes,
                           checked=checker.checked)
