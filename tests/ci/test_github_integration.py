"""The GitHub integration a fleet repository uses: action.yml and this repository's workflows pass actionlint and
zizmor, and every third-party action is pinned by commit hash."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
ACTION = REPO / "action.yml"
_PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}\Z")


def _tool(name: str) -> str:
    found = shutil.which(name)
    assert found, f"{name} is not installed (test extras)"
    return found


def _uses(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["uses"]] if isinstance(node.get("uses"), str) else []
        return found + [u for v in node.values() for u in _uses(v)]
    if isinstance(node, list):
        return [u for v in node for u in _uses(v)]
    return []


def test_actionlint_passes() -> None:
    proc = subprocess.run([_tool("actionlint"), *map(str, WORKFLOWS)], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_passes() -> None:
    proc = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", str(REPO / ".github" / "workflows"),
                           str(ACTION)], cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_third_party_actions_are_pinned_by_commit() -> None:
    uses = [u for f in (*WORKFLOWS, ACTION) for u in _uses(yaml.safe_load(f.read_text()))]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    for use in uses:
        assert use == "./" or _PINNED.match(use), f"{use} is not pinned to a commit hash"


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_pass_only_known_inputs_to_the_action(workflow: Path) -> None:
    inputs = set(yaml.safe_load(ACTION.read_text())["inputs"])
    for job in yaml.safe_load(workflow.read_text())["jobs"].values():
        for step in job.get("steps", []):
            if step.get("uses") == "./":
                assert set(step.get("with", {})) <= inputs
                assert step["with"]["check"] in ("lint", "render-check", "plan", "verify")


@pytest.mark.parametrize("path", ["action.yml", "ci/gitlab/gpuspec.gitlab-ci.yml"])
def test_shipped_ci_yaml_passes_yamllint_defaults(path: str) -> None:
    """What fleet repositories include or use passes yamllint as they run it: default rules, no problem at all."""
    proc = subprocess.run([_tool("yamllint"), "--strict", "-d", "default", str(REPO / path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
