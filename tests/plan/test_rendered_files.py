"""`plan --base` names every rendered file a change touches; a change the rollout model does not read (a label)
is "rendered only", never "no fleet changes" over a diff of rendered/."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .helpers import GIT_ENV, FleetRepo, gpuspec

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def example(tmp_path: Path) -> FleetRepo:
    """The example fleet, rendered and committed."""
    root = tmp_path / "fleet-repo"
    for folder in ("fleet", "policies"):
        shutil.copytree(REPO / folder, root / folder)
    repo = FleetRepo(root)
    assert gpuspec(repo, "render").returncode == 0
    repo.git("init", "-q", "-b", "main")
    repo.commit("base")
    return repo


def _edit(repo: FleetRepo, old: str, new: str) -> None:
    path = repo.fleet / "clusters" / "train-east.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    assert gpuspec(repo, "render").returncode == 0


def _git_rendered(repo: FleetRepo) -> set[str]:
    proc = subprocess.run(["git", "diff", "--name-only", "HEAD", "--", "rendered"], cwd=repo.root, check=True,
                          capture_output=True, text=True, env={**GIT_ENV, "PATH": "/usr/bin:/bin"})
    return {line.removeprefix("rendered/") for line in proc.stdout.splitlines()}


def test_a_label_edit_is_rendered_only_and_names_its_files(example: FleetRepo) -> None:
    _edit(example, "region: us-east-1", "region: us-east-2")
    touched = _git_rendered(example)
    assert touched == {"handover/train-east.md"}
    text = gpuspec(example, "plan", "--base", "HEAD")
    assert text.returncode == 0, text.stderr
    assert "no fleet changes" not in text.stdout
    assert "rendered only: 1 rendered file(s) change since HEAD" in text.stdout
    assert "rendered only: files that change without a change of the spec's meaning (1):" in text.stdout
    assert "  train-east:\n    handover/train-east.md  [changed]" in text.stdout
    data = json.loads(gpuspec(example, "plan", "--base", "HEAD", "--format", "json").stdout)
    assert data["summary"]["rendered_only"] is True and data["summary"]["rendered_files"] == 1
    assert data["rendered"] == [{"path": "handover/train-east.md", "status": "changed", "cluster": "train-east"}]
    markdown = gpuspec(example, "plan", "--base", "HEAD", "--format", "markdown").stdout
    assert "### Rendered only: files that change without a change of the spec's meaning (1)" in markdown
    assert "| `train-east` | `handover/train-east.md` | changed |" in markdown


def test_a_spec_change_names_every_rendered_file_it_touches(example: FleetRepo) -> None:
    _edit(example, "maxUnavailable: 10%", "maxUnavailable: 20%")
    touched = _git_rendered(example)
    assert len(touched) == 3
    data = json.loads(gpuspec(example, "plan", "--base", "HEAD", "--format", "json").stdout)
    assert {f["path"] for f in data["rendered"]} == touched
    assert {f["cluster"] for f in data["rendered"]} == {"train-east"}
    assert data["summary"]["rendered_only"] is (not data["changes"])
    text = gpuspec(example, "plan", "--base", "HEAD").stdout
    assert all(f"    {path}  [changed]" in text for path in touched)


def test_added_and_removed_rendered_files(example: FleetRepo) -> None:
    (example.root / "fleet" / "clusters" / "infer-north.yaml").unlink()
    assert gpuspec(example, "render").returncode == 0
    data = json.loads(gpuspec(example, "plan", "--base", "HEAD", "--format", "json").stdout)
    statuses = {f["path"]: f["status"] for f in data["rendered"]}
    assert statuses["clusters/infer-north/gpu-operator.values.yaml"] == "removed"
    assert statuses["handover/README.md"] == "changed"
    assert set(statuses) == _git_rendered(example)
    assert data["rendered"][0]["cluster"] is None  # fleet-wide files first
