"""Fixtures for the tools tests: the real helm/kubectl installed by scripts/install-tools."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS_BIN = REPO_ROOT / ".tools" / "bin"


@pytest.fixture(scope="session")
def tools_bin() -> Path:
    """``<repo>/.tools/bin``, installed by scripts/install-tools when helm or kubectl is missing."""
    if not ((TOOLS_BIN / "helm").is_file() and (TOOLS_BIN / "kubectl").is_file()):
        proc = subprocess.run(
            [str(REPO_ROOT / "scripts" / "install-tools")], capture_output=True, text=True, timeout=600, check=False
        )
        if proc.returncode != 0:
            pytest.fail(f"scripts/install-tools failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return TOOLS_BIN
