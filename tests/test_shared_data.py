"""Tests that need ../shared/upstream skip with one loud line without it, and fail instead when CI requires it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Two cheap tests that ask for the shared folder (the SARIF schema lives in shared/upstream).
NEEDS_SHARED = ("tests/report/test_reporters.py::test_sarif_empty_run_is_valid",
                "tests/report/test_reporters.py::test_sarif_is_valid_and_complete")


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("GPUSPEC_REQUIRE_SHARED", "CI")}
    environ.update({"GPUSPEC_SHARED": str(tmp_path / "no-shared"), **env})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *NEEDS_SHARED],
        cwd=REPO, env=environ, capture_output=True, text=True, timeout=120, check=False,
    )


def test_missing_shared_folder_skips_with_one_line_naming_it(tmp_path: Path) -> None:
    proc = _pytest(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    missing = str(tmp_path / "no-shared" / "upstream")
    loud = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED") and missing in line]
    assert len(loud) == 1, proc.stdout
    assert loud[0].startswith("SKIPPED 2 tests"), loud
    assert "2 skipped" in proc.stdout


def test_required_shared_folder_fails_when_missing(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, GPUSPEC_REQUIRE_SHARED="1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "shared data not found" in proc.stdout
    assert "SKIPPED" not in proc.stdout


def test_ci_run_requires_the_shared_folder_under_ci() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert 'if [ "${CI:-}" = "true" ]; then export GPUSPEC_REQUIRE_SHARED=1; fi' in script
