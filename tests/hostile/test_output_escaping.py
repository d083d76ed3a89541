"""One escaping layer per output kind: no value from the fleet can start a GitHub workflow command, a terminal
escape sequence, a bidi reordering, raw HTML or a mention in any command's output."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpuspec.escaping import terminal, workflow_data, workflow_property, xml_line
from gpuspec.findings import Finding, Severity
from gpuspec.report.base import ReportContext
from gpuspec.report.github import GithubReporter
from gpuspec.report.junit import JunitReporter
from hostile.hostile_cli import gpuspec, make_repo

HOSTILE = "x\n::error file=a::forged\n::add-mask::y\n::stop-commands::tok\x1b]8;;http://e.example\x1b\\ok\u202eabc\u2028z"
UNSAFE = ("\x1b", "\u202e", "\u2028", "\r")


def _clean(text: str) -> None:
    for char in UNSAFE:
        assert char not in text, repr(text)
    assert not re.search(r"(?m)^\s*::", text), text


@pytest.mark.parametrize("text", [HOSTILE, "\u2066\u2069\u200f\x85\x9b", "a\rb"])
def test_every_escaper_removes_line_breaks_and_controls(text: str) -> None:
    for escaped in (terminal(text), workflow_data(text), workflow_property(text), xml_line(text)):
        assert "\n" not in escaped and "\r" not in escaped
        _clean(escaped)


def _deviation_fleet(root: Path) -> None:
    path = root / "fleet" / "clusters" / "infer-north.yaml"
    text = path.read_text()
    hostile = json.dumps(HOSTILE + " @octo-org/admins <details><summary>x</summary> </details> <img src=x>")
    old = "    owner: sre-dc-north\n    ticket: OPS-2291"
    text = text.replace(old, f"    owner: {hostile}\n    ticket: OPS-2291", 1)
    path.write_text(text)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_deviations_escape_reason_and_owner(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    _deviation_fleet(root)
    result = gpuspec(["deviations", "--format", fmt], monkeypatch, capsys, cwd=root)
    if result.code != 0:  # the spec may refuse such an owner: then nothing of it is printed raw either
        _clean(result.text)
        return
    if fmt == "json":
        assert "\x1b" not in result.out and "\\u001b" in result.out  # JSON escapes it itself
        return
    _clean(result.out)
    if fmt == "markdown":
        assert "<details" not in result.out and "</details>" not in result.out and "<img" not in result.out
        assert "@octo-org" not in result.out


def _finding(file: str, message: str) -> Finding:
    return Finding("GS405", Severity.ERROR, message, file=file, line=3, column=1, spec_path="clusters[a\x1b]")


def test_github_and_junit_reports_escape_paths_and_messages() -> None:
    finding = _finding("fleet/clusters/\x1b[31m\u202eevil.yaml", "bad\n::error::forged\x1b]8;;x")
    context = ReportContext(tool_version="0", command="lint", rule_docs={})
    github = GithubReporter().render([finding], context)
    assert github.count("\n") == 1 and github.startswith("::error file=fleet/clusters/")  # one command, ours
    _clean(github[2:])
    junit = JunitReporter().render([finding], context)
    _clean(junit)
    root = ET.fromstring(junit)
    for element in root.iter():
        for value in element.attrib.values():
            assert "\n" not in value
        for line in (element.text or "").splitlines():
            assert not line.lstrip().startswith("::"), line


def test_plan_unusable_fleet_message_escapes_a_hostile_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    root = make_repo(tmp_path)
    (root / ".git").rmdir()
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-qm", "b"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    path = root / "fleet" / "clusters" / "infer-north.yaml"
    path.write_text(path.read_text() + json.dumps(HOSTILE) + ": 1\n")
    for args in (["plan", "--base", "HEAD"], ["plan", "--base", "HEAD", "--format", "markdown"], ["lint"],
                 ["lint", "--format", "github"], ["lint", "--format", "junit"], ["validate"]):
        result = gpuspec(args, monkeypatch, capsys, cwd=root)
        assert result.code == 2, (args, result.text)
        if "github" in args:  # every line is one of gpuspec's own annotations
            assert all(re.match(r"::(error|warning|notice) file=fleet/clusters/[a-z-]+\.yaml,", line)
                       for line in result.out.splitlines()), result.out
            _clean(re.sub(r"(?m)^::", "", result.out))
        else:
            _clean(result.text)
