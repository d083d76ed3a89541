"""The portable path: the lock and cache folders gpuspec uses come from filelock and platformdirs, and the
laptop checks (scripts/portable-check, which the macOS job of tests.yml runs) pass on this checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuspec import usercache
from gpuspec.render.writer import lock_path, output_lock

REPO = Path(__file__).resolve().parents[2]


def test_tests_workflow_runs_the_portable_check_on_macos() -> None:
    jobs = yaml.safe_load((REPO / ".github" / "workflows" / "tests.yml").read_text())["jobs"]
    portable = jobs["portable"]
    assert "macos-latest" in portable["strategy"]["matrix"]["os"]
    assert any(step.get("run") == "bash scripts/portable-check" for step in portable["steps"])


def test_portable_check_passes_here(tmp_path: Path) -> None:
    gpuspec = shutil.which("gpuspec") or str(Path(sys.executable).parent / "gpuspec")
    env = {**os.environ, "PATH": f"{Path(gpuspec).parent}:{os.environ['PATH']}",
           "GPUSPEC_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(["bash", str(REPO / "scripts" / "portable-check")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "portable-check: ok" in done.stdout


def test_cache_root_is_the_platform_folder_unless_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPUSPEC_CACHE_DIR", raising=False)
    monkeypatch.delenv("GPUSPEC_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert usercache.cache_dir() == tmp_path / "xdg" / "gpuspec"
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "mine"))
    assert usercache.cache_dir() == tmp_path / "mine"


def test_render_lock_lives_outside_the_output_and_serialises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "repo" / "rendered"
    (tmp_path / "repo").mkdir()
    path = lock_path(out)
    assert path.parent == tmp_path / "cache" / "locks" and not path.is_relative_to(tmp_path / "repo")
    assert lock_path(tmp_path / "repo" / "." / "rendered") == path, "one lock per folder, however spelled"
    with output_lock(out):
        child = subprocess.run(
            [sys.executable, "-c", "import sys; from pathlib import Path\n"
             "from gpuspec.render.writer import output_lock\nfrom gpuspec.errors import GpuspecError\n"
             "try:\n    with output_lock(Path(sys.argv[1]), timeout=0.2): print('got it')\n"
             "except GpuspecError as e: print('busy:', e)", str(out)],
            env={**os.environ}, capture_output=True, text=True, timeout=60, check=False)
        assert "busy:" in child.stdout and "gave up waiting" in child.stdout, child.stdout + child.stderr
    with output_lock(out, timeout=0.2):
        pass
