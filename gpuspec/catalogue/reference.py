"""Markdown generated from the catalogue: the rule reference (docs/rules.md) and the per-area rule tables.

Every text here is data from the entries; nothing about a rule is written twice.  The sections are placed
between marker comments by :mod:`gpuspec.gendocs`, and a test keeps the committed files current.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpuspec.catalogue import AREAS, CATALOGUE
from gpuspec.catalogue.entry import Entry

#: Area name used in marker comments (``rule-table:<area>``) → its stage title, in catalogue order.
AREA_NAMES: dict[str, str] = {module.__name__.rsplit(".", 1)[1]: stage for stage, module in AREAS}


def _cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def area_entries(area: str) -> list[Entry]:
    """The entries of one catalogue area (``engine``, ``validate``, ``matrix``, ... ``verify``), by id."""
    if area not in AREA_NAMES:
        raise KeyError(f"unknown catalogue area {area!r} (known: {', '.join(AREA_NAMES)})")
    stage = AREA_NAMES[area]
    return [e for e in CATALOGUE.values() if e.stage == stage]


def _params_cell(entry: Entry) -> str:
    return ", ".join(f"`{p.name}` ({_cell(_value(p.default))})" for p in entry.params) or "—"


def rule_table(entries: Iterable[Entry], link: str = "rules.md") -> str:
    """A Markdown table of ``entries``: id (linked to its anchor in ``link``), title, default severity, and
    the parameters (with defaults) and NVIDIA source where any entry of the table has them."""
    rows_of = list(entries)
    with_params = any(e.params for e in rows_of)
    with_source = any(e.source for e in rows_of)
    head = ["id", "finding", "default severity"] + ["parameters (default)"] * with_params + ["source"] * with_source
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for e in rows_of:
        cells = [f"[{e.id}]({link}#{e.id.lower()})", _cell(e.title), e.severity.value + (" (exit 2)" * e.input_error)]
        if with_params:
            cells.append(_params_cell(e))
        if with_source:
            cells.append(_cell(e.source) or "—")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def area_summary(link: str = "docs/rules.md") -> str:
    """One row per catalogue area: its stage, id range and number of ids (the README's overview)."""
    rows = ["| area | ids | count |", "| --- | --- | --- |"]
    for area, stage in AREA_NAMES.items():
        ids = [e.id for e in area_entries(area)]
        rows.append(f"| [{stage}]({link}#{area}) | {ids[0]}–{ids[-1]} | {len(ids)} |")
    return "\n".join(rows) + "\n"


def entry_section(entry: Entry) -> str:
    """The reference section of one id: anchor, title, severity, stage, rationale, documentation, parameters."""
    out = [f'<a id="{entry.id.lower()}"></a>', f"### {entry.id}: {entry.title}", ""]
    facts = [f"**Severity:** {entry.severity.value}", f"**Stage:** {entry.stage}"]
    if entry.input_error:
        facts.append("**Input error:** the run stops with exit code 2")
    if entry.tags:
        facts.append("**Tags:** " + ", ".join(entry.tags))
    out += ["  \n".join(facts), "", entry.rationale, ""]
    if entry.documentation:
        out += [entry.documentation, ""]
    if entry.params:
        out += ["| parameter | type | default | meaning |", "| --- | --- | --- | --- |"]
        out += [
            f"| `{p.name}` | {p.type.__name__} | `{_cell(_value(p.default))}` | {_cell(p.description)} |"
            for p in entry.params
        ]
        out.append("")
    if entry.source:
        out += [f"Source: {entry.source}", ""]
    return "\n".join(out)


def rules_reference() -> str:
    """The whole rule reference: per area a heading with its table, then every id's section."""
    out: list[str] = []
    for area, stage in AREA_NAMES.items():
        entries = area_entries(area)
        out += [f'<a id="{area}"></a>', f"## {stage[0].upper()}{stage[1:]} ({entries[0].id}–{entries[-1].id})", ""]
        out += [rule_table(entries, link=""), ""]
        out += [entry_section(e) for e in entries]
    return "\n".join(out).rstrip() + "\n"
