"""The plan as a Markdown pull-request comment: summary table, per-cluster tables, rollback notes, wave diagram."""

from __future__ import annotations

import itertools
import re

from gpuspec.plan.output import headline
from gpuspec.plan.records import Change, Disruption, Plan
from gpuspec.plan.waves import FLEET, Step, fleet_waves, rollout_steps

#: First line of every plan comment, so CI can find and update its previous comment.
COMMENT_MARKER = "<!-- gpuspec-plan -->"

_ICON = {
    Disruption.NONE: "⚪",
    Disruption.OPERAND_RESTART: "🟡",
    Disruption.DRIVER_RELOAD: "🔴",
    Disruption.MIG_REPARTITION: "🟣",
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
    links, emphasis, pipes) escaped; ``@`` cannot mention anyone.
    """
    if text is None or text == "":
        return "–"
    escaped = _MARKDOWN.sub(r"\\\1", _flat(text))
    return escaped.replace("<", "&lt;").replace("@", "@\u2060")


def code(text: str | None) -> str:
    """Text as an inline code span (nothing inside it is Markdown), or a dash when empty."""
    if not text:
        return "–"
    flat = _flat(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or longest else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def disruption(value: Disruption) -> str:
    """A disruption class with its icon."""
    return f"{_ICON[value]} {value.label}"


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
        return "cluster-wide" if change.cluster else "fleet-wide"
    return code(change.pool) + (" (canary)" if change.canary else "")


def render_markdown(plan: Plan) -> str:
    """The plan as a Markdown document for a pull-request comment."""
    out = [COMMENT_MARKER, "## gpuspec plan", ""]
    out.append(f"Base {code(plan.base_rev)} ({code(plan.base_commit[:12])}) → working tree: {cell(headline(plan))}.")
    if not plan.changes:
        return "\n".join(out) + "\n"
    steps = rollout_steps(plan)

    out += ["", "### Summary", "", "| Cluster | Fleet wave | Changes | Most disruptive | Pools |"]
    out.append("|---|---|---|---|---|")
    for wave, clusters in fleet_waves(steps).items():
        for cluster, cluster_steps in clusters.items():
            changes = [c for s in cluster_steps for c in s.changes]
            worst = max((c.disruption for c in changes), key=lambda d: d.rank)
            pools = list(dict.fromkeys(p for s in cluster_steps for p in s.pools))
            out.append(
                f"| {code(cluster)} | {wave} | {len(changes)} | {disruption(worst)} | "
                f"{', '.join(code(p) for p in pools) or '–'} |"
            )

    diagram = mermaid(steps)
    if diagram:
        out += ["", "### Rollout waves", "", "Disruptive steps in rollout order (canary first):", ""]
        out += diagram

    for wave, clusters in fleet_waves(steps).items():
        for cluster, cluster_steps in clusters.items():
            title = "Fleet-wide" if cluster == FLEET else f"Cluster {code(cluster)}"
            out += ["", f"### {title} (wave {wave})", ""]
            out += ["| Step | Where | Change | Disruption | Impact |", "|---|---|---|---|---|"]
            for number, step in enumerate(cluster_steps, start=1):
                for change in step.changes:
                    out.append(
                        f"| {number} | {_where(change)} | {cell(change.summary)} | {disruption(change.disruption)} | "
                        f"{cell(change.impact)} |"
                    )

    out += ["", "### Rollback notes", ""]
    for change in sorted(plan.changes, key=Change.sort_key):
        if change.disruption is Disruption.NONE:
            continue
        where = "/".join(p for p in (change.cluster, change.pool) if p)
        out.append(f"- **{cell(where or 'fleet')}** – {cell(change.summary)}: {cell(change.rollback)}")
    quiet = [c for c in plan.changes if c.disruption is Disruption.NONE]
    if quiet:
        out.append(f"- {len(quiet)} change(s) without disruption: revert the spec.")
    out += ["", "<sub>Generated by `gpuspec plan`. Disruption classes: ⚪ none · 🟡 operand restart · "
            "🔴 driver reload (GPU pods evicted, drain) · 🟣 MIG repartition (GPUs must be idle).</sub>"]
    return "\n".join(out) + "\n"
