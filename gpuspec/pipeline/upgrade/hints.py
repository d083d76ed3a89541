"""Rule collisions name the way out: when one change fails several change-set rules at once, the hints of those
findings name the planner's first step and the `gpuspec upgrade` command that prints the whole sequence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding, Severity
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import effective_driver, operator_version
from gpuspec.pipeline.upgrade.model import Target


def derived_target(base: Fleet, head: Fleet) -> tuple[tuple[str, ...], Target] | None:
    """The clusters a change moves and the target it moves them to (operator, one driver branch, Kubernetes),
    or None when the change moves none of them or moves clusters to different targets."""
    operators: set[str] = set()
    branches: set[str] = set()
    kubes: set[str] = set()
    moved: list[str] = []
    pools: list[str] = []
    for cluster in head.clusters:
        old = base.cluster(cluster.name)
        if old is None:
            continue
        before, after = operator_version(base, old), operator_version(head, cluster)
        touched = False
        if after and before != after:
            operators.add(after)
            touched = True
        if old.kubernetes.version != cluster.kubernetes.version:
            kubes.add(cluster.kubernetes.version)
            touched = True
        for pool in cluster.pools:
            was = old.pool(pool.name)
            now = effective_driver(head, cluster, pool).branch
            if was is not None and now and effective_driver(base, old, was).branch != now:
                branches.add(now)
                pools.append(pool.name)
                touched = True
        if touched:
            moved.append(cluster.name)
    if not moved or len(operators) > 1 or len(branches) > 1 or len(kubes) > 1:
        return None
    every = all(
        p.name in pools
        for name in moved
        if (c := head.cluster(name)) is not None
        for p in c.pools
        if p.managed and p.driver.source.value != "host"
    )
    return tuple(moved), Target(
        next(iter(operators), None),
        next(iter(branches), None),
        next(iter(kubes), None),
        () if every else tuple(dict.fromkeys(pools)),
    )


def name_the_way_out(
    findings: Sequence[Finding],
    base: Fleet,
    head: Fleet,
    fleet_dir: Path,
    policies_dir: Path,
    base_rev: str,
    today: date | None,
) -> list[Finding]:
    """``findings`` with the way out added to the hints of colliding change-set errors (two ids or more)."""
    colliding = [f for f in findings if f.rule_id.startswith("GS8") and f.severity is Severity.ERROR]
    if len({f.rule_id for f in colliding}) < 2:
        return list(findings)
    derived = derived_target(base, head)
    if derived is None:
        return list(findings)
    clusters, target = derived
    from gpuspec.pipeline.upgrade.apply import texts_at
    from gpuspec.pipeline.upgrade.planner import plan_upgrade

    try:
        plan = plan_upgrade(
            fleet_dir, policies_dir, target, clusters=clusters, today=today, texts=texts_at(fleet_dir, base_rev)
        )
    except GpuspecError:
        return list(findings)
    command = f"{plan.command()} --from {base_rev}"
    if plan.steps:
        way = (
            f"these rules together ask for {len(plan.steps)} pull request(s); the first: {plan.steps[0].title}; "
            f"`{command}` prints them all (`--apply 1` writes the first)"
        )
    elif plan.blocker is not None:
        first = plan.blocker.moves[0]
        way = (
            f"no sequence of pull requests reaches this change ({first[0]}: {first[1][0] if first[1] else ''}); "
            f"`{command}` says what blocks it"
        )
    else:
        return list(findings)
    ids = {id(f) for f in colliding}
    return [replace(f, hint=f"{f.hint}; {way}" if f.hint else way) if id(f) in ids else f for f in findings]
