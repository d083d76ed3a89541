"""Bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F) in a spec or a policy pack reach no
output raw: every report format of lint, validate, deviations, plan and upgrade, the handover documents and every
rendered file show them escaped (``\\u202e``; in JSON and YAML the escape is the same string value)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from hostile.hostile_cli import REPO, gpuspec

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"
HOSTILE = "evil\u202eabc\u2066x\u2069\u200f"


def _raw(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in BIDI if c in text]


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t.invalid", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root.parent)}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _sub(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository: the example fleet, then a commit that puts bidi controls into a priority class's
    description, a deviation's reason and owner, an inline suppression's reason, the fleet's description, a custom
    rule's title, message, hint and rationale (the acme pack, now selected) and two policy exceptions."""
    root = tmp_path_factory.mktemp("bidi") / "repo"
    shutil.copytree(REPO / "fleet", root / "fleet")
    shutil.copytree(REPO / "policies", root / "policies")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    cluster = root / "fleet" / "clusters" / "infer-north.yaml"
    _sub(cluster, "description: Online inference; preempts batch work", f'description: "Online {HOSTILE} inference"')
    _sub(cluster, "reason: T4 nodes have 32 GiB; the cap keeps a rebuild off ETL memory.", f'reason: "T4 {HOSTILE}"')
    _sub(cluster, "    owner: sre-dc-north\n    ticket: OPS-2291", f'    owner: "sre-{HOSTILE}"\n    ticket: OPS-2291')
    _sub(cluster, "    env: prod\n", "")  # ORG001 of the acme pack reports it
    _sub(cluster, "ownership:\n", f"# gpuspec: ignore GS604 -- because {HOSTILE}\nownership:\n")
    fleet = root / "fleet" / "fleet.yaml"
    _sub(fleet, "description: GPU Operator fleet of the Acme ML platform team", f'description: "GPU {HOSTILE} fleet"')
    _sub(fleet, "packs: [default]", "packs: [acme]")
    pack = root / "policies" / "acme.yaml"
    _sub(pack, "title: Clusters carry env and region labels", f'title: "Clusters {HOSTILE} labels"')
    _sub(pack, 'message: "cluster {name} lacks the env or region label reports key on"',
         'message: "cluster {name} lacks ' + HOSTILE + '"')
    _sub(pack, 'hint: "add metadata.labels.env (prod, staging, dev) and .region"', f'hint: "add {HOSTILE}"')
    _sub(pack, "rationale: FinOps reports and Alertmanager routes group clusters by them.", f'rationale: "{HOSTILE}"')
    pack.write_text(pack.read_text() + "exceptions:\n" + "".join(
        f'  - rules: [{rule}]\n    cluster: {name}\n    owner: "own-{HOSTILE}"\n    reason: "why {HOSTILE}"\n'
        "    expires: 2099-03-31\n" for rule, name in (("ORG001", "infer-north"), ("GS202", "train-east"))))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "hostile")
    return root


LINT_FORMATS = ["text", "json", "sarif", "github", "junit", "gitlab"]
#: Commands whose output shows some of the hostile text (escaped), and commands that must merely keep it out.
SHOWING = [
    *[["lint", "--format", f, "--today", "2100-01-01"] for f in LINT_FORMATS],  # expired exceptions name owners
    *[["lint", "--format", f, "--today", "2025-01-01"] for f in ("text", "sarif")],  # source line, rule metadata
    *[["deviations", "--format", f] for f in ("text", "json", "markdown")],
    ["handover"],
]
QUIET = [
    *[["lint", "--format", f, "--today", "2025-01-01"] for f in ("json", "github", "junit", "gitlab")],
    *[["validate", "--format", f] for f in ("text", "json")],
    *[["plan", "--base", "HEAD~1", "--format", f] for f in ("text", "json", "markdown")],
    *[["upgrade", "--cluster", "infer-north", "--operator", "v26.7.0", "--format", f]
      for f in ("text", "json", "markdown")],
]


@pytest.mark.parametrize("args", SHOWING + QUIET, ids=lambda args: "-".join(a.lstrip("-") for a in args))
def test_no_report_shows_a_raw_bidi_control(args: list[str], hostile_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    result = gpuspec(args, monkeypatch, capsys, cwd=hostile_repo)
    assert not _raw(result.text), (_raw(result.text), result.text[:3000])
    if args in SHOWING:
        assert "202e" in result.text.lower(), result.text[:3000]
    if "--format" in args and args[args.index("--format") + 1] in ("json", "sarif", "gitlab") and result.out:
        json.loads(result.out)  # still JSON
    if "junit" in args:
        ET.fromstring(result.out)


def test_sarif_keeps_the_rules_text_as_its_value(hostile_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    result = gpuspec(["lint", "--format", "sarif"], monkeypatch, capsys, cwd=hostile_repo)
    rules = json.loads(result.out)["runs"][0]["tool"]["driver"]["rules"]
    org = next(rule for rule in rules if rule["id"] == "ORG001")
    assert HOSTILE in org["shortDescription"]["text"]  # escaped in the bytes, the same text once parsed


def test_rendered_files_escape_bidi_controls_and_keep_the_values(hostile_repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    root = tmp_path / "repo"
    shutil.copytree(hostile_repo, root, ignore=shutil.ignore_patterns(".git"))
    (root / ".git").mkdir()
    result = gpuspec(["render"], monkeypatch, capsys, cwd=root)
    assert result.code == 0, result.text
    files = [p for p in (root / "rendered").rglob("*") if p.is_file()]
    for path in files:
        text = path.read_bytes().decode("utf-8")
        assert not _raw(text), (path, _raw(text))
    north = root / "rendered" / "clusters" / "infer-north"
    assert "\\u202e" in (north / "deviations.yaml").read_text()
    assert "\\u202e" in (root / "rendered" / "handover" / "infer-north.md").read_text()
    classes = list(yaml.safe_load_all((north / "priorityclasses.yaml").read_text()))
    assert any(doc and doc.get("description") == f"Online {HOSTILE} inference" for doc in classes)
    deviations = yaml.safe_load((north / "deviations.yaml").read_text())
    assert f"sre-{HOSTILE}" in json.dumps(deviations, ensure_ascii=False)
    assert gpuspec(["render", "--check"], monkeypatch, capsys, cwd=root).code == 0
