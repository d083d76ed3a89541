"""README.md and docs/*.md: the generated sections (spec reference, rule reference, rule tables) are current."""

from __future__ import annotations

import re
from pathlib import Path

from gpuspec import gendocs
from gpuspec.catalogue import CATALOGUE
from gpuspec.catalogue.entry import RULES_PAGE
from gpuspec.catalogue.reference import AREA_NAMES

REPO = Path(__file__).resolve().parent.parent
_GENERATED = re.compile(r"<!-- ([a-z][a-z0-9:-]*):start -->.*?<!-- \1:end -->", re.DOTALL)


def _all_sections() -> dict[str, list[str]]:
    return {path.name: gendocs.sections(path.read_text(encoding="utf-8")) for path in gendocs.documents(REPO)}


def test_generated_sections_are_current() -> None:
    stale = [str(p.relative_to(REPO)) for p in gendocs.stale(REPO)]
    assert stale == [], "run: python -m gpuspec.gendocs"


def test_a_changed_catalogue_makes_the_docs_stale() -> None:
    text = (REPO / "docs" / "verify.md").read_text(encoding="utf-8")
    edited = text.replace("chart could not be pulled", "chart could not be fetched", 1)
    assert edited != text
    assert gendocs.regenerate(edited) == text


def test_rule_reference_has_an_anchor_per_id() -> None:
    assert RULES_PAGE == "docs/rules.md"
    text = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    anchors = re.findall(r'<a id="(gs\d{3})"></a>', text)
    assert anchors == [i.lower() for i in CATALOGUE]
    for entry in CATALOGUE.values():
        assert entry.help_page == f"docs/rules.md#{entry.id.lower()}"
        assert f"### {entry.id}: {entry.title}" in text


def test_every_area_has_a_table_and_each_reference_one_home() -> None:
    found = [name for names in _all_sections().values() for name in names]
    assert sorted(n.split(":", 1)[1] for n in found if n.startswith("rule-table:")) == sorted(AREA_NAMES)
    assert _all_sections()["spec.md"].count("spec-reference") == 1 and found.count("spec-reference") == 1
    assert found.count("rules-reference") == 1 and "rules-reference" in _all_sections()["rules.md"]


def test_no_hand_written_rule_tables() -> None:
    for path in gendocs.documents(REPO):
        outside = _GENERATED.sub("", path.read_text(encoding="utf-8"))
        rows = [line for line in outside.splitlines() if re.match(r"\|\s*\[?`?GS\d", line)]
        assert rows == [], f"{path.name}: a hand-written rule table; use <!-- rule-table:AREA:start/end --> markers"


def test_readme_is_a_front_door() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert "bash scripts/demo" in readme and "bash scripts/test" in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO / link).is_file(), link
