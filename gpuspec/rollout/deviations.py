"""Plan records of deliberate deviations and acceptance checks (pure).

* Overrides added, removed or changed, per cluster (chart values) and pool (NVIDIADriver).
* Overrides an operator upgrade leaves behind: the path no longer exists in the new chart, or the chart's
  default under it changed (the reason may no longer hold).  GS820 reports the same in ``lint --base``.
* The acceptance checks a change runs: every enabled pool check of each changed cluster.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpuspec.errors import GpuspecError
from gpuspec.matrix.chartvalues import chart_index
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import ValueOverride
from gpuspec.model.resolve import operator_version
from gpuspec.render.acceptance_plan import planned_checks
from gpuspec.render.facts import release_facts
from gpuspec.render.poolresources import has_acceptance_check, pool_resources
from gpuspec.rollout.records import Change, ChangeKind, Disruption


@dataclass(frozen=True, slots=True)
class StaleOverride:
    """An override an operator upgrade leaves behind."""

    index: int
    path: str
    removed: bool
    old_default: Any
    new_default: Any
    before: str
    after: str

    @property
    def text(self) -> str:
        """One sentence for reports."""
        if self.removed:
            return (f"override {self.path!r} no longer exists in the GPU Operator {self.after} chart "
                    f"(it did in {self.before})")
        return (f"the {self.after} chart changed the default under override {self.path!r}: "
                f"{_show(self.old_default)} -> {_show(self.new_default)}")


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _tag(fleet: Fleet, cluster: Cluster) -> str | None:
    version = operator_version(fleet, cluster)
    if version is None:
        return None
    try:
        return release_facts(version).tag
    except GpuspecError:
        return None


def stale_overrides(base: Fleet, old: Cluster, head: Fleet, new: Cluster) -> list[StaleOverride]:
    """The head overrides of ``new`` that its operator change drops from the chart or changes the default of."""
    before, after = _tag(base, old), _tag(head, new)
    if not new.overrides or before is None or after is None or before == after:
        return []
    old_index, new_index = chart_index(before), chart_index(after)
    if old_index is None or new_index is None:
        return []
    stale: list[StaleOverride] = []
    for i, override in enumerate(new.overrides):
        was, now = old_index.lookup(override.path), new_index.lookup(override.path)
        if not was.known:
            continue
        if not now.known:
            stale.append(StaleOverride(i, override.path, True, was.default, None, before, after))
        elif was.default != now.default:
            stale.append(StaleOverride(i, override.path, False, was.default, now.default, before, after))
    return stale


def _change(cluster: Cluster, kind: ChangeKind, summary: str, before: str | None, after: str | None,
            disruption: Disruption, impact: str, rollback: str, *, pool: Pool | None = None,
            path: tuple[str | int, ...] = (), derived: bool = False, details: tuple[str, ...] = ()) -> Change:
    return Change(kind, cluster.name, pool.name if pool else None, summary, before, after, disruption, impact,
                  rollback, cluster.rollout.wave, pool.wave if pool else None,
                  bool(pool and pool.name == cluster.rollout.canary_pool), cluster.source_file, path,
                  None, derived, details)


def _by_path(overrides: list[ValueOverride]) -> dict[str, tuple[int, ValueOverride]]:
    return {o.path: (i, o) for i, o in enumerate(overrides)}


def _override_changes(cluster: Cluster, old: list[ValueOverride], new: list[ValueOverride], where: str,
                      pool: Pool | None, disruption: Disruption, prefix: tuple[str | int, ...]) -> Iterator[Change]:
    before, after = _by_path(old), _by_path(new)
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a is not None and b is not None and a[1].value == b[1].value:
            continue
        if b is None:
            summary, rollback = f"deviation removed: {where} {path} back to the chart default", "restore the override"
        elif a is None:
            summary, rollback = f"deviation added: {where} {path} = {_show(b[1].value)}", "remove the override"
        else:
            summary = f"deviation changed: {where} {path}"
            rollback = "restore the previous value"
        reason = (b or a)[1].reason if (b or a) else ""  # type: ignore[index]
        yield _change(
            cluster, ChangeKind.DEVIATION, summary, _show(a[1].value) if a else None,
            _show(b[1].value) if b else None, disruption,
            f"{where} value set by hand; reason: {reason}", rollback, pool=pool,
            path=(*prefix, b[0]) if b else prefix)


def deviation_changes(base: Fleet, old: Cluster, head: Fleet, new: Cluster) -> list[Change]:
    """Added, removed and changed overrides of one cluster, and overrides its operator upgrade leaves stale."""
    changes = list(_override_changes(new, old.overrides, new.overrides, "chart value", None,
                                     Disruption.OPERAND_RESTART, ("overrides",)))
    for p, pool in enumerate(new.pools):
        previous = old.pool(pool.name)
        changes += _override_changes(new, previous.driver_overrides if previous else [], pool.driver_overrides,
                                     f"NVIDIADriver of pool {pool.name}", pool, Disruption.DRIVER_RELOAD,
                                     ("pools", p, "driverOverrides"))
    for stale in stale_overrides(base, old, head, new):
        changes.append(_change(
            new, ChangeKind.DEVIATION, stale.text, _show(stale.old_default),
            None if stale.removed else _show(stale.new_default), Disruption.NONE,
            "the override's reason was written against the old chart (GS820)",
            "re-check the reason against the new chart, then keep, change or drop the override",
            path=("overrides", stale.index, "path"), derived=True))
    return changes


def acceptance_summary(cluster: Cluster) -> list[str]:
    """``pool (resource, …): check, …`` for every pool of ``cluster`` that has acceptance checks."""
    return [f"{p.name} ({', '.join(pool_resources(p))}): {', '.join(c.check for c in planned_checks(cluster, p))}"
            for p in cluster.pools if has_acceptance_check(p)]


def acceptance_runs(head: Fleet, changes: list[Change]) -> dict[str, list[str]]:
    """Cluster → the acceptance checks a change runs (every check of each cluster a written change touches).

    Each cluster's list ends with how its GitOps tool runs them.
    """
    touched = {c.cluster for c in changes if c.cluster is not None and not c.derived}
    out: dict[str, list[str]] = {}
    for name in sorted(touched):
        cluster = head.cluster(name)
        if cluster is None:
            continue
        checks = acceptance_summary(cluster)
        if checks:
            out[name] = [*checks, _how(cluster)]
    return out


def _how(cluster: Cluster) -> str:
    if cluster.gitops.tool == "argocd":
        return f"Argo CD PostSync hooks of {cluster.name}-gpu-operator-overlay; a failed Job fails the sync"
    return f"Flux Kustomization {cluster.name}-gpu-operator-acceptance after the overlay; a failed Job fails it"
