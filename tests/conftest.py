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
    os.environ["GPUSPEC_CACHE_KEY_FILE"] = str(tmp_path_factory.mktemp("gpuspec-config") / "cache.key")
    os.environ.pop("GPUSPEC_CACHE_KEY", None)
    os.environ.pop("GPUSPEC_NO_CACHE", None)


#: Set (to 1) by .ci/run: a missing shared folder fails the tests that need it instead of skipping them.
REQUIRE_SHARED_ENV = "GPUSPEC_REQUIRE_SHARED"
#: The upstream folders found missing in this session (the terminal summary names them once).
_MISSING_SHARED: set[Path] = set()


def shared_required() -> bool:
    """Whether the tests that need ../shared/upstream must fail (CI) rather than skip (a fresh clone) without it."""
    return os.environ.get(REQUIRE_SHARED_ENV, "") not in ("", "0")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only shared/ folder with upstream data.

    Without ``shared/upstream`` the tests that need it are skipped, and the session ends with one line naming the
    missing folder; with ``GPUSPEC_REQUIRE_SHARED=1`` (CI) they fail instead.
    """
    path = find_shared_dir()
    upstream = path / "upstream"
    if not upstream.is_dir():
        if shared_required():
            pytest.fail(f"shared data not found: {upstream} ({REQUIRE_SHARED_ENV} is set; set GPUSPEC_SHARED)")
        _MISSING_SHARED.add(upstream)
        pytest.skip(f"shared data not found: {upstream}")
    return path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One loud line when tests were skipped because ../shared/upstream is missing."""
    for upstream in sorted(_MISSING_SHARED):
        skipped = sum(
            1 for report in terminalreporter.stats.get("skipped", [])
            if f"shared data not found: {upstream}" in str(getattr(report, "longrepr", ""))
        )
        terminalreporter.write_line(
            f"SKIPPED {skipped} tests that need the upstream data folder {upstream} (missing; set GPUSPEC_SHARED "
            "to a shared/ folder with upstream/ to run them)",
            yellow=True, bold=True,
        )


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
