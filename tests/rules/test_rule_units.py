"""Unit tests of rule helpers and parameters: secret patterns, selector overlap, bounds, registry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuspec.catalogue import get, suggest
from gpuspec.redaction import SecretProbe
from gpuspec.rules.airgap import looks_like_credential
from gpuspec.rules.base import RuleContext, run_rule
from gpuspec.rules.common import host_of, is_public_host
from gpuspec.rules.observability import selectors_overlap
from gpuspec.rules.registry import RULES, all_rules, changeset_rules
from gpuspec.rules.rollout import MaxParallelUpgradesBounded, unavailable_percent
from gpuspec.rules.secrets import classify_value, is_secret_key, scan
from rules.harness import FIXTURES, build_fleet, lint, where

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "kind"), [
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE...", "a PEM private key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM private key"),
    ("Authorization: Bearer abcdefghijklmnop1234", "a bearer token"),
    ("AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "a GitHub token"),
    ("https://user:pa55@registry.example/path", "a URL with user:password"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "a JSON Web Token"),
    ('{"auths": {"harbor": {"auth": "eDp5"}}}', "a Docker registry config with credentials"),
])
def test_secret_values_are_recognised(text: str, kind: str) -> None:
    assert classify_value(text) == kind


@pytest.mark.parametrize("text", [
    "https://git.example/fleet.git", "oci://harbor.example/charts", "harbor-dc-north-pull",
    "Stateless inference; no bearer tokens here", "nvcr.io/nvidia", "5.15.0-143-generic",
])
def test_ordinary_values_are_not_secrets(text: str) -> None:
    assert classify_value(text) is None


def test_secret_keys_but_not_name_references() -> None:
    assert is_secret_key("password") and is_secret_key("db_token") and is_secret_key("apiKey")
    assert not is_secret_key("pullSecrets") and not is_secret_key("kubeConfigSecret")
    assert not is_secret_key("description")


def test_scan_reports_paths_not_values() -> None:
    hits = list(scan({"a": [{"password": "x"}], "b": {"c": "https://u:p@h/"}, "flag": {"token": True}}))
    assert [(h.path, h.kind) for h in hits] == [
        (("a", 0, "password"), "a value under the credential-like key 'password'"),
        (("b", "c"), "a URL with user:password"),
    ]
    assert all("x" not in h.kind for h in hits)


@pytest.mark.parametrize("data", [
    {"a": [{"password": "x"}]}, {"b": {"c": "https://u:p@h/"}}, {"flag": {"token": True}},
    {"token": ""}, {"token": 0}, {"token": []}, {"ghp_abcdefghijklmnopqrstuvwxyz0123456789": None},
    {1: {"x": ["AKIAIOSFODNN7EXAMPLE"]}}, {None: "plain"}, ["a", 1, None, {"pullSecrets": ["s"]}], "text",
])
def test_probe_answers_as_scan_does(data: object) -> None:
    probe = SecretProbe()
    assert probe.holds_secret(data) == any(True for _ in scan(data))
    assert probe.holds_secret(data) == any(True for _ in scan(data))  # and again from its memory


def test_probe_answers_as_scan_does_on_every_repository_file() -> None:
    from gpuspec.loader.yamlread import YamlProblem, read_yaml
    root = Path(__file__).resolve().parents[2]
    probe, seen, flagged = SecretProbe(), 0, 0
    for path in sorted([*root.glob("tests/**/*.yaml"), *root.glob("fleet/**/*.yaml")]):
        try:
            data = read_yaml(path, str(path))
        except YamlProblem:
            continue
        seen += 1
        assert probe.holds_secret(data) == any(True for _ in scan(data)), path
        flagged += probe.holds_secret(data)
    assert seen > 100 and flagged > 0


def test_credential_like_names() -> None:
    assert looks_like_credential("3f9a0c1e7b2d4a6f8e0c1b3d5f7a9c2e")
    assert not looks_like_credential("harbor-dc-north-pull")
    assert not looks_like_credential("registrycredentials")


def test_hosts() -> None:
    assert host_of("oci://Harbor.example:443/charts") == "harbor.example"
    assert host_of("nvcr.io/nvidia/cloud-native") == "nvcr.io"
    assert is_public_host("registry-1.docker.io", ["docker.io"])
    assert not is_public_host("harbor.example", ["docker.io"])


def test_selector_overlap_modes() -> None:
    a, b = {"k": "1"}, {"k": "1", "p": "x"}
    assert selectors_overlap(a, b, strict=False)
    assert not selectors_overlap({"k": "1"}, {"k": "2"}, strict=True)
    assert not selectors_overlap({"a": "1"}, {"b": "2"}, strict=False)
    assert selectors_overlap({"a": "1"}, {"b": "2"}, strict=True)


def test_unavailable_percent() -> None:
    assert unavailable_percent("10%", 10) == 10.0
    assert unavailable_percent("10%", 7) == pytest.approx(100 / 7)  # rounded up to 1 of 7 nodes, as the controller does
    assert unavailable_percent("25%", 5) == 40.0  # 1.25 nodes -> 2
    assert unavailable_percent(2, 8) == 25.0
    assert unavailable_percent(1, 0) == 100.0


def test_gs503_judges_a_percentage_rounded_up(tmp_path: Path) -> None:
    base = (FIXTURES / "_base" / "fleet" / "clusters" / "c1.yaml").read_text()
    fleet = build_fleet(tmp_path / "a", files={"clusters/c1.yaml": base.replace("maxUnavailable: 20%",
                                                                                  "maxUnavailable: 25%")})
    (found,) = [f for f in lint(fleet).findings if f.rule_id == "GS503"]
    assert "rounded up: 2 of 5 nodes, 40%" in found.message
    fleet = build_fleet(tmp_path / "b")
    assert [f for f in lint(fleet).findings if f.rule_id == "GS503"] == []


def test_public_mirror_target_is_reported(tmp_path: Path) -> None:
    fleet_text = (FIXTURES / "_base" / "fleet" / "fleet.yaml").read_text().replace(
        "registry.k8s.io: harbor.dc.example.internal/k8s", "registry.k8s.io: registry.k8s.io")
    cluster = (FIXTURES / "GS401" / "pass" / "fleet" / "clusters" / "c1.yaml").read_text()
    fleet = build_fleet(tmp_path, files={"fleet.yaml": fleet_text, "clusters/c1.yaml": cluster})
    got = [where(f, fleet) for f in lint(fleet).findings if f.rule_id == "GS401"]
    assert got == [("GS401", "fleet.yaml", 12, 24)]


def test_params_change_the_verdict(tmp_path: Path) -> None:
    fleet = build_fleet(tmp_path)
    from gpuspec.loader.fleetload import load_fleet

    loaded = load_fleet(fleet).fleet
    assert loaded is not None
    rule = MaxParallelUpgradesBounded()
    assert run_rule(rule, RuleContext(loaded)) == []
    loaded.clusters[0].rollout.max_parallel_upgrades = 3
    assert run_rule(rule, RuleContext(loaded)) == []
    found = run_rule(rule, RuleContext(loaded, params={"max_parallel_upgrades": 2}))
    assert [f.rule_id for f in found] == ["GS502"] and "bound of 2" in found[0].message


def test_registry_is_complete_and_documented() -> None:
    every = all_rules()
    ids = list(every)
    assert ids == sorted(ids) and set(ids) == set(RULES) | set(changeset_rules())
    assert all(rule.needs_base for rule in changeset_rules().values())
    assert not any(rule.needs_base for rule in RULES.values())
    for rule_id, rule in every.items():
        entry = rule.entry
        assert entry.id == rule_id
        assert entry.title and entry.rationale and entry.documentation
        assert not rule_id.startswith(("GS0", "GS1", "GS9")), f"{rule_id} is outside the lint rules' id ranges"
        assert entry.help_markdown.startswith(entry.rationale)
        for param in entry.params:
            assert param.description


def test_lookup_and_suggestions() -> None:
    assert get("gs604") is RULES["GS604"].entry
    assert get("GS999") is None
    assert "GS604" in suggest("GS64")


def test_a_crashing_rule_becomes_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from collections.abc import Iterator

    from gpuspec.findings import Severity
    from gpuspec.rules import registry
    from gpuspec.rules.base import Problem, Rule

    class Broken(Rule):
        """Always fails (stands in for GS501's implementation)."""

        entry = RULES["GS501"].entry

        def check(self, ctx: RuleContext) -> Iterator[Problem]:
            raise KeyError("boom")

    monkeypatch.setitem(registry.RULES, "GS501", Broken())
    result = lint(build_fleet(tmp_path, FIXTURES / "GS502" / "fail" / "fleet"))
    assert result.usable
    assert [(f.rule_id, f.severity) for f in result.findings] == [("GS502", Severity.WARNING),
                                                                 ("GS000", Severity.ERROR)]
    assert "rule GS501 failed: KeyError" in result.findings[1].message


def test_lint_without_base_imports_no_change_set_machinery(tmp_path: Path) -> None:
    """`lint` without --base imports neither the change-set rules nor the plan's change records."""
    code = (
        "import sys\n"
        "from gpuspec.pipeline.lint import lint_fleet\n"
        "from pathlib import Path\n"
        f"lint_fleet(Path({str(REPO / 'fleet')!r}), Path({str(REPO / 'policies')!r}))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('gpuspec.plan', 'gpuspec.rules.changeset'))))\n"
    )
    env = {**os.environ, "GPUSPEC_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"
