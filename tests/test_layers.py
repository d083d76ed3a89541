"""The package layers are enforced by import-linter: the tree passes, and an upward import makes it fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(package_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    return subprocess.run([str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
                          cwd=package_root, env=env, capture_output=True, text=True, check=False)


def test_the_package_keeps_its_layers() -> None:
    result = _lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    shutil.copytree(REPO / "gpuspec", tmp_path / "gpuspec", ignore=shutil.ignore_patterns("__pycache__"))
    entry = tmp_path / "gpuspec" / "catalogue" / "entry.py"
    entry.write_text(entry.read_text() + "\nimport gpuspec.rules.registry  # an upward import\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout and "gpuspec.catalogue.entry -> gpuspec.rules.registry" in result.stdout
