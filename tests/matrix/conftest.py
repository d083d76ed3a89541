"""Fixtures of the support-matrix tests: where the upstream gpu-operator snapshots live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The eight gpu-operator tags whose values.yaml is in ../shared/upstream/gpu-operator.
UPSTREAM_TAGS = ("v23.9.2", "v24.3.0", "v24.6.2", "v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0")


def shared_root() -> Path:
    """The shared/ folder: $GPUSPEC_SHARED, else <repo root>/../shared."""
    env = os.environ.get("GPUSPEC_SHARED")
    return Path(env) if env else REPO_ROOT.parent / "shared"


@pytest.fixture(scope="session")
def upstream_operator() -> Path:
    """Folder with one sub-folder per gpu-operator tag (values.yaml, Chart.yaml); the tests fail without it."""
    path = shared_root() / "upstream" / "gpu-operator"
    assert path.is_dir(), f"upstream gpu-operator snapshots not found at {path} (set GPUSPEC_SHARED)"
    return path
