"""`gpuspec rules` (the rule table) and `gpuspec explain RULE` (one rule's documentation and parameters)."""

from __future__ import annotations

import json
from typing import Any

import click

from gpuspec.errors import GpuspecError
from gpuspec.rules.base import Param, Rule
from gpuspec.rules.registry import RULES, get_rule, rule_doc_text, suggest


def _default(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def param_dict(param: Param) -> dict[str, Any]:
    """A rule parameter as JSON-ready data."""
    return {"name": param.name, "type": param.type.__name__, "default": _default(param.default),
            "description": param.description}


def rule_dict(rule: type[Rule]) -> dict[str, Any]:
    """A rule's metadata as JSON-ready data."""
    return {
        "id": rule.id, "title": rule.title, "severity": rule.severity.value, "tags": list(rule.tags),
        "rationale": rule.rationale, "doc": rule_doc_text(rule), "params": [param_dict(p) for p in rule.params],
    }


def rules_table(rules: list[type[Rule]]) -> str:
    """The id / severity / title table of ``rules``."""
    width = max((len(r.id) for r in rules), default=5)
    rows = [f"{'ID':<{width}}  {'SEVERITY':<8}  TITLE"]
    rows.extend(f"{r.id:<{width}}  {r.severity.value:<8}  {r.title}" for r in rules)
    return "\n".join(rows) + "\n"


def explain_text(rule: type[Rule]) -> str:
    """The documentation page of one rule, for terminals."""
    lines = [f"{rule.id}: {rule.title}", "",
             f"default severity: {rule.severity.value}" + (f"    tags: {', '.join(rule.tags)}" if rule.tags else ""),
             "", f"why: {rule.rationale}", "", rule_doc_text(rule), ""]
    if rule.params:
        lines.append("parameters (set in a policy pack under rules.<id>.params):")
        for p in rule.params:
            lines.append(f"  {p.name} ({p.type.__name__}, default {json.dumps(_default(p.default))})")
            lines.append(f"      {p.description}")
    else:
        lines.append("parameters: none")
    return "\n".join(lines) + "\n"


def find_rule(rule_id: str) -> type[Rule]:
    """The rule with ``rule_id``; raise GpuspecError with a did-you-mean when there is none."""
    rule = get_rule(rule_id)
    if rule is None:
        close = suggest(rule_id)
        hint = f"did you mean {' or '.join(close)}?" if close else "gpuspec rules lists every rule id"
        raise GpuspecError(f"unknown rule {rule_id!r}", hint=hint)
    return rule


@click.command("rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def rules_command(output_format: str) -> None:
    """List every rule gpuspec knows: id, default severity and title."""
    rules = list(RULES.values())
    if output_format == "json":
        click.echo(json.dumps([rule_dict(r) for r in rules], indent=2))
    else:
        click.echo(rules_table(rules), nl=False)


@click.command("explain")
@click.argument("rule_id", metavar="RULE")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def explain_command(rule_id: str, output_format: str) -> None:
    """Show one rule's documentation: title, severity, rationale, examples and parameters."""
    rule = find_rule(rule_id)
    if output_format == "json":
        click.echo(json.dumps(rule_dict(rule), indent=2))
    else:
        click.echo(explain_text(rule), nl=False)
