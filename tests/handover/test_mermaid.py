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
