"""Group a plan's changes into rollout steps: fleet wave, then cluster, then cluster-wide / canary / pool wave."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuspec.rollout.records import STAGE_CANARY, STAGE_CLUSTER, Change, Disruption, Plan

FLEET = "(fleet)"


@dataclass
class Step:
    """One step of the rollout: the changes of one cluster at one stage (cluster-wide, canary or a pool wave)."""

    cluster_wave: int
    cluster: str
    stage: int
    changes: list[Change] = field(default_factory=list)

    @property
    def pools(self) -> list[str]:
        """The pools this step touches, in order of first appearance."""
        return list(dict.fromkeys(c.pool for c in self.changes if c.pool))

    @property
    def worst(self) -> Disruption:
        """The most disruptive class among the step's changes."""
        return max((c.disruption for c in self.changes), key=lambda d: d.rank, default=Disruption.NONE)

    @property
    def label(self) -> str:
        """What the step is: ``cluster-wide``, ``canary pool X`` or ``pool wave N: X, Y``."""
        if self.stage == STAGE_CLUSTER:
            return "fleet-wide" if self.cluster == FLEET else "cluster-wide"
        if self.stage == STAGE_CANARY:
            return f"canary pool {', '.join(self.pools)}"
        return f"pool wave {self.stage - 2}: {', '.join(self.pools)}"


def rollout_steps(plan: Plan) -> list[Step]:
    """The plan's changes grouped into steps, in rollout order."""
    steps: dict[tuple[int, str, int], Step] = {}
    for change in sorted(plan.changes, key=Change.sort_key):
        key = (change.cluster_wave, change.cluster or FLEET, change.stage)
        steps.setdefault(key, Step(*key)).changes.append(change)
    return [steps[k] for k in sorted(steps)]


def fleet_waves(steps: list[Step]) -> dict[int, dict[str, list[Step]]]:
    """Steps grouped by fleet wave, then by cluster (both in rollout order)."""
    waves: dict[int, dict[str, list[Step]]] = {}
    for step in steps:
        waves.setdefault(step.cluster_wave, {}).setdefault(step.cluster, []).append(step)
    return waves
