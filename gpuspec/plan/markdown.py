"""The plan as a Markdown pull-request comment: summary table, per-cluster tables, rollback notes, wave diagram.

The comment is the template ``plan/comment.md.j2`` (:mod:`gpuspec.templating`); a fleet repository overrides it
with ``fleet/templates/plan/comment.md.j2``.  The escaping helpers below return
:class:`~gpuspec.templating.escape.Md`, so the template prints them as they are and escapes anything else.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from gpuspec.plan.output import headline, rendered_title
from gpuspec.plan.rendered import by_cluster
from gpuspec.rollout.owners import owners_text
from gpuspec.rollout.records import Change, Disruption, Plan
from gpuspec.rollout.waves import FLEET, Step, fleet_waves, rollout_steps
from gpuspec.templating import environment
from gpuspec.templating.escape import Md, no_autolink

#: The comment's template (override: ``fleet/templates/plan/comment.md.j2``).
COMMENT_TEMPLATE = "plan/comment.md.j2"

#: First line of every plan comment, so CI can find and update its previous comment.
COMMENT_MARKER = "<!-- gpuspec-plan -->"

_ICON = {
    Disruption.NONE: "⚪",
    Disruption.OPERAND_RESTART: "🟡",
    Disruption.DRIVER_RELOAD: "🔴",
    Disruption.MIG_REPARTITION: "🟣",
    Disruption.DRIVER_LOST: "⛔",
}


#: Line breaks of every kind (a value must never start a new line of the comment).
_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
#: Characters that Markdown or GitHub would act on inside running text.
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")


def _flat(text: str) -> str:
    """``text`` on one line, other control characters dropped."""
    return "".join(ch for ch in _BREAKS.sub(" ", text) if ch >= " " or ch == "\t")


def cell(text: str | None) -> str:
    """Text made safe for a Markdown table cell or list item of the comment.

    One line; HTML (``<img>``, a second ``<!-- -->`` marker) shown as text; Markdown syntax (images,
    links, emphasis, pipes) escaped; ``@`` cannot mention anyone; a bare URL is no autolink.
    """
    if text is None or text == "":
        return Md("–")
    escaped = _MARKDOWN.sub(r"\\\1", _flat(text))
    return Md(no_autolink(escaped.replace("<", "&lt;").replace("@", "@\u2060")))


def code(text: str | None) -> str:
    """Text as an inline code span (nothing inside it is Markdown), or a dash when empty."""
    if not text:
        return Md("–")
    flat = _flat(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or longest else ""
    return Md(f"{fence}{pad}{flat}{pad}{fence}")


def disruption(value: Disruption) -> str:
    """A disruption class with its icon."""
    return Md(f"{_ICON[value]} {value.label}")


def mermaid_label(text: str) -> str:
    """Text made safe inside a quoted Mermaid node label."""
    return _flat(text).replace("&", "&amp;").replace('"', "#quot;").replace("<", "&lt;").replace(">", "&gt;")


def mermaid(steps: list[Step]) -> list[str]:
    """A Mermaid flowchart of the rollout: one subgraph per fleet wave, one chain of steps per cluster.

    Steps without disruption are left out; with none left there is no diagram (an empty list).
    """
    waves = fleet_waves([s for s in steps if s.worst is not Disruption.NONE])
    if not waves:
        return []
    lines = ["```mermaid", "flowchart LR"]
    counter = 0
    wave_ids: list[str] = []
    for wave, clusters in waves.items():
        wave_id = f"wave{wave}"
        wave_ids.append(wave_id)
        lines.append(f'  subgraph {wave_id}["{"fleet-wide" if wave == 0 and FLEET in clusters else f"wave {wave}"}"]')
        lines.append("    direction TB")
        for cluster, cluster_steps in clusters.items():
            previous: str | None = None
            for step in cluster_steps:
                counter += 1
                node = f"s{counter}"
                label = mermaid_label(f"{cluster} · {step.label}") + "<br/>" + mermaid_label(step.worst.label)
                lines.append(f'    {node}["{label}"]:::{step.worst.value.replace("-", "_")}')
                if previous is not None:
                    lines.append(f"    {previous} --> {node}")
                previous = node
        lines.append("  end")
    for before, after in itertools.pairwise(wave_ids):
        lines.append(f"  {before} --> {after}")
    lines.extend([
        "  classDef none fill:#f6f8fa,stroke:#8c959f",
        "  classDef operand_restart fill:#fff8c5,stroke:#bf8700",
        "  classDef driver_reload fill:#ffebe9,stroke:#cf222e",
        "  classDef mig_repartition fill:#fbefff,stroke:#8250df",
        "```",
    ])
    return lines


def _where(change: Change) -> str:
    if change.pool is None:
        return Md("cluster-wide" if change.cluster else "fleet-wide")
    return Md(code(change.pool) + (" (canary)" if change.canary else ""))


def comment_data(plan: Plan) -> dict[str, Any]:
    """What the comment template shows, with the escaping helpers it formats values with."""
    steps = rollout_steps(plan)
    summary = []
    sections = []
    for wave, clusters in fleet_waves(steps).items():
        for cluster, cluster_steps in clusters.items():
            changes = [c for s in cluster_steps for c in s.changes]
            summary.append({
                "cluster": cluster, "wave": wave, "changes": len(changes),
                "worst": max((c.disruption for c in changes), key=lambda d: d.rank),
                "pools": list(dict.fromkeys(p for s in cluster_steps for p in s.pools)),
                "owners": owners_text(plan.owners[cluster]) if cluster in plan.owners else "",
            })
            sections.append({
                "title": Md("Fleet-wide" if cluster == FLEET else f"Cluster {code(cluster)}"), "wave": wave,
                "rows": [{"number": number, "where": _where(change), "change": change}
                         for number, step in enumerate(cluster_steps, start=1) for change in step.changes],
            })
    notes = [
        {"where": "/".join(p for p in (c.cluster, c.pool) if p) or "fleet", "change": c}
        for c in sorted(plan.changes, key=Change.sort_key) if c.disruption is not Disruption.NONE
    ]
    durations = [
        {"cluster": key[1], "wave": key[0], "step": duration.label, "total": duration.total,
         "window": duration.window_text, "fits": duration.fits, "pools": duration.pools}
        for key, duration in sorted(plan.durations.items())
    ]
    return {
        "durations": durations,
        "marker": Md(COMMENT_MARKER), "plan": plan, "base_commit": plan.base_commit[:12], "headline": headline(plan),
        "summary": summary, "diagram": [Md(line) for line in mermaid(steps)] if plan.changes else [],
        "sections": sections, "notes": notes,
        "quiet": len([c for c in plan.changes if c.disruption is Disruption.NONE]),
        "cell": cell, "code": code, "disruption": disruption,
        "rendered_title": rendered_title(plan).capitalize() if plan.rendered else "", "rendered": rendered_rows(plan),
        "rendered_more": max(0, len(plan.rendered) - RENDERED_ROWS),
    }


#: Most rendered files the comment lists one by one (GitHub refuses comments over 65,536 characters).
RENDERED_ROWS = 200


def rendered_rows(plan: Plan) -> list[dict[str, Any]]:
    """The rendered files the change touches, as table rows for the comment (at most :data:`RENDERED_ROWS`)."""
    rows = [{"cluster": cluster, "path": f.path, "status": f.status}
            for cluster, files in by_cluster(plan.rendered).items() for f in files]
    return rows[:RENDERED_ROWS]


def render_markdown(plan: Plan, fleet_dir: Path | None = None) -> str:
    """The plan as a Markdown document for a pull-request comment (``fleet_dir``: where template overrides live)."""
    return environment.render(COMMENT_TEMPLATE, comment_data(plan), fleet_dir)
