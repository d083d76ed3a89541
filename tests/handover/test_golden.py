"""Golden documents of the example fleet; `render --check` keeps rendered/handover current."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import EXAMPLE_CLUSTERS, REPO_ROOT, copy_example, documents

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def example_docs() -> dict[str, str]:
    return documents()


@pytest.mark.parametrize("name", [*EXAMPLE_CLUSTERS, "README"])
def test_golden(example_docs: dict[str, str], name: str) -> None:
    text = example_docs[f"handover/{name}.md"]
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("GPUSPEC_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_committed_documents_are_current(example_docs: dict[str, str]) -> None:
    for path, text in example_docs.items():
        assert (REPO_ROOT / "rendered" / path).read_text(encoding="utf-8") == text, path


def test_every_section_is_there(example_docs: dict[str, str]) -> None:
    for name in EXAMPLE_CLUSTERS:
        text = example_docs[f"handover/{name}.md"]
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert headings == [
            "## Contacts", "## Placement scheme", "## How a pod reaches a GPU", "## Pinned versions and image sources",
            "## Deliberate deviations", "## Roles: who may change what", "## Update policy", "## Rollback plan",
            "## Rollback criteria: when to roll back, and how", "## Migrating hand-configured nodes",
            "## Monitoring and alerts", "## Typical failures and the first commands to run",
            "## Acceptance checklist", "## Shift-handover checklist", "## Disaster recovery: restore order",
            *(["## Autoscaling: the readiness gate"] if name == "train-east" else []),
        ]


def _gpuspec(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUSPEC_CACHE_DIR": str(root / ".cache")}
    return subprocess.run([sys.executable, "-m", "gpuspec.cli.main", *args], cwd=root, env=env,
                          capture_output=True, text=True, check=False)


def test_render_check_fails_on_a_stale_document(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    shutil.copytree(REPO_ROOT / "rendered", root / "rendered")
    assert _gpuspec(root, "render", "--check").returncode == 0
    doc = root / "rendered/handover/train-east.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("× 8", "× 4", 1), encoding="utf-8")
    result = _gpuspec(root, "render", "--check")
    assert result.returncode == 1
    assert "b/rendered/handover/train-east.md" in result.stdout
    # A spec change makes the document stale too: the placement table shows the new node count.
    assert _gpuspec(root, "render").returncode == 0
    spec = root / "fleet/clusters/train-east.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("nodes: 32", "nodes: 30"), encoding="utf-8")
    result = _gpuspec(root, "render", "--check")
    assert result.returncode == 1
    assert "+| `h100` | pool wave 2 | 30 × 8 = 240 |" in result.stdout


def test_handover_command(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    one = _gpuspec(root, "handover", "--cluster", "infer-north")
    assert one.returncode == 0, one.stderr
    # The same document `gpuspec render` writes when run the same way (same folder, same relative paths).
    assert _gpuspec(root, "render").returncode == 0
    assert one.stdout == (root / "rendered/handover/infer-north.md").read_text(encoding="utf-8")
    out = _gpuspec(root, "handover", "--output", "docs")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["README.md", "infer-north.md", "train-east.md"]
    bad = _gpuspec(root, "handover", "--cluster", "nope")
    assert bad.returncode == 2 and "no cluster named nope" in bad.stderr and "Traceback" not in bad.stderr


def test_readme_excerpt_is_current() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    part = readme.split("## Handover documents for operations", 1)[1].split("\n## ", 1)[0]
    quoted = [line[2:] for line in part.splitlines() if line.startswith("> |") or line.startswith("> kubectl")]
    assert len(quoted) >= 4
    doc = (REPO_ROOT / "rendered/handover/infer-north.md").read_text(encoding="utf-8").splitlines()
    for line in quoted:
        assert line in doc, line
    for link in ("rendered/handover/README.md", "rendered/handover/infer-north.md", "rendered/handover/train-east.md"):
        assert f"]({link})" in readme and (REPO_ROOT / link).is_file()


def test_paths_follow_the_fleet_git_path(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    settings = root / "fleet" / "fleet.yaml"
    settings.write_text(settings.read_text(encoding="utf-8").replace("path: rendered", "path: deploy/gpu"),
                        encoding="utf-8")
    doc = documents(root)["handover/train-east.md"]
    assert "`deploy/gpu/clusters/train-east/gpu-operator.values.yaml`" in doc
    assert "rendered/clusters" not in doc
