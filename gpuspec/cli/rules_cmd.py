"""`gpuspec rules` (the rule table) and `gpuspec explain RULE` (one rule's documentation and parameters)."""

from __future__ import annotations

import json
from typing import Any

import click

from gpuspec.catalog import all_rule_docs, stage_of
from gpuspec.errors import GpuspecError
from gpuspec.report.base import RuleDoc
from gpuspec.rules.base import Param, Rule
from gpuspec.rules.registry import get_rule, rule_doc_text, suggest


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


def doc_dict(doc: RuleDoc) -> dict[str, Any]:
    """A finding id that is not a policy rule (validate, audit, verify) as JSON-ready data."""
    return {"id": doc.rule_id, "title": doc.title, "severity": doc.severity, "stage": stage_of(doc.rule_id),
            "doc": doc.help, "params": []}


def rules_table(docs: list[RuleDoc]) -> str:
    """The id / severity / stage / title table of ``docs``."""
    width = max((len(d.rule_id) for d in docs), default=5)
    stage = max((len(stage_of(d.rule_id)) for d in docs), default=5)
    rows = [f"{'ID':<{width}}  {'SEVERITY':<8}  {'STAGE':<{stage}}  TITLE"]
    rows.extend(f"{d.rule_id:<{width}}  {d.severity:<8}  {stage_of(d.rule_id):<{stage}}  {d.title}" for d in docs)
    return "\n".join(rows) + "\n"


def explain_doc_text(doc: RuleDoc) -> str:
    """The documentation page of a finding id that is not a policy rule."""
    return (f"{doc.rule_id}: {doc.title}\n\ndefault severity: {doc.severity}    reported by: "
            f"{stage_of(doc.rule_id)}\n\n{doc.help}\n\nparameters: none (not configurable in policy packs)\n")


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


def find_doc(rule_id: str) -> type[Rule] | RuleDoc:
    """The rule class (policy rules) or documentation (other finding ids) of ``rule_id``.

    Raise GpuspecError with a did-you-mean when gpuspec has no such id.
    """
    rule = get_rule(rule_id)
    if rule is not None:
        return rule
    docs = all_rule_docs()
    doc = docs.get(rule_id.strip().upper())
    if doc is None:
        close = suggest(rule_id, list(docs))
        hint = f"did you mean {' or '.join(close)}?" if close else "gpuspec rules lists every rule id"
        raise GpuspecError(f"unknown rule {rule_id!r}", hint=hint)
    return doc


@click.command("rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def rules_command(output_format: str) -> None:
    """List every finding id gpuspec reports: id, default severity, stage and title."""
    docs = list(all_rule_docs().values())
    if output_format == "json":
        entries = []
        for doc in docs:
            rule = get_rule(doc.rule_id)
            entries.append({**rule_dict(rule), "stage": stage_of(doc.rule_id)} if rule else doc_dict(doc))
        click.echo(json.dumps(entries, indent=2))
    else:
        click.echo(rules_table(docs), nl=False)


@click.command("explain")
@click.argument("rule_id", metavar="RULE")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def explain_command(rule_id: str, output_format: str) -> None:
    """Show one rule's documentation: title, severity, rationale, examples and parameters."""
    found = find_doc(rule_id)
    if isinstance(found, RuleDoc):
        click.echo(json.dumps(doc_dict(found), indent=2) if output_format == "json" else explain_doc_text(found),
                   nl=output_format == "json")
    elif output_format == "json":
        click.echo(json.dumps(rule_dict(found), indent=2))
    else:
        click.echo(explain_text(found), nl=False)
