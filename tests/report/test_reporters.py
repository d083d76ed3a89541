"""Reporters: SARIF 2.1.0 (validated against the OASIS schema), GitHub annotations, JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from gpuspec.catalogue import CATALOGUE
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Finding, Severity
from gpuspec.report.base import ReportContext
from gpuspec.report.github import GithubReporter, escape_data, escape_property
from gpuspec.report.junit import JunitReporter
from gpuspec.report.registry import REPORTERS
from gpuspec.report.sarif import SarifReporter, repo_relative

REPO = Path(__file__).resolve().parents[2]
CLUSTER = str(REPO / "fleet" / "clusters" / "train-east.yaml")
DOCS = {
    "GS502": CATALOGUE["GS502"],
    "GS405": CATALOGUE["GS405"],
    "GS999": Entry("GS999", "never hit", Severity.ERROR, "never"),
}
FINDINGS = [
    Finding("GS502", Severity.ERROR, "maxParallelUpgrades 2 is above the policy bound of 1", CLUSTER,
            ("rollout", "maxParallelUpgrades"), "use 1", line=33, column=24,
            spec_path="clusters[train-east].rollout.maxParallelUpgrades"),
    Finding("GS405", Severity.WARNING, "a URL with user:password, 100% bad\nreally", CLUSTER, (),
            line=5, column=3, spec_path="clusters[train-east]"),
    Finding("GS701", Severity.INFO, "the DCGM exporter is off", None),
]
CONTEXT = ReportContext(tool_version="0.1.0", command="lint", rule_docs=DOCS)


@pytest.fixture(scope="module")
def sarif_validator(shared_dir: Path) -> jsonschema.Draft4Validator:
    schema = json.loads((shared_dir / "upstream" / "sarif" / "sarif-schema-2.1.0.json").read_text())
    return jsonschema.Draft4Validator(schema)


def test_all_formats_registered() -> None:
    assert {"text", "json", "sarif", "github", "junit", "gitlab"} <= set(REPORTERS)


def test_sarif_is_valid_and_complete(sarif_validator: jsonschema.Draft4Validator) -> None:
    doc = json.loads(SarifReporter().render(FINDINGS, CONTEXT))
    errors = sorted(sarif_validator.iter_errors(doc), key=lambda e: list(e.path))
    assert errors == [], [e.message for e in errors]
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["GS405", "GS502", "GS701"]  # only rules hit; GS999 absent
    gs502 = rules[1]
    assert gs502["shortDescription"]["text"] == DOCS["GS502"].title
    assert gs502["help"]["text"].startswith("Each upgrading node")
    assert gs502["defaultConfiguration"]["level"] == "warning"
    first = run["results"][0]
    assert first["ruleId"] == "GS502" and first["level"] == "error"
    assert rules[first["ruleIndex"]]["id"] == "GS502"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "fleet/clusters/train-east.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 33, "startColumn": 24}
    assert run["results"][1]["level"] == "warning" and run["results"][2]["level"] == "note"
    assert "locations" not in run["results"][2]


def test_sarif_empty_run_is_valid(sarif_validator: jsonschema.Draft4Validator) -> None:
    doc = json.loads(SarifReporter().render([], CONTEXT))
    assert list(sarif_validator.iter_errors(doc)) == []
    assert doc["runs"][0]["results"] == [] and doc["runs"][0]["tool"]["driver"]["rules"] == []


def test_repo_relative() -> None:
    assert repo_relative(CLUSTER, REPO) == "fleet/clusters/train-east.yaml"
    assert repo_relative("/somewhere/else.yaml", REPO) is None


def test_github_escaping() -> None:
    assert escape_data("100%\r\nx") == "100%25%0D%0Ax"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_annotations() -> None:
    lines = GithubReporter().render(FINDINGS, CONTEXT).splitlines()
    assert lines[0] == (
        "::error file=fleet/clusters/train-east.yaml,line=33,col=24,"
        "title=GS502 Parallel driver upgrades within policy bounds::maxParallelUpgrades 2 is above the policy "
        "bound of 1 (clusters[train-east].rollout.maxParallelUpgrades)%0Ahint: use 1"
    )
    assert lines[1].startswith(
        "::warning file=fleet/clusters/train-east.yaml,line=5,col=3,title=GS405 No credentials%2C")
    assert "user:password%2C" not in lines[1] and "100%25 bad%0Areally" in lines[1]
    assert lines[2] == "::notice title=GS701::the DCGM exporter is off"
    assert len(lines) == 3


def test_junit_is_parseable_and_counts_failures() -> None:
    root = ET.fromstring(JunitReporter().render(FINDINGS, CONTEXT))
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.get("classname", "").split()[0] for c in cases] == ["GS502", "GS405", "GS701"]
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == "GS502"
    assert "train-east.yaml:33:24" in (failure.text or "")
    assert cases[1].find("failure") is None and cases[1].find("system-out") is not None


def test_junit_without_findings_has_one_passing_case() -> None:
    root = ET.fromstring(JunitReporter().render([], CONTEXT))
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 1 and cases[0].find("failure") is None


def test_junit_strips_characters_xml_cannot_hold() -> None:
    finding = Finding("GS405", Severity.ERROR, "bad \x00\x1b byte", None)
    root = ET.fromstring(JunitReporter().render([finding], CONTEXT))
    assert root.find("testsuite/testcase/failure") is not None


#: The fields GitLab's Code Quality report must have per issue (docs.gitlab.com, ci/testing/code_quality:
#: "Code Quality report format"), as a schema the test checks the report against.
GITLAB_CODE_QUALITY = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object", "required": ["path", "lines"],
                "properties": {"path": {"type": "string", "minLength": 1},
                               "lines": {"type": "object", "required": ["begin"],
                                         "properties": {"begin": {"type": "integer", "minimum": 1}}}},
            },
        },
    },
}


def test_gitlab_code_quality_report_places_each_finding_on_its_line() -> None:
    from gpuspec.report.gitlab import GitlabReporter

    doc = json.loads(GitlabReporter().render([*FINDINGS, FINDINGS[0]], CONTEXT))
    jsonschema.validate(doc, GITLAB_CODE_QUALITY)
    assert [i["severity"] for i in doc] == ["critical", "minor", "info", "critical"]
    assert doc[0]["location"] == {"path": "fleet/clusters/train-east.yaml", "lines": {"begin": 33}}
    assert doc[0]["check_name"] == "GS502" and "hint: use 1" in doc[0]["description"]
    assert doc[2]["location"] == {"path": ".", "lines": {"begin": 1}}, "a finding without a file"
    assert len({i["fingerprint"] for i in doc}) == 4, "a repeated finding gets its own fingerprint"
    again = json.loads(GitlabReporter().render([*FINDINGS, FINDINGS[0]], CONTEXT))
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in doc]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{**doc[0], "severity": "error"}], GITLAB_CODE_QUALITY)
