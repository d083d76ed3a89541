"""Free-form values cannot inject Markdown or HTML into the plan comment, nor forge lines in text reports;
the fields that reach the comment, rendered/ or ResourceQuotas have a validated shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuspec.findings import Finding, Severity
from gpuspec.plan.markdown import cell, code, mermaid_label
from gpuspec.report.base import ReportContext
from gpuspec.report.text import TextReporter
from hostile.hostile_cli import REPO, gpuspec, make_repo

HOSTILE = "![x](https://evil.example/i.png) @octocat <!-- gpuspec-plan --> <img src=x>\n| forged | row |"


def test_markdown_cell_escapes_images_mentions_html_and_lines() -> None:
    text = cell(HOSTILE)
    assert "\n" not in text
    assert "![" not in text and "](" not in text.replace("\\](", "")
    assert "@octocat" not in text and "<!--" not in text and "<img" not in text
    assert "| forged" not in text.replace("\\| forged", "")


def test_markdown_code_span_cannot_be_closed_early() -> None:
    text = code("a`b ``c`` | d\ne")
    assert text.startswith("```") and text.endswith("```") and "\n" not in text
    assert "\\|" in text
    assert "\n" not in mermaid_label("x\n```\n<!-- gpuspec-plan -->")


def test_text_report_escapes_newlines_in_messages() -> None:
    finding = Finding("GS750", Severity.ERROR, "node 'n1\nfleet/x.yaml:1:1: error GS999 forged' is wrong",
                      "nodes.json", hint="a\rb")
    report = TextReporter().render([finding], ReportContext(tool_version="t", command="audit"))
    assert not any(line.startswith("fleet/x.yaml") for line in report.splitlines())
    assert "\\n" in report


def test_audit_node_names_cannot_forge_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    nodes = json.loads((REPO / "tests" / "audit" / "fixtures" / "nodes" / "drift-count-mismatch.json").read_text())
    for item in nodes["items"]:
        item["metadata"]["name"] += "\nFORGED: error GS999 all clear"
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(nodes))
    fleet = REPO / "tests" / "audit" / "fixtures" / "fleet"
    result = gpuspec(["audit", str(fleet), "--cluster", "lab", "--nodes", str(path)], monkeypatch, capsys)
    assert result.code in (0, 1)
    assert not any(line.startswith("FORGED") for line in result.text.splitlines())


@pytest.mark.parametrize(("old", "new", "words"), [
    ("      kernel: 5.15.0-143-generic\n", "      kernel: \"5.15.0 <img src=x>\"\n", "kernel release"),
    ("      product: H100-SXM5-80GB\n", "      product: \"H100 @octocat\"\n", "GPU product id"),
    ("      version: \"22.04\"\n", "      version: \"22.04\\n| forged |\"\n", "OS version"),
])
def test_free_form_fields_have_a_shape(old: str, new: str, words: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    path = root / "fleet" / "clusters" / "train-east.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    result = gpuspec(["validate"], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "GS104" in result.out and words in result.out


def test_mig_quota_keys_and_profiles_have_a_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    path = root / "fleet" / "clusters" / "train-east.yaml"
    text = path.read_text()
    assert "      mig-1g.10gb: 112\n" in text
    path.write_text(text.replace("      mig-1g.10gb: 112\n", "      limits.cpu: 112\n      mig-1g.10gb: 112\n"))
    result = gpuspec(["validate"], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "MIG resource" in result.out


def test_git_path_cannot_climb_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    path = root / "fleet" / "fleet.yaml"
    text = path.read_text()
    assert "  path: rendered\n" in text
    path.write_text(text.replace("  path: rendered\n", "  path: ../../..\n", 1))
    result = gpuspec(["validate"], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "GS104" in result.out and "no \"..\"" in result.out
