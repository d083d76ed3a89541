"""The Mermaid blocks gpuspec writes parse with Mermaid's own parser (installed by scripts/install-mermaid)."""

from __future__ import annotations

import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from .helpers import REPO_ROOT, copy_example, documents
from .test_escaping import HOSTILE, _hostile_fleet

CHECK = REPO_ROOT / ".tools" / "mermaid" / "check.mjs"


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None or not (CHECK.parent / "node_modules" / "mermaid").is_dir():
        message = "MERMAID PARSER MISSING: run scripts/install-mermaid (needs node and npm); Mermaid blocks unchecked"
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    return found


def test_documents_and_plan_comment_parse(node: str, tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    _hostile_fleet(root, HOSTILE)
    hostile = tmp_path / "hostile.md"
    hostile.write_text(documents(root)["handover/infer-north.md"], encoding="utf-8")
    files = [*sorted((REPO_ROOT / "rendered" / "handover").glob("*.md")), hostile,
             REPO_ROOT / "tests" / "plan" / "golden" / "plan-two-waves.md"]
    result = subprocess.run([node, str(CHECK), *map(str, files)], capture_output=True, text=True, check=False,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 invalid" in result.stdout and not result.stdout.startswith("0 mermaid")


def test_parser_rejects_a_broken_block(node: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.md"
    broken.write_text('```mermaid\nflowchart LR\n  a["x"] --> b[[[ "\n```\n', encoding="utf-8")
    result = subprocess.run([node, str(CHECK), str(broken)], capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 1 and "1 invalid" in result.stdout


def _placement(name: str) -> str:
    text = (REPO_ROOT / "rendered" / "handover" / f"{name}.md").read_text(encoding="utf-8")
    return text.split("## Placement scheme", 1)[1].split("```mermaid\n", 1)[1].split("```", 1)[0]


def test_placement_reads_in_rollout_order_and_names_what_tenants_get() -> None:
    block = _placement("infer-north")
    lines = [line.strip() for line in block.splitlines()]
    waves = [line.split("[", 1)[0].split()[1] for line in lines if line.startswith("subgraph ")]
    assert waves == ["wave1", "wave2", "wave3"], "waves are declared in rollout order, so drawn left to right"
    assert 'cluster -->|"rolls out first"| wave1' in lines
    assert 'wave1 -->|"then, once wave 1 is healthy"| wave2' in lines
    assert 'wave2 -->|"then, once wave 2 is healthy"| wave3' in lines
    tenant_edges = [line for line in lines if "-.->" in line]
    assert tenant_edges and all('-.->|"runs on"|' in line for line in tenant_edges)
    mig = _placement("train-east")
    assert "0 nvidia.com/gpu" not in mig and "112 nvidia.com/mig-1g.10gb" in mig, "a MIG tenant shows what it gets"
    document = (REPO_ROOT / "rendered" / "handover" / "infer-north.md").read_text(encoding="utf-8")
    assert "Read left to right: pool waves in rollout order" in document
