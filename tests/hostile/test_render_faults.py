"""Rendering under faults: stale temporary trees are removed, renders of one output folder take turns,
and worker processes die with a killed parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuspec.render.writer import output_lock, write_output
from hostile.hostile_cli import REPO, gpuspec, make_repo


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}


def test_stale_temporary_trees_are_removed_even_when_nothing_changes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    assert gpuspec(["render"], monkeypatch, capsys, cwd=root).code == 0
    # What a render killed right after the swap leaves: the old tree, under a pid that is alive (reused).
    for name in (f".rendered.gpuspec-tmp-{os.getpid()}-abc", ".rendered.gpuspec-tmp-99999999-xyz.old"):
        (root / name / "clusters").mkdir(parents=True)
        (root / name / "clusters" / "old.yaml").write_text("old: tree\n")
    result = gpuspec(["render"], monkeypatch, capsys, cwd=root)
    assert result.code == 0 and "0 written" in result.out
    assert not list(root.glob(".rendered.gpuspec-tmp-*"))


def test_write_output_cleans_up_and_keeps_other_hidden_folders(tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    write_output(out, {"a.yaml": b"a: 1\n"})
    (tmp_path / ".rendered.gpuspec-tmp-1-x").mkdir()
    (tmp_path / ".other-tool").mkdir()
    write_output(out, {"a.yaml": b"a: 1\n"})
    assert not (tmp_path / ".rendered.gpuspec-tmp-1-x").exists() and (tmp_path / ".other-tool").exists()


def test_a_render_waits_for_the_one_writing_the_same_folder(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    out = root / "rendered"
    with output_lock(out):
        proc = subprocess.Popen([sys.executable, "-m", "gpuspec.cli.main", "render"], cwd=root, env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        assert proc.poll() is None, proc.communicate()  # still waiting for the lock
        assert not out.exists()
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "written" in stdout and out.is_dir()


def test_concurrent_renders_report_what_is_on_disk(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-m", "gpuspec.cli.main", "render"], cwd=root, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    files = sum(1 for f in (root / "rendered").rglob("*") if f.is_file())
    written = [int(out.split(": ", 1)[1].split(" written")[0]) for out, _ in outputs]
    assert sorted(written) == [0, files]  # one wrote everything, the other found it all in place
    assert not list(root.glob(".rendered.gpuspec-tmp-*"))


WORKER_SCRIPT = """
import sys, time
from gpuspec.render.workers import fork_pool

def work(_):
    time.sleep(60)

pool = fork_pool(2)
pool.map_async(work, [1, 2])
time.sleep(0.5)
print(" ".join(str(p.pid) for p in pool._pool), flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is dead too
        return handle.read().split(") ", 1)[1][0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux-only")
def test_worker_processes_die_with_a_killed_parent() -> None:
    proc = subprocess.Popen([sys.executable, "-c", WORKER_SCRIPT], env=_env(), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    workers = [int(pid) for pid in proc.stdout.readline().split()]
    assert len(workers) == 2 and all(_alive(pid) for pid in workers)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)


def test_ctrl_c_exits_130_with_interrupted_and_leaves_no_chart_folder(tmp_path: Path) -> None:
    """SIGINT during verify (charts pulled into a temporary folder with --no-cache) ends with 130, 'interrupted',
    and no gpuspec-charts-* folder in $TMPDIR."""
    root = make_repo(tmp_path)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**_env(), "PYTHONPATH": str(REPO), "TMPDIR": str(tmpdir),
           "GPUSPEC_HELM": str(tmp_path / "slow-helm")}
    started = tmp_path / "helm-started"
    (tmp_path / "slow-helm").write_text(f"#!/bin/sh\ntouch '{started}'\nsleep 30\n")
    (tmp_path / "slow-helm").chmod(0o755)
    assert subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "render"], cwd=root, env=env,
                          capture_output=True, timeout=120, check=False).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "gpuspec.cli.main", "verify", "--no-cache", "--chart",
                             "oci://registry.invalid/gpu-operator"], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60  # interrupt while helm pulls into the chart folder, however slow the machine
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), proc.communicate(timeout=60)
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert not list(tmpdir.glob("gpuspec-charts-*"))
