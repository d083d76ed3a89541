"""`gpuspec deviations`: every deliberate deviation of the fleet, by cluster, with value, default and reason."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import click

from gpuspec import exitcodes
from gpuspec.cli.common import fleet_argument, policies_option, today_option
from gpuspec.cli.render_cmd import prepared_or_exit
from gpuspec.escaping import json_text, terminal
from gpuspec.model.fleet import Fleet
from gpuspec.templating import escape


def fleet_deviations(prepared_fleet: Fleet) -> dict[str, list[dict[str, Any]]]:
    """Cluster name → its deviation records (clusters without any are left out), in name order."""
    from gpuspec.render.context import cluster_context
    from gpuspec.render.deviations import deviation_records

    out: dict[str, list[dict[str, Any]]] = {}
    for cluster in sorted(prepared_fleet.clusters, key=lambda c: c.name):
        if not cluster.overrides and not any(p.driver_overrides for p in cluster.pools):
            continue
        ctx = cluster_context(prepared_fleet, cluster)
        records = deviation_records(cluster, ctx.facts, {d.pool.name for d in ctx.pool_drivers})
        if records:
            out[cluster.name] = records
    return out


def _value(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _default(record: dict[str, Any]) -> str:
    return _value(record["chartDefault"]) if record["defaultKnown"] else "unknown"


def _target(record: dict[str, Any]) -> str:
    return "chart values" if record["pool"] is None else f"NVIDIADriver of pool {record['pool']}"


def render_text(data: dict[str, list[dict[str, Any]]]) -> str:
    """Plain text, one block per deviation; every value from the spec is shown on its line (terminal-escaped)."""
    if not data:
        return "deviations: none (every rendered value is a gpuspec pin or a chart default)\n"
    t = terminal
    lines: list[str] = []
    for name, records in data.items():
        lines.append(f"{t(name)}: {len(records)} deviation(s)")
        for r in records:
            lines.append(f"  {t(r['path'])} ({t(_target(r))}) = {t(_value(r['value']))}")
            lines.append(f"    chart default: {t(_default(r))}")
            lines.append(f"    reason: {t(r['reason'])}")
            owner = r["owner"] or "-"
            lines.append(f"    owner: {t(owner)}" + (f", ticket: {t(r['ticket'])}" if r["ticket"] else ""))
            lines.append(f"    spec: {t(r['source']['file'])} ({t(str(r['source']['path']))})")
    return "\n".join(lines) + "\n"


def render_markdown(data: dict[str, list[dict[str, Any]]]) -> str:
    """A Markdown table per cluster (for a PR comment or a wiki), escaped as every gpuspec document is
    (:mod:`gpuspec.templating.escape`: no HTML, mention, link or line break from a value)."""
    if not data:
        return "No deliberate deviations in the fleet.\n"
    out = ["# Deliberate deviations", ""]
    for name, records in data.items():
        out += [f"## {escape.code(name)}", "", "| Path | Target | Value | Chart default | Reason | Owner | Ticket |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in records:
            out.append(" | ".join([
                f"| {escape.code(r['path'])}", escape.text(_target(r)), escape.code(_value(r["value"])),
                escape.code(_default(r)), escape.text(r["reason"]), escape.text(r["owner"] or ""),
                escape.text(r["ticket"] or ""),
            ]) + " |")
        out.append("")
    return "\n".join(out)


def _where(record: dict[str, Any]) -> str:
    """The spec path of an accepted finding, else the scope the exception or suppression covers."""
    return str(record.get("path") or record.get("scope") or "")


def _accepted_by(record: dict[str, Any]) -> str:
    """Where the exception (``file (exceptions.0)``) or the inline suppression (``file:12``) is written."""
    by = record.get("acceptedBy")
    if not by:
        return ""
    return f"{by['file']}:{by['line']}" if "line" in by else f"{by['file']} ({by['path']})"


def _kind(record: dict[str, Any]) -> str:
    return "inline suppression" if record.get("kind") == "suppression" else "policy exception"


def render_accepted_text(accepted: dict[str, list[dict[str, Any]]]) -> str:
    """Plain text of everything exceptions and inline suppressions accept, one block each (empty when none)."""
    t = terminal
    lines: list[str] = []
    for name, records in accepted.items():
        lines.append(f"{t(name)}: {len(records)} accepted finding(s)")
        for r in records:
            lines.append(f"  {t(r['rule'])} {t(_where(r))}: {t(r['message'])}")
            lines.append(f"    reason: {t(r['reason'])}")
            if r.get("kind") == "suppression":
                lines.append("    owner: none, expires: never (inline suppression)")
            else:
                lines.append(f"    owner: {t(str(r.get('owner', '-')))}, expires: {t(str(r.get('expires', '-')))}")
            if r.get("acceptedBy"):
                lines.append(f"    accepted by: {t(_kind(r))} {t(_accepted_by(r))}")
    return "\n".join(lines) + "\n" if lines else ""


def render_accepted_markdown(accepted: dict[str, list[dict[str, Any]]]) -> str:
    """A Markdown table per cluster of everything exceptions and inline suppressions accept (empty when none)."""
    if not accepted:
        return ""
    out = ["# Accepted findings", ""]
    for name, records in accepted.items():
        out += [f"## {escape.code(name)}", "",
                "| Finding | Where | What | Reason | Owner | Expires | Accepted by |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in records:
            where = escape.code(r["path"]) if r.get("path") else escape.text(_where(r))
            suppression = r.get("kind") == "suppression"
            out.append(" | ".join([
                f"| {escape.code(r['rule'])}", where, escape.text(r["message"]), escape.text(r["reason"]),
                "none (inline)" if suppression else escape.text(str(r.get("owner", ""))),
                "never" if suppression else escape.text(str(r.get("expires", ""))),
                escape.text(_kind(r)) + (" " + escape.code(_accepted_by(r)) if r.get("acceptedBy") else ""),
            ]) + " |")
        out.append("")
    return "\n".join(out)


@click.command("deviations")
@fleet_argument
@policies_option
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Output format.")
@today_option
def deviations_command(fleet_dir: Path, policies_dir: Path, output_format: str, today: date | None) -> None:
    """List every deliberate deviation of the fleet, by cluster.

    A deviation is a chart value (cluster `overrides`) or NVIDIADriver field (pool
    `driverOverrides`) set by hand: path, value, the chart's default, reason, owner
    and ticket. Everything the fleet accepts is listed after them: the findings
    policy exceptions accept (rule, scope, owner, expiry, reason), every other
    rule of a live exception, and every inline suppression with its reason.
    The fleet is validated first; errors exit 1, unusable input 2.
    """
    prepared = prepared_or_exit(fleet_dir, policies_dir, "deviations", render=False, today=today)
    fleet = prepared.validation.fleet
    assert fleet is not None
    data = fleet_deviations(fleet)
    accepted = {c.name: records for c in sorted(fleet.clusters, key=lambda c: c.name)
                if (records := prepared.validation.accepted_records(fleet, c.name))}
    if output_format == "json":
        doc: dict[str, Any] = {"clusters": data}
        if accepted:
            doc["accepted"] = accepted
        click.echo(json_text(doc, indent=2, sort_keys=True))
    elif output_format == "markdown":
        click.echo(render_markdown(data) + ("\n" + render_accepted_markdown(accepted) if accepted else ""), nl=False)
    else:
        click.echo(render_text(data) + render_accepted_text(accepted), nl=False)
    raise SystemExit(exitcodes.OK)
