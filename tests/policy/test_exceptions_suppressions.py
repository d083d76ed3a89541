"""Exceptions (scope, expiry, unused), inline suppressions (reason, unused, unknown) and custom rules."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from rules.harness import FIXTURES, build_fleet, lint, where

from gpuspec.policy.suppress import parse_suppressions, read_suppressions
from policy.test_policy import write_pack

TODAY = date(2026, 9, 1)


def _exception(rules: str, cluster: str, expires: str, pool: str | None = None) -> str:
    text = f"  - rules: [{rules}]\n    cluster: {cluster}\n"
    if pool:
        text += f"    pool: {pool}\n"
    return text + f"    owner: gpu-platform\n    reason: capacity crunch until Q4\n    expires: {expires}\n"


def _run(tmp_path: Path, fixture: str, pack_body: str) -> list[tuple[str, str, int, int]]:
    tmp_path = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    tmp_path.mkdir()
    write_pack(tmp_path / "policies", "p", pack_body)
    fleet = build_fleet(tmp_path, FIXTURES / fixture / "fail" / "fleet")
    result = lint(fleet, tmp_path / "policies", packs=["p"], today=TODAY)
    assert result.usable
    out = []
    for f in result.findings:
        rule, file, line, col = where(f, fleet)
        out.append((rule, Path(file).name, line, col))
    return out


def test_live_exception_hides_findings_of_its_pool(tmp_path: Path) -> None:
    got = _run(tmp_path, "GS604", "exceptions:\n" + _exception("GS604", "c1", "2026-12-31", pool="main"))
    assert [g for g in got if g[0] == "GS604"] == [("GS604", "c1.yaml", 29, 22)]  # canary still reported
    assert [g for g in got if g[0].startswith("GS00")] == []


def test_cluster_wide_and_any_cluster_exceptions(tmp_path: Path) -> None:
    got = _run(tmp_path, "GS502", "exceptions:\n" + _exception("GS502", "c1", "2026-12-31"))
    assert [g for g in got if g[0] in ("GS502", "GS004")] == []
    got = _run(tmp_path, "GS502", "exceptions:\n" + _exception("GS502", "'*'", "2026-12-31"))
    assert [g for g in got if g[0] in ("GS502", "GS004")] == []
    got = _run(tmp_path, "GS502", "exceptions:\n" + _exception("GS502", "c2", "2026-12-31"))
    assert ("GS502", "c1.yaml", 13, 24) in got


def test_a_credential_is_never_accepted(tmp_path: Path) -> None:
    for cluster in ("c1", "'*'"):
        got = _run(tmp_path, "GS405", "exceptions:\n" + _exception("GS405", cluster, "2026-12-31"))
        assert [g[1] for g in got if g[0] == "GS405"] == ["c1.yaml", "fleet.yaml", "fleet.yaml"]
        assert [g for g in got if g[0] == "GS008"] == [("GS008", "p.yaml", 6, 13)]


def test_expired_exception_is_a_finding_and_hides_nothing(tmp_path: Path) -> None:
    got = _run(tmp_path, "GS502", "exceptions:\n" + _exception("GS502", "c1", "2026-08-31"))
    assert ("GS502", "c1.yaml", 13, 24) in got
    assert ("GS003", "p.yaml", 10, 14) in got


def test_exception_that_matches_nothing(tmp_path: Path) -> None:
    body = "exceptions:\n" + _exception("GS502", "c1", "2026-12-31", pool="canary") + _exception(
        "GS601", "nope", "2026-12-31")
    got = _run(tmp_path, "GS502", body)
    assert ("GS502", "c1.yaml", 13, 24) in got  # pool-scoped exception does not cover a cluster-level finding
    assert [g for g in got if g[0] == "GS004"] == [("GS004", "p.yaml", 6, 5), ("GS004", "p.yaml", 12, 5)]


def test_unused_exception_for_a_disabled_rule_is_quiet(tmp_path: Path) -> None:
    body = "rules:\n  GS601: {enabled: false}\nexceptions:\n" + _exception("GS601", "c1", "2026-12-31")
    assert [g for g in _run(tmp_path, "GS502", body) if g[0] == "GS004"] == []


def test_exception_with_unknown_rule(tmp_path: Path) -> None:
    write_pack(tmp_path / "policies", "p", "exceptions:\n" + _exception("GS6O1", "c1", "2026-12-31"))
    result = lint(build_fleet(tmp_path), tmp_path / "policies", packs=["p"], today=TODAY)
    assert not result.usable
    assert [(f.rule_id, f.line, f.column) for f in result.findings] == [("GS002", 6, 13)]


def test_parse_suppressions() -> None:
    text = "a: 1  # gpuspec: ignore GS502 -- reviewed\n# gpuspec: ignore GS604, gs705 -- why\n\n# note\nb: 2\n"
    found = parse_suppressions("f.yaml", text)
    assert [(s.line, s.column, s.target, s.rules, s.reason) for s in found] == [
        (1, 7, 1, ("GS502",), "reviewed"),
        (2, 1, 5, ("GS604", "GS705"), "why"),
    ]


def test_read_suppressions_finds_directives_in_any_letter_case(tmp_path: Path) -> None:
    head = "apiVersion: gpuspec.io/v1alpha1\n"
    texts = {"plain": "a: 1\n", "upper": "a: 1  # GPUSPEC: IGNORE GS502 -- x\n",
             "dotless": "a: 1  # gpuspec: \u0131gnore GS502 -- x\n", "none": "a: 1  # ignored by nobody\n"}
    for name, text in texts.items():
        (tmp_path / f"{name}.yaml").write_text(head + text, encoding="utf-8")
    found = read_suppressions(str(tmp_path / f"{name}.yaml") for name in texts)
    expected = [(str(tmp_path / f"{name}.yaml"), s.line, s.rules) for name in texts
                for s in parse_suppressions(str(tmp_path / f"{name}.yaml"), head + texts[name])]
    assert [(s.file, s.line, s.rules) for s in found] == expected
    assert {Path(file).stem for file, _, _ in expected} == {"upper", "dotless"}


def _suppressed(tmp_path: Path, fixture: str, old: str, new: str) -> list[tuple[str, str, int, int]]:
    cluster = (FIXTURES / fixture / "fail" / "fleet" / "clusters" / "c1.yaml").read_text()
    assert old in cluster
    files = {"clusters/c1.yaml": cluster.replace(old, new)}
    fleet = build_fleet(tmp_path, FIXTURES / fixture / "fail" / "fleet", files=files)
    result = lint(fleet, today=TODAY)
    assert result.usable
    return [where(f, fleet) for f in result.findings]


def test_suppression_on_the_line(tmp_path: Path) -> None:
    got = _suppressed(tmp_path, "GS502", "maxParallelUpgrades: 0\n",
                      "maxParallelUpgrades: 0  # gpuspec: ignore GS502 -- unlimited on purpose in dev\n")
    assert got == []


def test_suppression_on_the_line_above(tmp_path: Path) -> None:
    got = _suppressed(tmp_path, "GS502", "  maxParallelUpgrades: 0\n",
                      "  # gpuspec: ignore GS502 -- unlimited on purpose in dev\n  maxParallelUpgrades: 0\n")
    assert got == []


def test_suppression_needs_a_reason(tmp_path: Path) -> None:
    got = _suppressed(tmp_path, "GS502", "maxParallelUpgrades: 0\n",
                      "maxParallelUpgrades: 0  # gpuspec: ignore GS502\n")
    assert got == [("GS502", "clusters/c1.yaml", 13, 24), ("GS005", "clusters/c1.yaml", 13, 27)]


def test_suppression_does_not_reach_other_lines_or_rules(tmp_path: Path) -> None:
    got = _suppressed(tmp_path, "GS502", "  maxUnavailable: 20%\n",
                      "  maxUnavailable: 20%  # gpuspec: ignore GS502, GS999 -- wrong line\n")
    assert got == [("GS502", "clusters/c1.yaml", 13, 24), ("GS006", "clusters/c1.yaml", 14, 24),
                   ("GS007", "clusters/c1.yaml", 14, 24)]


def test_custom_rule_fails_and_passes(tmp_path: Path) -> None:
    body = (
        "customRules:\n"
        "  - id: ORG001\n    title: Pools have at most 2 nodes\n    severity: error\n"
        "    message: pool {name} is too large\n    select: clusters[*].pools[*]\n"
        "    schema:\n      properties:\n        nodes: {maximum: 2}\n"
        "  - id: ORG002\n    title: Mirrors have pull secrets\n"
        "    message: mirror {name} has no pull secret\n    select: fleet.mirrors[*]\n"
        "    schema: {required: [pullSecrets], properties: {pullSecrets: {minItems: 1}}}\n"
    )
    write_pack(tmp_path / "policies", "org", body)
    fleet = build_fleet(tmp_path)
    result = lint(fleet, tmp_path / "policies", packs=["org"], today=TODAY)
    assert result.usable
    got = [(*where(f, fleet), f.severity.value, f.message) for f in result.findings]
    assert got == [("ORG001", "clusters/c1.yaml", 30, 12, "error", "pool main is too large")]
    assert result.rule_docs["ORG001"].title == "Pools have at most 2 nodes"


def test_an_invalid_custom_rule_schema_is_reported_at_the_value_without_quoting_it(tmp_path: Path) -> None:
    """The message names the place and the keyword, not the value: a schema value under ``apiKey`` may be a
    credential (found by the fuzz job); the finding points at the value, so no report shows its line."""
    body = ("customRules:\n  - id: ORG003\n    title: t\n    message: m\n    select: 'clusters[*]'\n"
            "    schema:\n      properties:\n        apiKey: Zq7canaryPW91\n")
    write_pack(tmp_path / "policies", "org", body)
    result = lint(build_fleet(tmp_path), tmp_path / "policies", packs=["org"], today=TODAY)
    assert not result.usable
    [finding] = [f for f in result.findings if f.rule_id == "GS002"]
    assert (finding.line, finding.column) == (12, 17)
    assert "Zq7canaryPW91" not in finding.message
    assert "properties.apiKey must be of type 'object' or 'boolean'" in finding.message


def test_custom_rule_mistakes(tmp_path: Path) -> None:
    body = (
        "customRules:\n"
        "  - {id: GS999, title: t, message: m, select: 'clusters[*]', schema: {}}\n"
        "  - {id: ORG001, title: t, message: m, select: 'pools[*]', schema: {}}\n"
        "  - {id: ORG002, title: t, message: m, select: 'clusters[*]', schema: {type: 12}}\n"
    )
    write_pack(tmp_path / "policies", "org", body)
    result = lint(build_fleet(tmp_path), tmp_path / "policies", packs=["org"], today=TODAY)
    assert not result.usable
    assert [(f.rule_id, f.line, f.column) for f in result.findings] == [
        ("GS002", 6, 10), ("GS002", 7, 48), ("GS002", 8, 78)]  # at the offending value, not the schema key


def test_an_exception_bound_to_adopted_values_accepts_nothing_else(tmp_path: Path) -> None:
    """Issue 44: an exception import wrote for Kubernetes 1.31 on v26.7.0 does not accept 1.31 on another release,
    nor another minor: a change that brings a new violation is an error although the rule id is excepted."""
    bound = _exception("GS204", "c1", "2026-12-31") + "    values: {operator: v26.7.0, kubernetes: '1.31'}\n"
    assert [g for g in _run(tmp_path, "GS204", "exceptions:\n" + bound) if g[0] in ("GS204", "GS004")] == []
    elsewhere = bound.replace("operator: v26.7.0", "operator: v26.3.3")
    assert [g[0] for g in _run(tmp_path, "GS204", "exceptions:\n" + elsewhere) if g[0] == "GS204"] == ["GS204"]
    minor = bound.replace("kubernetes: '1.31'", "kubernetes: '1.30'")
    assert [g[0] for g in _run(tmp_path, "GS204", "exceptions:\n" + minor) if g[0] == "GS204"] == ["GS204"]
    branch = _exception("GS204", "c1", "2026-12-31") + "    values: {driverBranch: '999'}\n"
    assert [g[0] for g in _run(tmp_path, "GS204", "exceptions:\n" + branch) if g[0] == "GS204"] == ["GS204"]
