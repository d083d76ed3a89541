"""The records of an upgrade plan: the target, the steps (one pull request each) and why a path may not exist."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuspec.pipeline.upgrade.edits import KeyEdit


@dataclass(frozen=True, slots=True)
class Target:
    """Where the selected clusters should end: any of an operator release, a driver branch, a Kubernetes minor."""

    operator: str | None = None
    driver_branch: str | None = None
    kubernetes: str | None = None
    #: Pools whose driver moves (empty: every operator-managed pool); the canary pool always goes first.
    pools: tuple[str, ...] = ()

    def words(self) -> str:
        """``operator v26.7.0, driver branch 595`` for reports."""
        parts = [
            f"operator {self.operator}" if self.operator else "",
            f"driver branch {self.driver_branch}" if self.driver_branch else "",
            f"Kubernetes {self.kubernetes}" if self.kubernetes else "",
        ]
        if self.pools and self.driver_branch:
            parts[1] += " (pools " + ", ".join(self.pools) + ")"
        return ", ".join(p for p in parts if p)

    def options(self) -> str:
        """The command-line options that ask for this target."""
        parts = [
            f"--operator {self.operator}" if self.operator else "",
            f"--driver-branch {self.driver_branch}" if self.driver_branch else "",
            f"--kubernetes {self.kubernetes}" if self.kubernetes else "",
            *(f"--pool {p}" for p in self.pools),
        ]
        return " ".join(p for p in parts if p)

    def to_json(self) -> dict[str, Any]:
        """The target as JSON-ready data."""
        return {
            "operator": self.operator,
            "driverBranch": self.driver_branch,
            "kubernetes": self.kubernetes,
            "pools": list(self.pools),
        }


@dataclass(frozen=True, slots=True)
class Selection:
    """Which clusters move: named ones, a fleet wave or a channel's; ``scope`` says which as the command took it."""

    clusters: tuple[str, ...]
    scope: str
    channel: str | None = None

    def options(self) -> str:
        """The command-line options of this selection."""
        return self.scope


@dataclass(frozen=True, slots=True)
class StepChange:
    """What one step does to one cluster or pool, as ``plan`` describes it (summary, disruption, impact)."""

    cluster: str | None
    pool: str | None
    summary: str
    disruption: str
    impact: str

    def to_json(self) -> dict[str, Any]:
        """The change as JSON-ready data."""
        return {
            "cluster": self.cluster,
            "pool": self.pool,
            "summary": self.summary,
            "disruption": self.disruption,
            "impact": self.impact,
        }


@dataclass(frozen=True)
class Step:
    """One pull request of the plan: its spec edits, what rolls where, and what must hold before it starts.

    ``duration_seconds`` is the worst-case rollout time (:mod:`gpuspec.rollout.step_durations`; the clusters of a
    step roll in parallel, so the longest); None with ``duration_text`` None when nothing restarts, and reports
    print it only when set.
    """

    number: int
    title: str
    kind: str
    clusters: tuple[str, ...]
    edits: tuple[KeyEdit, ...]
    changes: tuple[StepChange, ...]
    disruption: str
    nodes: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    duration_seconds: int | None = None
    #: The estimate in words (``≤ 2h 5m``, ``unbounded``, ``manual``) and each cluster's window verdict.
    duration_text: str | None = None
    windows: tuple[str, ...] = ()
    #: Digest of the spec files the step starts from (``--apply`` checks the working tree against it).
    starts_from: str = ""

    @property
    def files(self) -> tuple[str, ...]:
        """The spec files the step edits, in order."""
        return tuple(dict.fromkeys(e.file for e in self.edits))

    def to_json(self) -> dict[str, Any]:
        """The step as JSON-ready data."""
        out: dict[str, Any] = {
            "step": self.number,
            "title": self.title,
            "kind": self.kind,
            "clusters": list(self.clusters),
            "files": list(self.files),
            "edits": [e.to_json() for e in self.edits],
            "changes": [c.to_json() for c in self.changes],
            "disruption": self.disruption,
            "nodes": list(self.nodes),
            "before": list(self.before),
            "after": list(self.after),
            "warnings": list(self.warnings),
            "startsFrom": self.starts_from,
        }
        if self.duration_text is not None:
            out["durationSeconds"] = self.duration_seconds
            out["duration"] = self.duration_text
            out["windows"] = list(self.windows)
        return out


@dataclass(frozen=True)
class Blocker:
    """Why no path exists: the state the search got furthest to, and each next move with the findings against it."""

    reached: str
    moves: tuple[tuple[str, tuple[str, ...]], ...]
    #: Options of `gpuspec upgrade` that would open a path (e.g. a driver branch the target release lists).
    options: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The blocker as JSON-ready data."""
        return {"reached": self.reached, "moves": [{"move": m, "findings": list(f)} for m, f in self.moves],
                "options": list(self.options)}


@dataclass(frozen=True)
class UpgradePlan:
    """The answer of ``gpuspec upgrade``: the steps that reach the target, or the blocker when none exists."""

    selection: Selection
    target: Target
    steps: tuple[Step, ...] = ()
    blocker: Blocker | None = None
    notes: tuple[str, ...] = field(default=())
    checked: int = 0

    @property
    def found(self) -> bool:
        """True when the plan reaches the target (possibly in zero steps)."""
        return self.blocker is None

    def command(self) -> str:
        """The ``gpuspec upgrade`` command line that prints this plan."""
        return f"gpuspec upgrade {self.selection.options()} {self.target.options()}".strip()

    def to_json(self) -> dict[str, Any]:
        """The plan as JSON-ready data."""
        return {
            "command": self.command(),
            "clusters": list(self.selection.clusters),
            "target": self.target.to_json(),
            "found": self.found,
            "steps": [s.to_json() for s in self.steps],
            "blocked": self.blocker.to_json() if self.blocker else None,
            "notes": list(self.notes),
            "candidatesChecked": self.checked,
        }
