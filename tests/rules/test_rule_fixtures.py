"""Every rule has a failing and a passing fixture: exact rule id and line:column on the failing one."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuspec.catalogue import CATALOGUE
from gpuspec.rules.registry import RULES
from rules.harness import FIXTURES, build_fleet, lint, where

RULE_IDS = sorted(d.name for d in FIXTURES.iterdir() if d.is_dir() and not d.name.startswith("_"))


def test_every_pack_rule_has_fixtures() -> None:
    checked = {rule_id for rule_id in RULES if rule_id[2] in "4567"}
    assert checked <= set(RULE_IDS)
    for rule_id in RULE_IDS:
        assert (FIXTURES / rule_id / "fail" / "expect.yaml").is_file()
        assert (FIXTURES / rule_id / "pass").is_dir()


def test_base_fleet_is_clean(tmp_path: Path) -> None:
    result = lint(build_fleet(tmp_path))
    assert result.usable
    assert [f for f in result.findings if f.rule_id[2] in "04567"] == []


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_failing_fixture(rule_id: str, tmp_path: Path) -> None:
    fleet = build_fleet(tmp_path, FIXTURES / rule_id / "fail")
    result = lint(fleet)
    assert result.usable, [f.message for f in result.findings]
    expected = [tuple(row) for row in yaml.safe_load((FIXTURES / rule_id / "fail" / "expect.yaml").read_text())]
    got = [where(f, fleet)[1:] for f in result.findings if f.rule_id == rule_id]
    assert got == expected
    assert all(f.severity == CATALOGUE[rule_id].severity for f in result.findings if f.rule_id == rule_id)


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_passing_fixture(rule_id: str, tmp_path: Path) -> None:
    fleet = build_fleet(tmp_path, FIXTURES / rule_id / "pass")
    result = lint(fleet)
    assert result.usable, [f.message for f in result.findings]
    assert [f for f in result.findings if f.rule_id == rule_id] == []
