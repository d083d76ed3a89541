"""The lint, rules and explain commands end to end: formats, --output, --fail-on, exit codes, no tracebacks."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpuspec.cli.main import run as run_cli
from rules.harness import BASE, EXAMPLE_FLEET, EXAMPLE_POLICIES, FIXTURES, build_fleet


def no_packs(tmp_path: Path) -> Path:
    """An empty policies folder: only the built-in default pack applies."""
    folder = tmp_path / "no-packs"
    folder.mkdir(exist_ok=True)
    return folder


def run(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the real entry point (as a user would) and return exit code, stdout and stderr."""
    monkeypatch.setattr(sys, "argv", ["gpuspec", *args])
    code = run_cli()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_lint_example_clean(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["lint", str(EXAMPLE_FLEET), "--policies", str(EXAMPLE_POLICIES)], monkeypatch, capsys)
    assert code == 0
    assert "lint: no problems found" in out and "policy packs: default" in out


def test_lint_strict_text_has_frame_and_hint(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = run(["lint", str(EXAMPLE_FLEET), "--policies", str(EXAMPLE_POLICIES), "--pack", "strict"],
                       monkeypatch, capsys)
    assert code == 1
    assert "train-east.yaml:33:24: error GS502" in out
    assert "   33 |   maxParallelUpgrades: 2\n" in out
    assert "      |                        ^\n" in out
    assert "  hint: use 1" in out
    assert "\033[" not in out


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "junit"])
def test_lint_formats(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    fleet = build_fleet(tmp_path, FIXTURES / "GS502" / "fail" / "fleet")
    code, out, _ = run(["lint", str(fleet), "--policies", str(no_packs(tmp_path)), "--format", fmt],
                       monkeypatch, capsys)
    assert code == 0  # GS502 is a warning by default
    if fmt == "json":
        assert [f["ruleId"] for f in json.loads(out)["findings"]] == ["GS502"]
    elif fmt == "sarif":
        assert json.loads(out)["runs"][0]["results"][0]["ruleId"] == "GS502"
    elif fmt == "github":
        assert out.startswith("::warning file=") and ",line=13,col=24,title=GS502 " in out
    else:
        assert ET.fromstring(out).find("testsuite/testcase") is not None


def test_fail_on_warning_and_output_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    fleet = build_fleet(tmp_path, FIXTURES / "GS502" / "fail" / "fleet")
    report = tmp_path / "lint.sarif"
    code, out, _ = run(["lint", str(fleet), "--policies", str(no_packs(tmp_path)), "--fail-on", "warning",
                        "--format", "sarif", "--output", str(report)], monkeypatch, capsys)
    assert code == 1 and out == ""
    assert json.loads(report.read_text())["version"] == "2.1.0"


def test_unwritable_output_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["lint", str(EXAMPLE_FLEET), "--policies", str(EXAMPLE_POLICIES),
                        "--output", str(tmp_path / "missing" / "x.txt")], monkeypatch, capsys)
    assert code == 2 and "cannot write" in err


def test_unusable_fleet_is_exit_2_with_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    cluster = (BASE / "clusters" / "c1.yaml").read_text().replace("  tool: argocd\n", "  tool: argo\n")
    fleet = build_fleet(tmp_path, files={"clusters/c1.yaml": cluster})
    code, out, _ = run(["lint", str(fleet), "--policies", str(no_packs(tmp_path))], monkeypatch, capsys)
    assert code == 2 and "GS104" in out


def test_broken_policy_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "default.yaml").write_text("apiVersion: gpuspec.io/v1alpha1\nkind: PolicyPack\nmetadata:\n"
                                           "  name: default\nrules:\n  GS9O1: {}\n")
    code, out, _ = run(["lint", str(build_fleet(tmp_path)), "--policies", str(policies)], monkeypatch, capsys)
    assert code == 2 and "default.yaml:6:3: error GS002 unknown rule id 'GS9O1'" in out


def test_unknown_pack_and_bad_date(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["lint", str(EXAMPLE_FLEET), "--policies", str(EXAMPLE_POLICIES), "--pack", "strikt"],
                       monkeypatch, capsys)
    assert code == 2 and "did you mean 'strict'" in err
    code, _, err = run(["lint", str(EXAMPLE_FLEET), "--today", "tomorrow"], monkeypatch, capsys)
    assert code == 2 and "is not a date" in err


def test_rules_table_and_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules"], monkeypatch, capsys)
    assert code == 0
    assert out.splitlines()[0].split() == ["ID", "SEVERITY", "STAGE", "TITLE"]
    rows = {line.split()[0]: line.split(None, 2) for line in out.splitlines()[1:]}
    assert rows["GS604"][1] == "error" and rows["GS604"][2].split(None, 1) == [
        "security", "GPU sharing has a written justification"]
    # every stage's finding ids are listed, not only policy rules
    assert {"GS103", "GS204", "GS401", "GS760", "GS801", "GS905"} <= set(rows)
    code, out, _ = run(["rules", "--format", "json"], monkeypatch, capsys)
    rules = {r["id"]: r for r in json.loads(out)}
    assert rules["GS604"]["params"] == [{"name": "min_length", "type": "int", "default": 20,
                                         "description": "Shortest acceptable justification, in characters."}]


def test_explain(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["explain", "gs704"], monkeypatch, capsys)
    assert code == 0
    assert out.startswith("GS704: Node selectors do not use operator-owned labels\n")
    assert "default severity: error" in out and "why: " in out
    assert 'reserved_domains (list, default ["nvidia.com", "feature.node.kubernetes.io"])' in out
    code, out, _ = run(["explain", "GS705", "--format", "json"], monkeypatch, capsys)
    assert json.loads(out)["params"][0]["default"] is False


def test_explain_unknown_rule(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["explain", "GS6O4"], monkeypatch, capsys)
    assert code == 2 and out == ""
    assert "unknown rule 'GS6O4'" in err and "did you mean GS604" in err


@pytest.mark.parametrize(("rule_id", "stage"), [("GS103", "validate"), ("GS760", "audit"), ("GS905", "verify"),
                                                ("GS801", "change set")])
def test_explain_covers_every_stage(
    rule_id: str, stage: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["explain", rule_id.lower()], monkeypatch, capsys)
    assert code == 0 and out.startswith(f"{rule_id}: ")
    code, out, _ = run(["rules", "--format", "json"], monkeypatch, capsys)
    assert {r["id"]: r["stage"] for r in json.loads(out)}[rule_id] == stage


def test_text_report_never_echoes_a_secret_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = build_fleet(tmp_path, FIXTURES / "GS405" / "fail" / "fleet")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["lint", "fleet", "--format", "text"], monkeypatch, capsys)
    assert code == 1 and "GS405" in out
    assert "hunter22" not in out, out  # no code frame of a line that holds a credential
    assert fleet.is_dir()


def test_rules_and_explain_include_the_custom_rules_of_the_packs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["rules", "--policies", str(EXAMPLE_POLICIES)], monkeypatch, capsys)
    assert code == 0
    rows = {line.split()[0]: line.split(None, 3) for line in out.splitlines()[1:]}
    assert rows["ORG001"][1:3] == ["error", "custom"]
    code, out, _ = run(["explain", "org002", "--policies", str(EXAMPLE_POLICIES)], monkeypatch, capsys)
    assert code == 0 and out.startswith("ORG002: Pools are selected by the acme pool label")
    assert "policies/acme.yaml" in out


def test_shipped_organisation_pack_custom_rule_fires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = build_fleet(tmp_path)
    shutil.copytree(EXAMPLE_POLICIES, tmp_path / "policies")
    code, out, _ = run(["lint", str(fleet), "--policies", str(tmp_path / "policies"), "--pack", "acme",
                        "--format", "json"], monkeypatch, capsys)
    found = [f for f in json.loads(out)["findings"] if f["ruleId"] == "ORG001"]
    assert found and all(f["severity"] == "error" for f in found), out
    assert code == 1
