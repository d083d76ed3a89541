"""`gpuspec rules` (the rule table) and `gpuspec explain RULE` (one rule's documentation and parameters)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from gpuspec.catalog import all_rule_docs, stage_of
from gpuspec.cli.common import policies_option
from gpuspec.errors import GpuspecError
from gpuspec.policy.custom import custom_rule_doc
from gpuspec.policy.load import available_packs, load_policy
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
    stage = stage_of(doc.rule_id)
    settings = (f"enable it or change its severity under rules.{doc.rule_id} in a policy pack" if stage == "custom"
                else "not configurable in policy packs")
    return (f"{doc.rule_id}: {doc.title}\n\ndefault severity: {doc.severity}    reported by: {stage}\n\n"
            f"{doc.help}\n\nparameters: none ({settings})\n")


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


def custom_docs(policies_dir: Path) -> dict[str, RuleDoc]:
    """Documentation of the custom rules of every pack in ``policies_dir`` (none when it has no packs).

    A pack that does not load is an error: the same one lint would report.
    """
    if not policies_dir.is_dir():
        return {}
    policy = load_policy(policies_dir, available_packs(policies_dir))
    if not policy.usable:
        first = policy.findings[0]
        raise GpuspecError(f"policy packs in {policies_dir} do not load: {first.file}: {first.rule_id} "
                           f"{first.message}", hint="run gpuspec lint to see every problem")
    return {c.rule.id: custom_rule_doc(c) for c in sorted(policy.custom_rules, key=lambda c: c.rule.id)}


def catalog(policies_dir: Path) -> dict[str, RuleDoc]:
    """Every finding id gpuspec reports plus the custom rules of the packs in ``policies_dir``."""
    return {**all_rule_docs(), **custom_docs(policies_dir)}


def find_doc(rule_id: str, policies_dir: Path) -> type[Rule] | RuleDoc:
    """The rule class (policy rules) or documentation (other finding ids, custom rules) of ``rule_id``.

    Raise GpuspecError with a did-you-mean when gpuspec has no such id.
    """
    rule = get_rule(rule_id)
    if rule is not None:
        return rule
    docs = catalog(policies_dir)
    doc = docs.get(rule_id.strip().upper())
    if doc is None:
        close = suggest(rule_id, list(docs))
        hint = f"did you mean {' or '.join(close)}?" if close else "gpuspec rules lists every rule id"
        raise GpuspecError(f"unknown rule {rule_id!r}", hint=hint)
    return doc


@click.command("rules")
@policies_option
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def rules_command(policies_dir: Path, output_format: str) -> None:
    """List every finding id gpuspec reports, and the custom rules of the policy packs: id, severity, stage, title."""
    docs = list(catalog(policies_dir).values())
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
@policies_option
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def explain_command(rule_id: str, policies_dir: Path, output_format: str) -> None:
    """Show one rule's documentation: title, severity, rationale, examples and parameters."""
    found = find_doc(rule_id, policies_dir)
    if isinstance(found, RuleDoc):
        click.echo(json.dumps(doc_dict(found), indent=2) if output_format == "json" else explain_doc_text(found),
                   nl=output_format == "json")
    elif output_format == "json":
        click.echo(json.dumps(rule_dict(found), indent=2))
    else:
        click.echo(explain_text(found), nl=False)
