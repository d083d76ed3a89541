"""The records of a plan: one :class:`Change` per thing that differs between base and head, and the plan itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gpuspec.findings import DocPath


class Disruption(StrEnum):
    """What a change does to running GPU workloads, least to most disruptive."""

    NONE = "none"
    OPERAND_RESTART = "operand-restart"
    DRIVER_RELOAD = "driver-reload"
    MIG_REPARTITION = "mig-repartition"
    #: Driver pods taken away at once, outside the upgrade policy (GS814 refuses it).
    DRIVER_LOST = "driver-lost"

    @property
    def rank(self) -> int:
        """A number that orders disruptions: higher is more disruptive."""
        return _RANK[self.value]

    @property
    def label(self) -> str:
        """Words for reports."""
        return _LABEL[self.value]


_RANK = {"none": 0, "operand-restart": 1, "driver-reload": 2, "mig-repartition": 3, "driver-lost": 4}
_LABEL = {
    "none": "no disruption",
    "operand-restart": "operand restart",
    "driver-reload": "driver reload (GPU pods evicted; nodes drained as rollout.drain says)",
    "mig-repartition": "MIG repartition (GPUs must be idle)",
    "driver-lost": "driver lost at once (no drain: GPU pods fail)",
}


class ChangeKind(StrEnum):
    """What changed."""

    CLUSTER_ADDED = "cluster-added"
    CLUSTER_REMOVED = "cluster-removed"
    POOL_ADDED = "pool-added"
    POOL_REMOVED = "pool-removed"
    OPERATOR_UPGRADE = "operator-upgrade"
    OPERATOR_DOWNGRADE = "operator-downgrade"
    OPERATOR_PIN = "operator-pin"
    OPERANDS = "operands"
    DRIVER = "driver"
    DRIVER_MANAGEMENT = "driver-management"
    MIG = "mig"
    SHARING = "sharing"
    TENANT_ADDED = "tenant-added"
    TENANT_REMOVED = "tenant-removed"
    TENANT_CHANGED = "tenant-changed"
    MIRROR = "mirror"
    FLEET_MIRROR = "fleet-mirror"
    KUBERNETES = "kubernetes"
    OS = "os"
    ROLLOUT = "rollout"
    POOL_SIZE = "pool-size"
    POOL_SETTINGS = "pool-settings"
    REGENERATED = "regenerated"
    DEVIATION = "deviation"
    UPDATE_REFUSED = "update-refused"
    POD_TEMPLATES = "pod-templates"


class Dimension(StrEnum):
    """The platform layers GS801 keeps apart: one of them per cluster per change."""

    KUBERNETES = "kubernetes"
    OS = "os"
    DRIVER = "driver"
    DRIVER_MANAGEMENT = "driver-management"
    OPERATOR = "operator"


#: Pool-step ordering inside a cluster: cluster-wide changes first, then the canary pool, then pool waves.
STAGE_CLUSTER = 0
STAGE_CANARY = 1


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the base and the head fleet, with its impact, rollout wave and rollback note.

    ``cluster`` is ``None`` only for fleet-wide records (a mirror definition no cluster uses).
    ``pool`` is ``None`` for cluster-wide changes.  ``file``/``path`` point at the head spec where the change
    is written (the base file for removals).  ``dimension`` is set when the change touches one of the layers
    GS801 counts; ``derived`` marks effects of another change (a release-default driver moving with the operator);
    ``downgrade`` marks an operator or driver moving to an older release (GS803); ``pools`` names the pools a
    cluster-wide record restarts when they are not all of them.
    """

    kind: ChangeKind
    cluster: str | None
    pool: str | None
    summary: str
    before: str | None
    after: str | None
    disruption: Disruption
    impact: str
    rollback: str
    cluster_wave: int
    pool_wave: int | None = None
    canary: bool = False
    file: str | None = None
    path: DocPath = ()
    dimension: Dimension | None = None
    derived: bool = False
    details: tuple[str, ...] = ()
    downgrade: bool = False
    #: For a cluster-wide record that restarts only some pools (a shared driver DaemonSet rolls): those pools.
    pools: tuple[str, ...] = ()

    @property
    def stage(self) -> int:
        """Order inside the cluster's wave: 0 cluster-wide, 1 canary pool, 2 + pool wave for other pools."""
        if self.pool is None:
            return STAGE_CLUSTER
        if self.canary:
            return STAGE_CANARY
        return 2 + (self.pool_wave or 0)

    def sort_key(self) -> tuple[int, str, int, str, str, str]:
        """Rollout order: fleet wave, cluster, stage inside the cluster, pool, kind, summary."""
        return (self.cluster_wave, self.cluster or "", self.stage, self.pool or "", self.kind.value, self.summary)

    def to_json(self) -> dict[str, Any]:
        """The change as JSON-ready data."""
        return {
            "kind": self.kind.value,
            "cluster": self.cluster,
            "pool": self.pool,
            "summary": self.summary,
            "before": self.before,
            "after": self.after,
            "disruption": self.disruption.value,
            "impact": self.impact,
            "rollback": self.rollback,
            "wave": {"cluster": self.cluster_wave, "pool": self.pool_wave, "canary": self.canary, "stage": self.stage},
            "file": self.file,
            "path": list(self.path),
            "dimension": self.dimension.value if self.dimension else None,
            "derived": self.derived,
            "details": list(self.details),
            "downgrade": self.downgrade,
            "pools": list(self.pools),
        }


@dataclass(frozen=True)
class Plan:
    """Everything ``gpuspec plan`` reports: the base it compared with and the ordered changes."""

    base_rev: str
    base_commit: str
    changes: list[Change] = field(default_factory=list)
    #: Cluster → the acceptance checks its change runs once synced (``pool (resource, …)``), and how they run.
    acceptance: dict[str, list[str]] = field(default_factory=dict)
    #: Rendered objects the change removes per GitOps unit (:class:`gpuspec.rollout.removals.Removal`).
    removals: list[Any] = field(default_factory=list)
    #: Step key ``(fleet wave, cluster, stage)`` → :class:`gpuspec.rollout.step_durations.StepDuration`.
    durations: dict[tuple[int, str, int], Any] = field(default_factory=dict)
    #: Cluster → its owner teams and the changed pools' own hardware teams (:func:`plan.owners.affected_owners`).
    owners: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Files of the rendered folder that differ from the base's (:class:`gpuspec.plan.rendered.RenderedChange`):
    #: every file the change touches, also when no spec change above shows why (a label, a template).
    rendered: list[Any] = field(default_factory=list)

    @property
    def worst(self) -> Disruption:
        """The most disruptive class among the changes (none when there are no changes)."""
        return max((c.disruption for c in self.changes), key=lambda d: d.rank, default=Disruption.NONE)

    def clusters(self) -> list[str]:
        """Names of the clusters with changes, in rollout order (fleet-wide records under ``(fleet)``)."""
        return list(dict.fromkeys(c.cluster or "(fleet)" for c in self.changes))

    def counts(self) -> dict[Disruption, int]:
        """Number of changes per disruption class (every class present, most disruptive first)."""
        out = {d: 0 for d in sorted(Disruption, key=lambda d: -d.rank)}
        for change in self.changes:
            out[change.disruption] += 1
        return out
