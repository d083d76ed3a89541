"""The plan of a change: the base (from git) and the head (working tree) fleets, their difference as the rollout
model reads it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpuspec.history.comparison import compare_changed
from gpuspec.history.gitread import changed_paths, relative_to_repo
from gpuspec.plan.rendered import rendered_changes
from gpuspec.rollout.apiserver import refused_update_changes
from gpuspec.rollout.deviations import acceptance_runs
from gpuspec.rollout.diff import diff_fleets
from gpuspec.rollout.owners import affected_owners
from gpuspec.rollout.records import Change, Plan
from gpuspec.rollout.regen import read_regeneration, regeneration_change
from gpuspec.rollout.removals import removed_objects
from gpuspec.rollout.step_durations import step_durations
from gpuspec.rollout.waves import rollout_steps


def build_plan(fleet_dir: Path, base_rev: str, rendered_dir: Path | None = None) -> Plan:
    """The plan of every change from the fleet at ``base_rev`` to the working tree's fleet in ``fleet_dir``.

    Besides the spec changes it reports a regeneration of ``rendered_dir`` (default: ``rendered`` next to
    ``fleet_dir``) by another gpuspec version as a change of its own (kind ``regenerated``), and every file of
    ``rendered_dir`` that differs from the base's (``Plan.rendered``).
    """
    comparison = compare_changed(fleet_dir, base_rev)
    base = comparison.base_fleet
    changes = diff_fleets(base, comparison.head)
    changes = sorted([*changes, *refused_update_changes(base, comparison.head)], key=Change.sort_key)
    rendered = rendered_dir if rendered_dir is not None else fleet_dir.parent / "rendered"
    rendered_rel = relative_to_repo(comparison.repo_root, rendered)
    changed = changed_paths(comparison.repo_root, comparison.base.commit)
    regen = read_regeneration(comparison.repo_root, comparison.base.commit, rendered_rel)
    if regen.after is not None and regen.after != regen.before:
        record = regeneration_change(regen, changed, rendered_rel)
        if record is not None:
            changes = [record, *changes]
    plan = Plan(base_rev, comparison.base.commit, changes, acceptance_runs(comparison.head, changes),
                removed_objects(base, comparison.head), owners=affected_owners(comparison.head, base, changes),
                rendered=rendered_changes(comparison.repo_root, comparison.base.commit, rendered_rel, changed))
    return replace(plan, durations=step_durations(comparison.head, rollout_steps(plan)))
