"""Fixtures for the verify tests: the real helm/kubectl from .tools/bin and the upstream data in ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.tools import KustomizeCommand

REPO_ROOT = Path(__file__).resolve().parents[2]
MINI_CHART = REPO_ROOT / "tests" / "fixtures" / "charts" / "gpu-operator-mini"


@pytest.fixture(scope="session")
def helm_bin(tools_bin: Path) -> Path:
    """The pinned helm binary."""
    return tools_bin / "helm"


@pytest.fixture(scope="session")
def kustomize_cmd(tools_bin: Path) -> KustomizeCommand:
    """``kubectl kustomize`` with the pinned kubectl."""
    return KustomizeCommand(argv=(str(tools_bin / "kubectl"), "kustomize"), via="kubectl")


@pytest.fixture(scope="session")
def upstream_dir(shared_dir: Path) -> Path:
    """``../shared/upstream`` (real upstream CRDs and values files); skipped (CI: failed) when it is missing."""
    return shared_dir / "upstream"


@pytest.fixture(scope="session")
def mini_chart() -> Path:
    """The project's small GPU Operator-shaped test chart."""
    return MINI_CHART
