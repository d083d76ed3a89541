"""Fixtures of the render tests: upstream data, kubectl, a rendered example fleet."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .fleets import REPO_ROOT


@pytest.fixture(scope="session")
def upstream(shared_dir: Path) -> Path:
    """``../shared/upstream`` (real chart values and CRDs)."""
    return shared_dir / "upstream"


@pytest.fixture(scope="session")
def kubectl() -> str:
    """kubectl from .tools/bin, else PATH; the kustomize tests fail without it."""
    local = REPO_ROOT / ".tools" / "bin" / "kubectl"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    found = shutil.which("kubectl")
    assert found, "kubectl not found in .tools/bin or PATH (run scripts/install-tools)"
    return found
