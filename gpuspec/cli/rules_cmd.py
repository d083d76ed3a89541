"""`gpuspec rules` (the table of finding ids) and `gpuspec explain RULE` (one id's documentation and parameters)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from gpuspec.catalogue import CATALOGUE, POLICY_STAGES, suggest
from gpuspec.catalogue.entry import Entry, Param
from gpuspec.cli.common import policies_option
from gpuspec.errors import GpuspecError
from gpuspec.policy.custom import custom_entry
from gpuspec.policy.load import available_packs, load_policy


def _default(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def param_dict(param: Param) -> dict[str, Any]:
    """A parameter as JSON-ready data."""
    return {"name": param.name, "type": param.type.__name__, "default": _default(param.default),
            "description": param.description}


def configurable(entry: Entry) -> bool:
    """True when policy packs may enable, disable or re-rate ``entry`` (custom rules included)."""
    return (entry.stage in POLICY_STAGES or entry.stage == "custom") and not entry.input_error


def entry_dict(entry: Entry) -> dict[str, Any]:
    """An entry as JSON-ready data."""
    return {
        "id": entry.id, "title": entry.title, "severity": entry.severity.value, "stage": entry.stage,
        "tags": list(entry.tags), "rationale": entry.rationale, "doc": entry.documentation,
        "params": [param_dict(p) for p in entry.params], "configurable": configurable(entry),
        "helpUri": entry.help_url, "helpPage": entry.help_page, **({"source": entry.source} if entry.source else {}),
    }


def rules_table(entries: list[Entry]) -> str:
    """The id / severity / stage / title table of ``entries``."""
    width = max((len(e.id) for e in entries), default=5)
    stage = max((len(e.stage) for e in entries), default=5)
    rows = [f"{'ID':<{width}}  {'SEVERITY':<8}  {'STAGE':<{stage}}  TITLE"]
    rows.extend(f"{e.id:<{width}}  {e.severity.value:<8}  {e.stage:<{stage}}  {e.title}" for e in entries)
    return "\n".join(rows) + "\n"


def explain_text(entry: Entry) -> str:
    """The documentation page of one finding id, for terminals."""
    head = f"default severity: {entry.severity.value}    reported by: {entry.stage}"
    lines = [f"{entry.id}: {entry.title}", "", head + (f"    tags: {', '.join(entry.tags)}" if entry.tags else ""),
             "", f"why: {entry.rationale}", ""]
    if entry.documentation:
        lines.extend([entry.documentation, ""])
    if entry.source:
        lines.extend([f"source: {entry.source}", ""])
    if entry.params:
        lines.append("parameters (set in a policy pack under rules.<id>.params):")
        for p in entry.params:
            lines.append(f"  {p.name} ({p.type.__name__}, default {json.dumps(_default(p.default))})")
            lines.append(f"      {p.description}")
    elif configurable(entry):
        lines.append(f"parameters: none (enable it or change its severity under rules.{entry.id} in a policy pack)")
    else:
        lines.append("parameters: none (not configurable in policy packs)")
    lines.append(f"more: {entry.help_url or entry.help_page + ' of gpuspec'}")
    return "\n".join(lines) + "\n"


def custom_entries(policies_dir: Path) -> dict[str, Entry]:
    """The custom rules of every pack in ``policies_dir`` (none when it has no packs).

    A pack that does not load is an error: the same one lint would report.
    """
    if not policies_dir.is_dir():
        return {}
    policy = load_policy(policies_dir, available_packs(policies_dir))
    if not policy.usable:
        first = policy.findings[0]
        raise GpuspecError(f"policy packs in {policies_dir} do not load: {first.file}: {first.rule_id} "
                           f"{first.message}", hint="run gpuspec lint to see every problem")
    return {c.rule.id: custom_entry(c) for c in sorted(policy.custom_rules, key=lambda c: c.rule.id)}


def all_entries(policies_dir: Path) -> dict[str, Entry]:
    """Every finding id gpuspec reports plus the custom rules of the packs in ``policies_dir``."""
    return {**CATALOGUE, **custom_entries(policies_dir)}


def find_entry(rule_id: str, policies_dir: Path) -> Entry:
    """The entry of ``rule_id`` (catalogue or custom rule); GpuspecError with a did-you-mean when unknown."""
    wanted = rule_id.strip().upper()
    if wanted in CATALOGUE:
        return CATALOGUE[wanted]
    entries = all_entries(policies_dir)
    entry = entries.get(wanted)
    if entry is None:
        close = suggest(rule_id, list(entries))
        hint = f"did you mean {' or '.join(close)}?" if close else "gpuspec rules lists every rule id"
        raise GpuspecError(f"unknown rule {rule_id!r}", hint=hint)
    return entry


@click.command("rules")
@policies_option
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def rules_command(policies_dir: Path, output_format: str) -> None:
    """List every finding id gpuspec reports, and the custom rules of the policy packs: id, severity, stage, title."""
    entries = list(all_entries(policies_dir).values())
    if output_format == "json":
        click.echo(json.dumps([entry_dict(e) for e in entries], indent=2))
    else:
        click.echo(rules_table(entries), nl=False)


@click.command("explain")
@click.argument("rule_id", metavar="RULE")
@policies_option
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def explain_command(rule_id: str, policies_dir: Path, output_format: str) -> None:
    """Show one finding id's documentation: title, severity, rationale, examples and parameters."""
    entry = find_entry(rule_id, policies_dir)
    if output_format == "json":
        click.echo(json.dumps(entry_dict(entry), indent=2))
    else:
        click.echo(explain_text(entry), nl=False)
