"""Policy packs: extends, settings, asOf, and every mistake in a pack reported at file:line:col."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from rules.harness import FIXTURES, build_fleet, lint, where

from gpuspec.errors import GpuspecError
from gpuspec.findings import Severity
from gpuspec.policy.load import load_policy

PACK_HEAD = "apiVersion: gpuspec.io/v1alpha1\nkind: PolicyPack\nmetadata:\n  name: {name}\n"


def write_pack(policies: Path, name: str, body: str = "") -> Path:
    policies.mkdir(parents=True, exist_ok=True)
    path = policies / f"{name}.yaml"
    path.write_text(PACK_HEAD.format(name=name) + body, encoding="utf-8")
    return path


def test_builtin_default_when_no_policies_folder(tmp_path: Path) -> None:
    policy = load_policy(tmp_path / "missing", ["default"])
    assert policy.usable and policy.packs == ["default"]
    assert policy.rules["GS502"].params == {"max_parallel_upgrades": 4}
    assert policy.rules["GS502"].severity is Severity.WARNING


def test_extends_chain_merges_later_wins(tmp_path: Path) -> None:
    write_pack(tmp_path, "default", "rules:\n  GS502:\n    params: {max_parallel_upgrades: 3}\n")
    write_pack(tmp_path, "strictish", "extends: default\nasOf: 2026-01-31\nrules:\n"
               "  GS502: {severity: error}\n  GS701: {enabled: false}\n")
    write_pack(tmp_path, "org", "extends: [strictish]\nrules:\n  GS502:\n    params: {max_parallel_upgrades: 1}\n")
    policy = load_policy(tmp_path, ["org"])
    assert policy.usable, policy.findings
    assert policy.packs == ["default", "strictish", "org"]
    assert policy.rules["GS502"].severity is Severity.ERROR
    assert policy.rules["GS502"].params == {"max_parallel_upgrades": 1}
    assert not policy.enabled("GS701")
    assert policy.as_of == date(2026, 1, 31)


def test_missing_pack_on_command_line_is_an_error(tmp_path: Path) -> None:
    write_pack(tmp_path, "strict")
    with pytest.raises(GpuspecError, match="'strikt' not found") as info:
        load_policy(tmp_path, ["strikt"])
    assert "did you mean 'strict'" in str(info.value)


def _problems(tmp_path: Path, name: str, body: str) -> list[tuple[str, str, int, int, str]]:
    path = write_pack(tmp_path / "policies", name, body)
    fleet = build_fleet(tmp_path)
    result = lint(fleet, tmp_path / "policies", packs=[name])
    assert not result.usable
    return [(f.rule_id, Path(f.file or "").name, f.line or 0, f.column or 0, f.message)
            for f in result.findings if Path(f.file or "") == path or Path(f.file or "").resolve() == path.resolve()]


def test_unknown_rule_id_with_suggestion(tmp_path: Path) -> None:
    got = _problems(tmp_path, "p", "rules:\n  GS6O4: {enabled: false}\n")
    assert [g[:4] for g in got] == [("GS002", "p.yaml", 6, 3)]
    assert "unknown rule id 'GS6O4'" in got[0][4]


def test_unknown_and_mistyped_params(tmp_path: Path) -> None:
    got = _problems(tmp_path, "p", "rules:\n  GS604:\n    params:\n      min_lenght: 3\n"
                    "  GS705:\n    params: {strict_disjoint: 'yes'}\n")
    assert [g[:4] for g in got] == [("GS002", "p.yaml", 8, 7), ("GS002", "p.yaml", 10, 31)]
    assert "no parameter 'min_lenght'" in got[0][4]
    assert "must be bool" in got[1][4]


def test_a_number_param_past_int32_is_refused(tmp_path: Path) -> None:
    """Rules compute with their parameters (node counts, percentages): a huge number is a pack error at its
    line, not arithmetic that overflows inside a rule (the spec's own integers share the bound)."""
    got = _problems(tmp_path, "p", "rules:\n  GS502:\n    params: {max_parallel_upgrades: 0x" + "f" * 90 + "}\n")
    assert [g[:4] for g in got] == [("GS002", "p.yaml", 7, 37)]
    assert "must be int, got a number beyond" in got[0][4]
    in_range = tmp_path / "in-range" / "policies"
    write_pack(in_range, "q", "rules:\n  GS502:\n    params: {max_parallel_upgrades: 2147483647}\n")
    assert load_policy(in_range, ["q"]).usable


def test_list_params_need_their_element_type(tmp_path: Path) -> None:
    got = _problems(tmp_path, "p", "rules:\n  GS704:\n    params: {reserved_domains: [1, 2]}\n")
    assert [g[:4] for g in got] == [("GS002", "p.yaml", 7, 32)]


def test_schema_errors_in_a_pack_have_positions(tmp_path: Path) -> None:
    got = _problems(tmp_path, "p", "rules:\n  GS604:\n    severity: fatal\nexception: []\n")
    assert [g[:4] for g in got] == [("GS001", "p.yaml", 7, 15), ("GS001", "p.yaml", 8, 1)]
    assert "unknown key 'exception'" in got[1][4]


def test_yaml_syntax_error_in_a_pack(tmp_path: Path) -> None:
    got = _problems(tmp_path, "p", "rules: [\n")
    assert got and got[0][0] == "GS001" and got[0][2] >= 5


def test_extends_cycle_and_missing_parent(tmp_path: Path) -> None:
    write_pack(tmp_path / "policies", "a", "extends: b\n")
    write_pack(tmp_path / "policies", "b", "extends: [a, nope]\n")
    result = lint(build_fleet(tmp_path), tmp_path / "policies", packs=["a"])
    got = sorted((f.rule_id, Path(f.file or "").name, f.line, f.column, f.message) for f in result.findings)
    assert not result.usable
    assert got == [
        ("GS002", "b.yaml", 5, 11, "extends cycle: a → b → a"),
        ("GS002", "b.yaml", 5, 14, "policy pack 'nope' not found in " + str(tmp_path / "policies")),
    ]


def test_pack_named_in_fleet_yaml_must_exist(tmp_path: Path) -> None:
    fleet_text = (FIXTURES / "_base" / "fleet" / "fleet.yaml").read_text() + "policy:\n  packs: [default, acme]\n"
    fleet = build_fleet(tmp_path, files={"fleet.yaml": fleet_text})
    result = lint(fleet, tmp_path / "policies")
    assert not result.usable
    assert [where(f, fleet) for f in result.findings] == [("GS002", "fleet.yaml", 18, 20)]


def test_engine_errors_cannot_be_configured(tmp_path: Path) -> None:
    got = _problems(tmp_path, "p", "rules:\n  GS001: {enabled: false}\n")
    assert [g[:4] for g in got] == [("GS002", "p.yaml", 6, 3)]


def test_pack_file_name_must_match(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "p.yaml").write_text(PACK_HEAD.format(name="q"))
    result = lint(build_fleet(tmp_path), policies, packs=["p"])
    assert [(f.rule_id, f.line) for f in result.findings] == [("GS002", 4)]


def test_policy_severity_and_params_reach_findings(tmp_path: Path) -> None:
    write_pack(tmp_path / "policies", "p", "rules:\n  GS502:\n    severity: info\n"
               "    params: {max_parallel_upgrades: 0}\n")
    fleet = build_fleet(tmp_path)
    found = [f for f in lint(fleet, tmp_path / "policies", packs=["p"]).findings if f.rule_id == "GS502"]
    assert [(f.severity, f.line) for f in found] == [(Severity.INFO, 13)]


def test_disabled_rule_does_not_run(tmp_path: Path) -> None:
    write_pack(tmp_path / "policies", "p", "rules:\n  GS502: {enabled: false}\n")
    fleet = build_fleet(tmp_path, FIXTURES / "GS502" / "fail" / "fleet")
    assert [f for f in lint(fleet, tmp_path / "policies", packs=["p"]).findings if f.rule_id == "GS502"] == []
