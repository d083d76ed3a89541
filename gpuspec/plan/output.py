"""Plan reports for terminals and machines: text and JSON (Markdown lives in :mod:`gpuspec.plan.markdown`)."""

from __future__ import annotations

import json
from typing import Any

from gpuspec.plan.rendered import by_cluster
from gpuspec.redaction import one_line
from gpuspec.rollout.owners import owners_text
from gpuspec.rollout.records import Disruption, Plan
from gpuspec.rollout.step_durations import StepDuration
from gpuspec.rollout.waves import fleet_waves, rollout_steps


def headline(plan: Plan) -> str:
    """One line: how many changes in how many clusters, by disruption class, and how many rendered files change."""
    files = len(plan.rendered)
    if not plan.changes:
        if files:
            return (f"rendered only: {files} rendered file(s) change since {plan.base_rev}, no change of the spec's "
                    "meaning (nothing to roll out beyond applying them)")
        return f"no fleet changes since {plan.base_rev}"
    counts = ", ".join(f"{n} {d.label.split(' (')[0]}" for d, n in plan.counts().items() if n)
    clusters = [c for c in plan.clusters() if c != "(fleet)"]
    rendered = f"; {files} rendered file(s) change" if files else ""
    return (
        f"{len(plan.changes)} change(s) in {len(clusters)} cluster(s): {counts}; "
        f"most disruptive: {plan.worst.label}{rendered}"
    )


def rendered_title(plan: Plan) -> str:
    """The heading of the list of rendered files: "rendered only" when no spec change explains them."""
    if plan.changes:
        return f"rendered files this change touches ({len(plan.rendered)})"
    return f"rendered only: files that change without a change of the spec's meaning ({len(plan.rendered)})"


def rendered_lines(plan: Plan) -> list[str]:
    """The rendered files the change touches, by cluster, for the text report (empty when none)."""
    if not plan.rendered:
        return []
    lines = ["", rendered_title(plan) + ":"]
    for cluster, files in by_cluster(plan.rendered).items():
        lines.append(f"  {one_line(cluster)}:")
        lines.extend(f"    {one_line(f.path)}  [{f.status}]" for f in files)
    return lines


def duration_lines(duration: StepDuration) -> list[str]:
    """A step's worst-case duration for the text report: the total (and window), then one line per pool."""
    window = f"; {duration.window_text}" if duration.window is not None else ""
    lines = [f"    duration: {duration.total.text} (worst case){one_line(window)}"]
    for pool, estimate in duration.pools:
        lines.append(f"      {one_line(pool)}: {one_line(estimate.explanation)}")
    return lines


def render_text(plan: Plan) -> str:
    """The plan for a terminal: a headline, then every rollout step with its changes, impact and rollback."""
    lines = [f"gpuspec plan: {one_line(plan.base_rev)} ({plan.base_commit[:12]}) -> working tree",
             one_line(headline(plan))]
    for wave, clusters in fleet_waves(rollout_steps(plan)).items():
        for cluster, steps in clusters.items():
            lines.append("")
            lines.append(f"wave {wave} - cluster {cluster}")
            if cluster in plan.owners:
                lines.append(f"  owners: {one_line(owners_text(plan.owners[cluster]))}")
            for step in steps:
                lines.append(f"  {step.label}  [{step.worst.label}]")
                duration = plan.durations.get((step.cluster_wave, step.cluster, step.stage))
                if duration is not None:
                    lines.extend(duration_lines(duration))
                for change in step.changes:
                    where = f"{one_line(change.pool)}: " if change.pool else ""
                    lines.append(f"    - {where}{one_line(change.summary)}  [{change.disruption.label}]")
                    lines.append(f"      impact: {one_line(change.impact)}")
                    lines.append(f"      rollback: {one_line(change.rollback)}")
    if plan.changes:
        order = " -> ".join(
            f"{s.cluster}/{s.label}" for s in rollout_steps(plan) if s.worst is not Disruption.NONE
        )
        if order:
            lines.extend(["", f"rollout order (disruptive steps): {order}"])
    if plan.acceptance:
        lines.extend(["", "acceptance checks this change runs:"])
        for cluster, checks in plan.acceptance.items():
            *pools, how = checks
            lines.append(f"  {one_line(cluster)}: {one_line('; '.join(pools))} - {one_line(how)}")
    if plan.removals:
        lines.extend(["", "objects this change removes (per GitOps unit) and what garbage collection deletes:"])
        for removal in plan.removals:
            lines.append(f"  {one_line(removal.cluster)} / {one_line(removal.unit)}: {one_line(removal.describe())}")
    lines.extend(rendered_lines(plan))
    return "\n".join(lines) + "\n"


def plan_json(plan: Plan) -> dict[str, Any]:
    """The plan as JSON-ready data: base, summary, steps in rollout order and every change."""
    steps = rollout_steps(plan)
    return {
        "base": {"rev": plan.base_rev, "commit": plan.base_commit},
        "head": "working tree",
        "summary": {
            "changes": len(plan.changes),
            "clusters": [c for c in plan.clusters() if c != "(fleet)"],
            "worst": plan.worst.value,
            "by_disruption": {d.value: n for d, n in plan.counts().items()},
            "rendered_files": len(plan.rendered),
            "rendered_only": bool(plan.rendered) and not plan.changes,
        },
        "steps": [
            {
                "wave": s.cluster_wave, "cluster": s.cluster, "stage": s.stage, "label": s.label,
                "pools": s.pools, "disruption": s.worst.value, "changes": len(s.changes),
                "duration": d.to_json() if (d := plan.durations.get((s.cluster_wave, s.cluster, s.stage))) else None,
            }
            for s in steps
        ],
        "changes": [c.to_json() for c in plan.changes],
        "acceptance": {
            cluster: {"checks": checks[:-1], "how": checks[-1]} for cluster, checks in plan.acceptance.items()
        },
        "removals": [r.to_json() for r in plan.removals],
        "owners": plan.owners,
        "rendered": [f.to_json() for f in plan.rendered],
    }


def render_json(plan: Plan) -> str:
    """The plan as a JSON document (sorted keys, two-space indent)."""
    return json.dumps(plan_json(plan), indent=2, sort_keys=True) + "\n"
