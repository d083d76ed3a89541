"""Fixtures of the support-matrix tests: where the upstream gpu-operator snapshots live."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The eight gpu-operator tags whose values.yaml is in ../shared/upstream/gpu-operator.
UPSTREAM_TAGS = ("v23.9.2", "v24.3.0", "v24.6.2", "v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0")


@pytest.fixture(scope="session")
def upstream_operator(shared_dir: Path) -> Path:
    """Folder with one sub-folder per gpu-operator tag (values.yaml, Chart.yaml)."""
    path = shared_dir / "upstream" / "gpu-operator"
    assert path.is_dir(), f"upstream gpu-operator snapshots not found at {path} (set GPUSPEC_SHARED)"
    return path
