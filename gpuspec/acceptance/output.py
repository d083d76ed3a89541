"""The acceptance report as text (terminal), JSON (machines, deterministic) and Markdown (a PR, the handover)."""

from __future__ import annotations

import json
from typing import Any

from gpuspec.acceptance.report import AcceptanceReport, CheckResult, OtherJob, PodResult
from gpuspec.escaping import terminal
from gpuspec.templating.escape import code, text

#: Formats the report is written in.
FORMATS = ("text", "json", "markdown")


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _readiness(check: CheckResult) -> str:
    measured = _seconds(check.seconds_to_ready)
    if check.budget_seconds is None:
        return measured
    return f"{measured} / {check.budget_seconds} s"


def _bandwidth(check: CheckResult) -> str:
    if check.busbw_gbps is None and check.min_busbw_gbps is None:
        return "-"
    have = "-" if check.busbw_gbps is None else f"{check.busbw_gbps:g}"
    floor = "" if check.min_busbw_gbps is None else f" / {check.min_busbw_gbps:g}"
    return f"{have}{floor} GB/s"


def _nodes(check: CheckResult) -> str:
    return ", ".join(check.nodes) or "-"


def verdict(report: AcceptanceReport) -> str:
    """One sentence: passed, or how many checks did not pass."""
    if not report.checks:
        return "no acceptance checks are rendered for this cluster"
    bad = [c for c in report.checks if not c.passed]
    if not bad:
        return f"all {len(report.checks)} checks of this revision passed"
    counts = ", ".join(f"{n} {s}" for s, n in report.counts().items() if n and s != "passed")
    return f"{len(bad)} of {len(report.checks)} checks did not pass ({counts})"


def _revision(report: AcceptanceReport) -> str:
    return report.digest or "unknown (no acceptance Jobs rendered)"


def to_text(report: AcceptanceReport) -> str:
    """The report as aligned text columns, one line per check, then the reasons of checks that did not pass."""
    lines = [f"acceptance of cluster {terminal(report.cluster)}: rendered revision {_revision(report)}",
             f"export: {terminal(report.export)}"]
    header = ("POOL", "CHECK", "STATUS", "READY/BUDGET", "BUSBW", "JOB", "NODES")
    cells = [header] + [(c.pool, c.check, c.status.value, _readiness(c), _bandwidth(c), c.job, _nodes(c))
                        for c in report.checks]
    rows = [tuple(terminal(cell) for cell in row) for row in cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    if report.checks:
        lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1]
                  for row in rows]
    for check in report.checks:
        if not check.passed:
            lines.append(f"  {terminal(check.pool)}/{terminal(check.check)}: {check.status.value}: "
                         f"{terminal(check.reason)}")
    for other in report.unexpected:
        lines.append(f"  not in the rendered revision: Job {terminal(other.name)} (pool {terminal(other.pool)}, "
                     f"check {terminal(other.check)}, {other.status.value})")
    lines.append(("PASSED: " if report.passed else "FAILED: ") + verdict(report))
    return "\n".join(lines) + "\n"


def _pod_data(pod: PodResult) -> dict[str, Any]:
    return {"name": pod.name, "node": pod.node, "phase": pod.phase, "secondsToReady": pod.seconds_to_ready,
            "busbwGbps": pod.busbw_gbps, "problem": pod.problem}


def _other_data(other: OtherJob) -> dict[str, Any]:
    return {"job": other.name, "pool": other.pool, "check": other.check, "revision": other.revision,
            "status": other.status.value, "reason": other.reason}


def check_data(check: CheckResult) -> dict[str, Any]:
    """One check as plain data (the JSON report, the gate's report)."""
    return {
        "pool": check.pool, "check": check.check, "job": check.job, "revision": check.revision,
        "status": check.status.value, "passed": check.passed, "reason": check.reason,
        "secondsToReady": check.seconds_to_ready, "budgetSeconds": check.budget_seconds,
        "withinBudget": check.within_budget, "busbwGbps": check.busbw_gbps, "minBusbwGbps": check.min_busbw_gbps,
        "nodes": list(check.nodes), "pods": [_pod_data(p) for p in check.pods],
        "olderRevisions": [_other_data(o) for o in check.older],
    }


def report_data(report: AcceptanceReport) -> dict[str, Any]:
    """The report as plain data."""
    return {
        "cluster": report.cluster, "revision": report.digest, "export": report.export, "passed": report.passed,
        "summary": verdict(report), "counts": report.counts(),
        "checks": [check_data(c) for c in report.checks],
        "notInRenderedRevision": [_other_data(o) for o in report.unexpected],
    }


def to_json(report: AcceptanceReport) -> str:
    """The report as JSON (sorted keys, two-space indent)."""
    return json.dumps(report_data(report), indent=2, sort_keys=True) + "\n"


def markdown_table(checks: list[CheckResult]) -> list[str]:
    """The checks as a Markdown table (one row per check)."""
    lines = ["| pool | check | status | time to readiness / budget | bus bandwidth / floor | nodes | Job |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in checks:
        status = f"**{c.status.value}**" if not c.passed else c.status.value
        lines.append(f"| {text(c.pool)} | {text(c.check)} | {status} | {text(_readiness(c))} | "
                     f"{text(_bandwidth(c))} | {text(_nodes(c))} | {code(c.job)} |")
    return lines


def to_markdown(report: AcceptanceReport) -> str:
    """The report as Markdown: a verdict, a table of checks, the reasons of those that did not pass."""
    mark = "✅" if report.passed else "❌"
    lines = [f"### Acceptance of cluster {code(report.cluster)}", "",
             f"{mark} {text(verdict(report))}.", "",
             f"Rendered revision: {code(_revision(report))}; export: {code(report.export)}.", ""]
    if report.checks:
        lines += [*markdown_table(list(report.checks)), ""]
    failing = [c for c in report.checks if not c.passed]
    if failing:
        lines += [f"- {text(c.pool)} / {text(c.check)} ({c.status.value}): {text(c.reason)}" for c in failing]
        lines.append("")
    if report.unexpected:
        lines += ["Jobs not in the rendered revision:", ""]
        lines += [f"- {code(o.name)} (pool {text(o.pool)}, check {text(o.check)}, {o.status.value})"
                  for o in report.unexpected]
        lines.append("")
    return "\n".join(lines)


def render(report: AcceptanceReport, output_format: str) -> str:
    """The report in ``output_format`` (one of :data:`FORMATS`)."""
    if output_format == "json":
        return to_json(report)
    if output_format == "markdown":
        return to_markdown(report)
    return to_text(report)
