"""Fixtures for the verify tests: the real helm/kubectl from .tools/bin and the upstream data in ../shared."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gpuspec.tools import KustomizeCommand

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS_BIN = REPO_ROOT / ".tools" / "bin"
MINI_CHART = REPO_ROOT / "tests" / "fixtures" / "charts" / "gpu-operator-mini"


def shared_root() -> Path:
    """The shared/ folder: env GPUSPEC_SHARED, else ``<repo root>/../shared``."""
    env = os.environ.get("GPUSPEC_SHARED")
    return Path(env) if env else REPO_ROOT.parent / "shared"


def ensure_tools() -> Path:
    """Run scripts/install-tools when .tools/bin lacks helm or kubectl; fail the session if that fails."""
    if not ((TOOLS_BIN / "helm").is_file() and (TOOLS_BIN / "kubectl").is_file()):
        proc = subprocess.run(
            [str(REPO_ROOT / "scripts" / "install-tools")], capture_output=True, text=True, timeout=600, check=False
        )
        if proc.returncode != 0:
            pytest.fail(f"scripts/install-tools failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return TOOLS_BIN


@pytest.fixture(scope="session")
def tools_bin() -> Path:
    """``<repo>/.tools/bin`` with helm and kubectl installed by the project's own installer."""
    return ensure_tools()


@pytest.fixture(scope="session")
def helm_bin(tools_bin: Path) -> Path:
    """The pinned helm binary."""
    return tools_bin / "helm"


@pytest.fixture(scope="session")
def kustomize_cmd(tools_bin: Path) -> KustomizeCommand:
    """``kubectl kustomize`` with the pinned kubectl."""
    return KustomizeCommand(argv=(str(tools_bin / "kubectl"), "kustomize"), via="kubectl")


@pytest.fixture(scope="session")
def upstream_dir() -> Path:
    """``../shared/upstream`` (real upstream CRDs and values files); tests fail when it is missing."""
    path = shared_root() / "upstream"
    assert path.is_dir(), f"upstream data not found at {path} (set GPUSPEC_SHARED)"
    return path


@pytest.fixture(scope="session")
def mini_chart() -> Path:
    """The project's small GPU Operator-shaped test chart."""
    return MINI_CHART
