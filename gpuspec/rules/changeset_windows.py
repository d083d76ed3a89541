"""Change-set rule of maintenance windows: a disruptive step finishes within one `rollout.window` (GS830)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import changeset_steps as cat
from gpuspec.rollout.durations import format_seconds
from gpuspec.rollout.records import Plan
from gpuspec.rollout.step_durations import step_durations
from gpuspec.rollout.waves import rollout_steps
from gpuspec.rules.base import Problem, Rule
from gpuspec.rules.changeset import ChangeSetContext, ChangeSetRule


class StepFitsWindow(ChangeSetRule):
    """Every disruptive step of a cluster with a maintenance window can finish inside one window."""

    entry = cat.STEP_EXCEEDS_WINDOW

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per step whose worst-case duration is longer than its cluster's window, or unbounded."""
        steps = rollout_steps(Plan(ctx.base_rev, "", list(ctx.changes)))
        for duration in step_durations(ctx.fleet, steps).values():
            if duration.fits is not False or duration.window is None:
                continue
            cluster = ctx.fleet.cluster(duration.cluster)
            if cluster is None:
                continue
            window = duration.window
            took = (
                f"takes up to {format_seconds(duration.total.seconds)}"
                if duration.total.seconds is not None
                else "has no upper bound"
            )
            yield Problem(
                f"cluster {cluster.name!r}: step {duration.label!r} ({duration.disruption.label}) {took}, longer "
                f"than one maintenance window ({window.describe()}): {duration.total.explanation}",
                cluster.source_file,
                ("rollout", "window"),
                hint="raise rollout.maxParallelUpgrades and maxUnavailable, bound the timeouts, or lengthen "
                "rollout.window; a step that deliberately spans windows takes a GS830 exception",
            )


#: This module's change-set rules.
WINDOW_RULES: list[Rule] = [StepFitsWindow()]
