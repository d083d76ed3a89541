"""Every note of the support-matrix data is read by a rule or marked informational (notes-ledger.yaml)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from gpuspec.catalogue import CATALOGUE
from gpuspec.matrix import component_query

DATA = Path(__file__).resolve().parents[2] / "gpuspec" / "matrix" / "data"
LEDGER = DATA / "notes-ledger.yaml"
_NOTE_KEY = re.compile(r"(^|_)notes?$|_note$")


def _notes(node: Any, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            here = (*path, str(key))
            if _NOTE_KEY.search(str(key)):
                items = value if isinstance(value, list) else [value]
                suffix = "[]" if isinstance(value, list) else ""
                for item in items:
                    yield ".".join(here) + suffix, str(item)
            else:
                yield from _notes(value, here)
    elif isinstance(node, list):
        for item in node:
            yield from _notes(item, (*path, "[]"))


def all_notes() -> list[tuple[str, str]]:
    """(file:path, text) of every note in gpuspec/matrix/data."""
    out = []
    for file in sorted(DATA.rglob("*.yaml")):
        if file == LEDGER:
            continue
        name = str(file.relative_to(DATA))
        out += [(f"{name}:{path}", text) for path, text in _notes(yaml.safe_load(file.read_text()), ())]
    return out


def _ledger() -> list[dict[str, str]]:
    entries = yaml.safe_load(LEDGER.read_text())["notes"]
    assert isinstance(entries, list)
    return entries


def _matches(entry: dict[str, str], where: str, text: str) -> bool:
    pattern = "^" + ".*".join(re.escape(p) for p in entry["path"].split("*")) + "$"
    return re.match(pattern, where) is not None and entry.get("text", "") in text


def test_every_note_is_read_by_a_rule_or_informational() -> None:
    ledger = _ledger()
    notes = all_notes()
    assert len(notes) > 400
    missing = [f"{where}: {text[:80]}" for where, text in notes if not any(_matches(e, where, text) for e in ledger)]
    assert not missing, "notes without a ledger entry:\n" + "\n".join(missing)


def test_ledger_entries_name_real_rules_and_are_used() -> None:
    notes = all_notes()
    for entry in _ledger():
        assert ("rule" in entry) != ("informational" in entry), entry
        if "rule" in entry:
            assert entry["rule"] in CATALOGUE and entry.get("via"), entry
        assert any(_matches(entry, w, t) for w, t in notes), f"ledger entry matches no note: {entry}"


def test_restricting_notes_are_errors_through_known_issues() -> None:
    """The RHEL 9 x86-only note is a restricting known issue for every release whose line carries it."""
    restricting = [e for e in _ledger() if e.get("rule") == "GS224"]
    assert restricting
    issues = {i.id: i for i in component_query.known_issues("26.7.0")}
    issue = issues["rhel9-driver-container-x86-only"]
    assert issue.restricts and issue.when.grace and issue.when.os == "rhel"
    assert "rhel9-driver-container-x86-only" not in {i.id for i in component_query.known_issues("25.3.0")}
