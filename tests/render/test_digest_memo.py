"""Render's input digests come from the per-user memo only for a file in the state it was hashed in, once that
state has settled; every real change is read and hashed again, and the gate never uses the memo."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuspec.render.digestmemo import RACY_NS, DigestMemo
from gpuspec.render.inputs import UnusableInput, file_digest, read_input_digests

from .fleets import cluster, write_fleet
from .test_cli import REPO_ROOT, run


def later() -> int:
    """A moment long after every file a test has written so far (taken when called: a test of a long suite runs
    minutes after this module is imported)."""
    return time.time_ns() + 10 * RACY_NS


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "fleet" / "clusters" / "one.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("name: one\nnodes: 2\n")
    return path


def _digest(path: Path, now_ns: int) -> tuple[str, DigestMemo]:
    memo = DigestMemo(path.parent.parent, None, now_ns)
    digest = file_digest(path, "clusters/one.yaml", {}, memo)
    memo.save()
    return digest, memo


def test_a_settled_file_is_hashed_once_then_taken_from_the_memo(spec: Path) -> None:
    digest, memo = _digest(spec, later())
    assert (digest, memo.reads, memo.hits) == (_sha(spec), 1, 0)
    again, memo = _digest(spec, later())
    assert (again, memo.reads, memo.hits) == (_sha(spec), 0, 1)


def test_a_file_written_within_the_racy_window_is_never_remembered(spec: Path) -> None:
    # Opened now: the file was written a moment ago, so a write in the same clock tick could keep its state.
    _digest(spec, time.time_ns())
    _, memo = _digest(spec, time.time_ns())
    assert (memo.reads, memo.hits) == (1, 0)


def test_an_edit_that_keeps_size_and_mtime_is_hashed_again(spec: Path) -> None:
    _digest(spec, later())
    before = spec.stat()
    spec.write_text("name: one\nnodes: 3\n")
    os.utime(spec, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert spec.stat().st_size == before.st_size and spec.stat().st_mtime_ns == before.st_mtime_ns
    digest, memo = _digest(spec, later())
    assert (digest, memo.reads, memo.hits) == (_sha(spec), 1, 0)


def test_a_file_replaced_by_a_link_out_of_the_repository_is_refused(spec: Path, tmp_path: Path) -> None:
    _digest(spec, later())
    outside = tmp_path.parent / f"{tmp_path.name}-outside.yaml"
    outside.write_text(spec.read_text())
    shutil.copystat(spec, outside)
    spec.unlink()
    spec.symlink_to(outside)
    with pytest.raises(UnusableInput):
        _digest(spec, later())


def test_a_folder_link_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    real = tmp_path / "elsewhere" / "clusters"
    real.mkdir(parents=True)
    (real / "one.yaml").write_text("name: one\n")
    (repo / "fleet").mkdir()
    (repo / "fleet" / "clusters").symlink_to(real)
    memo = DigestMemo(repo / "fleet", None, later())
    memo._stored[os.fspath(repo / "fleet" / "clusters" / "one.yaml")] = (0, "0" * 64)
    assert memo.lookup(repo / "fleet" / "clusters" / "one.yaml") is None
    with pytest.raises(UnusableInput):
        file_digest(repo / "fleet" / "clusters" / "one.yaml", "clusters/one.yaml", {}, memo)


def test_the_memo_holds_only_this_runs_files(spec: Path) -> None:
    other = spec.with_name("two.yaml")
    other.write_text("name: two\n")
    memo = DigestMemo(spec.parent.parent, None, later())
    for path in (spec, other):
        file_digest(path, path.name, {}, memo)
    memo.save()
    other.unlink()
    _digest(spec, later())
    stored = DigestMemo(spec.parent.parent, None, later())._stored
    assert list(stored) == [os.fspath(spec)]


def test_a_rerender_after_an_edit_that_keeps_size_and_mtime_is_a_full_renders(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end, with every input settled before the first render: the edited cluster is rendered again."""
    fleet = write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"}),
                                   cluster("two", kubernetes={"version": "1.33"})])
    time.sleep(RACY_NS / 1e9 + 0.2)
    assert run("render", cwd=tmp_path).returncode == 0
    monkeypatch.chdir(tmp_path)
    memo = DigestMemo(Path("fleet"), Path("policies"))
    assert memo._stored, "the settled inputs were not remembered"
    path = fleet / "clusters" / "one.yaml"
    before = path.stat()
    path.write_text(path.read_text().replace("nodes: 2", "nodes: 3", 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    again = run("render", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 written" not in again.stdout
    shutil.rmtree(tmp_path / "fresh", ignore_errors=True)
    full = subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "render", "--out", "fresh"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "GPUSPEC_NO_CACHE": "1"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert full.returncode == 0, full.stderr
    ours = {p.relative_to(tmp_path / "rendered"): p.read_bytes() for p in (tmp_path / "rendered").rglob("*")
            if p.is_file()}
    theirs = {p.relative_to(tmp_path / "fresh"): p.read_bytes() for p in (tmp_path / "fresh").rglob("*")
              if p.is_file()}
    assert ours == theirs
    assert read_input_digests(Path("fleet"), Path("policies"), remembered=True).clusters["clusters/one.yaml"] \
        == _sha(path)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=dev", "-c", "user.email=dev@example.invalid", *args],
                   capture_output=True, check=True)


def test_the_gate_never_takes_a_digest_from_the_memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo entry that lies (an edited cluster file's state with its old digest) would make a local run take the
    stale output as current; the gate hashes the file and reports the stale output all the same."""
    fleet = write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"}),
                                   cluster("two", kubernetes={"version": "1.33"})])
    assert run("render", cwd=tmp_path).returncode == 0
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    monkeypatch.chdir(tmp_path)
    old = read_input_digests(Path("fleet"), Path("policies"))
    path = fleet / "clusters" / "one.yaml"
    path.write_text(path.read_text().replace("nodes: 2", "nodes: 3", 1))
    _git(tmp_path, "commit", "-qam", "the pull request, without its rendered output")
    lie = DigestMemo(Path("fleet"), Path("policies"))
    for name, (where, _) in old.states.items():
        digest = old.shared.get(name) or old.clusters[name]
        lie._kept[where] = (read_input_digests(Path("fleet"), Path("policies")).states[name][1], digest)
    lie.save()
    local = run("render", "--check", cwd=tmp_path)
    assert local.returncode == 0, "the planted memo entry was not used: this test proves nothing"
    gate = run("render", "--check", "--base", "HEAD^", cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "clusters/one/" in gate.stdout
