"""The gate's report as text, JSON and Markdown: the evidence a promotion pull request links."""

from __future__ import annotations

import json
from typing import Any

from gpuspec.acceptance.output import check_data, markdown_table
from gpuspec.escaping import terminal
from gpuspec.gate.evidence import Criterion, GateResult
from gpuspec.templating.escape import code, text

#: Formats the report is written in.
FORMATS = ("text", "json", "markdown")


def _scope(result: GateResult) -> str:
    return f"pool {result.pool} of cluster {result.cluster}" if result.pool else f"cluster {result.cluster}"


def verdict(result: GateResult) -> str:
    """One sentence: the scope runs the spec, or how many criteria do not hold."""
    if result.passed:
        return f"{_scope(result)} runs the spec of this revision"
    failing = result.failures()
    missing = sum(1 for _, c in failing if c.verdict.value == "no-evidence")
    extra = f", {missing} without evidence" if missing else ""
    return f"{_scope(result)} does not run the spec: {len(failing)} criteria not met{extra}"


def _criterion_lines(scope: str, criterion: Criterion) -> list[str]:
    mark = {"pass": "ok", "fail": "FAIL", "no-evidence": "NO EVIDENCE"}[criterion.verdict.value]
    lines = [f"  {terminal(scope)}  {criterion.name:<13} {mark:<11} {terminal(criterion.summary)}"]
    lines += [f"      - {terminal(d)}" for d in criterion.details]
    return lines


def to_text(result: GateResult) -> str:
    """The report as text: every criterion per scope, with the facts of those that do not hold."""
    lines = [f"gate: {terminal(_scope(result))}, rendered revision {result.revision or 'unknown'}"]
    width = max([len("cluster")] + [len(p.pool) for p in result.pools])
    for criterion in result.cluster_criteria:
        lines += _criterion_lines("cluster".ljust(width), criterion)
    for pool in result.pools:
        for criterion in pool.criteria:
            lines += _criterion_lines(pool.pool.ljust(width), criterion)
    if result.unmanaged:
        lines.append(f"  not gated (managed: false): {terminal(', '.join(result.unmanaged))}")
    lines.append(("PASSED: " if result.passed else "FAILED: ") + terminal(verdict(result)))
    return "\n".join(lines) + "\n"


def _criterion_data(criterion: Criterion) -> dict[str, Any]:
    return {"name": criterion.name, "verdict": criterion.verdict.value, "passed": criterion.passed,
            "summary": criterion.summary, "details": list(criterion.details)}


def report_data(result: GateResult) -> dict[str, Any]:
    """The report as plain data."""
    return {
        "cluster": result.cluster, "pool": result.pool, "revision": result.revision, "passed": result.passed,
        "summary": verdict(result), "unmanagedPools": list(result.unmanaged),
        "clusterCriteria": [_criterion_data(c) for c in result.cluster_criteria],
        "pools": [{"pool": p.pool, "passed": p.passed, "nodes": list(p.nodes), "targetDriver": p.target_driver,
                   "criteria": [_criterion_data(c) for c in p.criteria]} for p in result.pools],
        "acceptance": None if result.acceptance is None else [
            check_data(c) for c in result.acceptance.checks if any(c.pool == p.pool for p in result.pools)],
    }


def to_json(result: GateResult) -> str:
    """The report as JSON (sorted keys, two-space indent)."""
    return json.dumps(report_data(result), indent=2, sort_keys=True) + "\n"


def to_markdown(result: GateResult) -> str:
    """The report as Markdown: the verdict, a table of criteria, the facts of those that fail, the acceptance table."""
    mark = "✅" if result.passed else "❌"
    lines = [f"### Promotion gate: {text(_scope(result))}", "", f"{mark} {text(verdict(result))}.", "",
             f"Rendered revision: {code(result.revision or 'unknown')}.", "",
             "| scope | criterion | verdict | summary |", "| --- | --- | --- | --- |"]
    rows = [("cluster", c) for c in result.cluster_criteria] + [(p.pool, c) for p in result.pools for c in p.criteria]
    for scope, c in rows:
        shown = c.verdict.value if c.passed else f"**{c.verdict.value}**"
        lines.append(f"| {text(scope)} | {text(c.name)} | {shown} | {text(c.summary)} |")
    lines.append("")
    for scope, c in result.failures():
        lines.append(f"- {text(scope)} / {text(c.name)}: " + ("; ".join(text(d) for d in c.details) or text(c.summary)))
    if result.failures():
        lines.append("")
    if result.unmanaged:
        lines += [f"Not gated (`managed: false`, not the rollout's): {text(', '.join(result.unmanaged))}.", ""]
    if result.acceptance is not None:
        checks = [c for c in result.acceptance.checks if any(c.pool == p.pool for p in result.pools)]
        if checks:
            lines += ["Acceptance checks of this revision:", "", *markdown_table(checks), ""]
    return "\n".join(lines)


def render(result: GateResult, output_format: str) -> str:
    """The report in ``output_format`` (one of :data:`FORMATS`)."""
    if output_format == "json":
        return to_json(result)
    if output_format == "markdown":
        return to_markdown(result)
    return to_text(result)
