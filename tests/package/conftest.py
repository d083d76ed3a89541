"""A wheel of this checkout, installed in a fresh virtualenv, as `pipx install gpuspec` would (slow: not in the suite).

Run with ``bash scripts/test-package`` (which ``.ci/run`` calls); the default pytest run deselects ``slow``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Installed:
    """A virtualenv with only the built wheel (and its runtime dependencies) installed."""

    wheel: Path
    venv: Path

    @property
    def gpuspec(self) -> Path:
        """The installed console script."""
        return self.venv / "bin" / "gpuspec"

    def run(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run the installed gpuspec with a PATH that has neither the checkout's venv nor its tools."""
        environ = {"PATH": f"{self.venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd.parent), "NO_COLOR": "1",
                   "GPUSPEC_CACHE_DIR": str(cwd.parent / "user-cache"), **(env or {})}
        return subprocess.run([str(self.gpuspec), *args], cwd=cwd, env=environ, capture_output=True, text=True,
                              timeout=300, check=False)


def build_wheel(dest: Path) -> Path:
    """Build the wheel of this checkout into ``dest`` (pip's PEP 517 build, isolated)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--wheel-dir", str(dest), str(REPO)], check=True, timeout=600)
    [wheel] = dest.glob("gpuspec-*.whl")
    return wheel


def fresh_venv(path: Path, *requirements: str) -> Path:
    """A new virtualenv at ``path`` with ``requirements`` installed (pip's cache makes this offline-fast)."""
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    subprocess.run([str(path / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *requirements], check=True, timeout=900, env={**os.environ, "PIP_NO_INPUT": "1"})
    return path


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built once and installed into a fresh virtualenv without extras."""
    root = tmp_path_factory.mktemp("package")
    wheel = build_wheel(root / "dist")
    return Installed(wheel, fresh_venv(root / "venv", str(wheel)))
