"""Fixtures shared by every test area."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_FLEET = REPO_ROOT / "fleet"
EXAMPLE_POLICIES = REPO_ROOT / "policies"
TOOLS_BIN = REPO_ROOT / ".tools" / "bin"


def find_shared_dir() -> Path:
    """The shared/ folder beside the checkout (or $GPUSPEC_SHARED)."""
    env = os.environ.get("GPUSPEC_SHARED")
    return Path(env) if env else REPO_ROOT.parent / "shared"


@pytest.fixture(scope="session", autouse=True)
def _private_user_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every gpuspec run of the suite (in-process or child) uses a cache folder of its own, never ~/.cache."""
    os.environ["GPUSPEC_CACHE_DIR"] = str(tmp_path_factory.mktemp("gpuspec-cache"))
    os.environ.pop("GPUSPEC_NO_CACHE", None)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only shared/ folder with upstream data; the tests that need it fail without it."""
    path = find_shared_dir()
    assert (path / "upstream").is_dir(), f"shared data not found at {path} (set GPUSPEC_SHARED)"
    return path


@pytest.fixture
def fleet_copy(tmp_path: Path) -> Path:
    """A writable copy of the example fleet (and policies) in a temporary repository folder."""
    shutil.copytree(EXAMPLE_FLEET, tmp_path / "fleet")
    shutil.copytree(EXAMPLE_POLICIES, tmp_path / "policies")
    return tmp_path / "fleet"


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
