"""The worst-case duration of each disruptive rollout step of a plan, per affected pool, against the window."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.cluster_specs import MaintenanceWindow
from gpuspec.model.fleet import Fleet
from gpuspec.rollout.durations import DurationEstimate, driver_scopes, estimate_targets
from gpuspec.rollout.records import Change, Disruption
from gpuspec.rollout.waves import Step

#: How a cluster-wide part of a step is named among the pools.
CLUSTER_WIDE = "(all pools)"


@dataclass(frozen=True, slots=True)
class StepDuration:
    """How long one disruptive step takes: the whole step, each affected pool, and the cluster's window."""

    cluster: str
    stage: int
    label: str
    disruption: Disruption
    total: DurationEstimate
    pools: tuple[tuple[str, DurationEstimate], ...]
    window: MaintenanceWindow | None

    @property
    def fits(self) -> bool | None:
        """Whether the step finishes within one window (None: no window, or no controller rolls it)."""
        if self.window is None or self.total.manual:
            return None
        return self.total.seconds is not None and self.total.seconds <= self.window.seconds

    @property
    def window_text(self) -> str:
        """The window and whether the step fits it, in words (empty without a window)."""
        if self.window is None:
            return ""
        verdict = {None: "", True: ": fits", False: ": does NOT fit in one window"}[self.fits]
        return f"window {self.window.describe()}{verdict}"

    def to_json(self) -> dict[str, object]:
        """The step's duration as JSON-ready data."""
        return {
            "total": self.total.to_json(),
            "pools": {name: estimate.to_json() for name, estimate in self.pools},
            "window": None
            if self.window is None
            else {
                "days": list(self.window.days),
                "start": self.window.start,
                "length": self.window.length,
                "timeZone": self.window.time_zone,
                "seconds": self.window.seconds,
                "fits": self.fits,
            },
        }


def _targets(cluster: Cluster, changes: Iterable[Change]) -> list[tuple[Pool | None, Disruption]]:
    targets: list[tuple[Pool | None, Disruption]] = []
    for change in changes:
        if change.disruption is Disruption.NONE:
            continue
        if change.pool is None and change.pools:
            targets.extend((pool, change.disruption) for name in change.pools if (pool := cluster.pool(name)))
        elif change.pool is None:
            targets.append((None, change.disruption))
        elif (pool := cluster.pool(change.pool)) is not None:
            targets.append((pool, change.disruption))
    return targets


def step_duration(
    fleet: Fleet, cluster_name: str, stage: int, label: str, changes: Sequence[Change]
) -> StepDuration | None:
    """The duration of the step made of ``changes`` on ``cluster_name`` of ``fleet`` (the head), or None when
    the step restarts nothing on a cluster the fleet has."""
    cluster = fleet.cluster(cluster_name)
    if cluster is None:
        return None
    targets = _targets(cluster, changes)
    if not targets:
        return None
    names = list(dict.fromkeys(CLUSTER_WIDE if pool is None else pool.name for pool, _ in targets))
    scopes = driver_scopes(cluster, fleet)
    pools = tuple(
        (name, estimate_targets(cluster, [t for t in targets if (t[0].name if t[0] else CLUSTER_WIDE) == name],
                                scopes=scopes))
        for name in names
    )
    worst = max((d for _, d in targets), key=lambda d: d.rank)
    return StepDuration(
        cluster.name, stage, label, worst, estimate_targets(cluster, targets, scopes=scopes), pools,
        cluster.rollout.window,
    )


def step_durations(fleet: Fleet, steps: Iterable[Step]) -> dict[tuple[int, str, int], StepDuration]:
    """Step key ``(fleet wave, cluster, stage)`` → duration, for every step that restarts something."""
    out: dict[tuple[int, str, int], StepDuration] = {}
    for step in steps:
        duration = step_duration(fleet, step.cluster, step.stage, step.label, step.changes)
        if duration is not None:
            out[(step.cluster_wave, step.cluster, step.stage)] = duration
    return out
