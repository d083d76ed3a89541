"""The upgrade plan as text (terminals), JSON (tools) and Markdown (an issue or pull-request description)."""

from __future__ import annotations

import json

from gpuspec.escaping import terminal
from gpuspec.pipeline.upgrade.model import Step, UpgradePlan
from gpuspec.templating.escape import code
from gpuspec.templating.escape import text as markdown_text


def _duration(step: Step) -> str | None:
    return step.duration_text


def render_text(plan: UpgradePlan) -> str:
    """The plan for a terminal: one numbered block per step, or the constraint that blocks every path."""
    t = terminal
    lines = [f"gpuspec upgrade: {', '.join(plan.selection.clusters)} to {plan.target.words()}"]
    if plan.blocker is not None:
        lines.append("no path: every next step fails a rule " + t(plan.blocker.reached))
        for move, findings in plan.blocker.moves:
            lines.append(f"  - {t(move)}")
            lines += [f"      {t(f)}" for f in findings]
        lines += [f"  to open a path: {t(o)}" for o in plan.blocker.options]
        return "\n".join(lines) + "\n"
    if not plan.steps:
        lines.append("nothing to do: the selected clusters run the target")
        return "\n".join(lines) + "\n"
    lines.append(f"{len(plan.steps)} step(s), one pull request each; apply one with `{t(plan.command())} --apply N`")
    for step in plan.steps:
        lines += ["", f"{step.number}. {t(step.title)}", f"   disruption: {t(step.disruption)}"]
        duration = _duration(step)
        if duration:
            lines.append(f"   duration:   {t(duration)} (worst case)")
            lines += [f"   window:     {t(w)}" for w in step.windows]
        lines.append("   edits:")
        lines += [f"     {t(e.text())}" for e in step.edits]
        if step.changes:
            lines.append("   changes:")
            lines += [
                f"     {t(c.cluster or '(fleet)')}{'/' + t(c.pool) if c.pool else ''}: {t(c.summary)} "
                f"({t(c.disruption)})"
                for c in step.changes
            ]
        if step.nodes:
            lines.append("   nodes:      " + "; ".join(t(n) for n in step.nodes))
        lines += [f"   before:     {t(b)}" for b in step.before]
        lines += [f"   after:      {t(a)}" for a in step.after]
        lines += [f"   warning:    {t(w)}" for w in step.warnings]
    lines += ["", *(f"note: {t(n)}" for n in plan.notes)] if plan.notes else []
    return "\n".join(lines) + "\n"


def render_json(plan: UpgradePlan) -> str:
    """The plan as JSON (sorted keys, two-space indent)."""
    return json.dumps(plan.to_json(), indent=2, sort_keys=True) + "\n"


def render_markdown(plan: UpgradePlan) -> str:
    """The plan as Markdown: a table of the steps, then each step's edits and conditions."""
    m = markdown_text
    out = [f"## Upgrade plan: {m(', '.join(plan.selection.clusters))} to {m(plan.target.words())}", ""]
    if plan.blocker is not None:
        out += [f"**No path**: every next step fails a rule {m(plan.blocker.reached)}.", ""]
        for move, findings in plan.blocker.moves:
            out.append(f"- {m(move)}")
            out += [f"  - {m(f)}" for f in findings]
        out += [f"- To open a path: {m(o)}" for o in plan.blocker.options]
        return "\n".join(out) + "\n"
    if not plan.steps:
        return "\n".join([*out, "Nothing to do: the selected clusters run the target.", ""])
    with_duration = any(s.duration_seconds is not None for s in plan.steps)
    head = "| step | change | disruption | nodes |" + (" duration |" if with_duration else "")
    out += [
        f"{code(plan.command())}: one pull request per step.",
        "",
        head,
        "| --- | --- | --- | --- |" + (" --- |" if with_duration else ""),
    ]
    for step in plan.steps:
        row = f"| {step.number} | {m(step.title)} | {m(step.disruption)} | {m('; '.join(step.nodes) or '-')} |"
        if with_duration:
            row += f" {m(_duration(step) or '-')} |"
        out.append(row)
    for step in plan.steps:
        out += ["", f"### Step {step.number}: {m(step.title)}", ""]
        out += [
            f"- edit {code(e.file)}: {code(e.shown)} {code(e.before) if e.before is not None else '(absent)'} → "
            f"{code(e.value) if e.value is not None else '(removed)'}"
            for e in step.edits
        ]
        if step.duration_text:
            out.append(f"- duration: {m(step.duration_text)} (worst case)" + "".join(f"; {m(w)}" for w in step.windows))
        out += [f"- before: {m(b)}" for b in step.before]
        out += [f"- after: {m(a)}" for a in step.after]
        out += [f"- warning: {m(w)}" for w in step.warnings]
    if plan.notes:
        out += ["", *(f"- note: {m(n)}" for n in plan.notes)]
    return "\n".join(out) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "markdown": render_markdown}
