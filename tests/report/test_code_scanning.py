"""SARIF as GitHub code scanning reads it, from real lint runs: suppressed findings, unusable input, JUnit lines."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from policy.test_policy import write_pack
from rules.harness import FIXTURES, build_fleet

from gpuspec.cli.main import run as run_cli


@pytest.fixture(scope="module")
def sarif_validator(shared_dir: Path) -> jsonschema.Draft4Validator:
    schema = json.loads((shared_dir / "upstream" / "sarif" / "sarif-schema-2.1.0.json").read_text())
    return jsonschema.Draft4Validator(schema)


def lint(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["gpuspec", "lint", *args])
    code = run_cli()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code != 2 or out, err
    return code, out


def valid(doc: Any, validator: jsonschema.Draft4Validator) -> None:
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


def test_inline_suppression_and_exception_are_kept_as_suppressed_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    sarif_validator: jsonschema.Draft4Validator,
) -> None:
    cluster = (FIXTURES / "GS502" / "fail" / "fleet" / "clusters" / "c1.yaml").read_text()
    suppressed = cluster.replace("maxParallelUpgrades: 0\n",
                                 "maxParallelUpgrades: 0  # gpuspec: ignore GS502 -- unlimited on purpose in dev\n")
    assert suppressed != cluster
    fleet = build_fleet(tmp_path, FIXTURES / "GS502" / "fail" / "fleet", files={"clusters/c1.yaml": suppressed})
    (tmp_path / "policies").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out = lint(monkeypatch, capsys, str(fleet), "--policies", "policies", "--format", "sarif")
    doc = json.loads(out)
    valid(doc, sarif_validator)
    run = doc["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is True
    hidden = [r for r in run["results"] if "suppressions" in r]
    by_rule = {r["ruleId"]: r["suppressions"][0] for r in hidden}
    assert by_rule["GS502"] == {"kind": "inSource", "status": "accepted",
                                "justification": "unlimited on purpose in dev"}
    gs502 = next(r for r in hidden if r["ruleId"] == "GS502")
    assert gs502["locations"][0]["physicalLocation"]["region"]["startLine"] > 1
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert "markdown" in rules["GS502"]["help"]
    assert code == 0, "suppressed findings do not fail the gate"
    code, text = lint(monkeypatch, capsys, str(fleet), "--policies", "policies")
    assert code == 0 and "GS502" not in text


def test_policy_exception_is_an_external_suppression(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    sarif_validator: jsonschema.Draft4Validator,
) -> None:
    fleet = build_fleet(tmp_path, FIXTURES / "GS604" / "fail" / "fleet")
    write_pack(tmp_path / "policies", "p", "exceptions:\n  - rules: [GS604]\n    cluster: c1\n    pool: main\n"
               "    owner: gpu-platform\n    reason: capacity crunch until Q4\n    expires: 2099-12-31\n")
    monkeypatch.chdir(tmp_path)
    _, out = lint(monkeypatch, capsys, str(fleet), "--policies", "policies", "--pack", "p", "--format", "sarif")
    doc = json.loads(out)
    valid(doc, sarif_validator)
    results = doc["runs"][0]["results"]
    hidden = [r for r in results if r["ruleId"] == "GS604" and "suppressions" in r]
    shown = [r for r in results if r["ruleId"] == "GS604" and "suppressions" not in r]
    assert len(hidden) >= 1 and len(shown) == 1  # the canary pool is not excepted
    [how] = hidden[0]["suppressions"]
    assert how["kind"] == "external" and how["status"] == "accepted"
    assert how["justification"] == "capacity crunch until Q4 (policy exception, owner gpu-platform, expires 2099-12-31)"
    assert hidden[0]["locations"][0]["physicalLocation"]["region"]["startLine"] > 1


def test_omit_suppressed_leaves_covered_findings_out_of_the_upload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    sarif_validator: jsonschema.Draft4Validator,
) -> None:
    """GitHub code scanning shows results with ``suppressions`` as open alerts (github/codeql-action#1230)."""
    fleet = build_fleet(tmp_path, FIXTURES / "GS604" / "fail" / "fleet")
    write_pack(tmp_path / "policies", "p", "exceptions:\n  - rules: [GS604]\n    cluster: c1\n    pool: main\n"
               "    owner: gpu-platform\n    reason: capacity crunch until Q4\n    expires: 2099-12-31\n")
    monkeypatch.chdir(tmp_path)
    args = (str(fleet), "--policies", "policies", "--pack", "p", "--format", "sarif")
    _, full = lint(monkeypatch, capsys, *args)
    code, upload = lint(monkeypatch, capsys, *args, "--omit-suppressed")
    full_results = json.loads(full)["runs"][0]["results"]
    doc = json.loads(upload)
    valid(doc, sarif_validator)
    results = doc["runs"][0]["results"]
    assert any("suppressions" in r for r in full_results)
    assert results and not any("suppressions" in r for r in results)
    assert results == [r for r in full_results if "suppressions" not in r]
    assert code == 1, "the finding no exception covers still fails the gate"


def test_unusable_input_has_execution_unsuccessful_and_full_rule_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    sarif_validator: jsonschema.Draft4Validator,
) -> None:
    fleet = build_fleet(tmp_path, files={"clusters/broken.yaml": "kind: Cluster\nmetadata: {name: [unclosed\n"})
    monkeypatch.chdir(tmp_path)
    code, out = lint(monkeypatch, capsys, str(fleet), "--format", "sarif")
    assert code == 2
    doc = json.loads(out)
    valid(doc, sarif_validator)
    run = doc["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert run["results"]
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["help"]["markdown"] and rule["fullDescription"]
        assert "helpUri" not in rule or rule["helpUri"].startswith("https://")


def test_junit_cases_carry_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    fleet = build_fleet(tmp_path, FIXTURES / "GS502" / "fail" / "fleet")
    monkeypatch.chdir(tmp_path)
    _, out = lint(monkeypatch, capsys, str(fleet), "--format", "junit")
    cases = [c for c in ET.fromstring(out).iter("testcase") if c.get("classname", "").startswith("GS502")]
    assert cases and all(c.get("file", "").endswith("c1.yaml") and int(c.get("line", "0")) > 0 for c in cases)
