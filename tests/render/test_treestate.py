"""The output folder's state scanned ahead by a child process is the scan made here, whatever the child does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuspec.render import treestate
from gpuspec.render.treestate import ScanAhead, tree_state


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An output folder of a few files in two folders."""
    for rel in ("a.yaml", "clusters/one/values.yaml", "clusters/two/values.yaml"):
        path = tmp_path / "out" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{rel}: 1\n")
    return tmp_path / "out"


def test_the_scan_made_ahead_is_the_scan_made_here(out: Path) -> None:
    ahead = ScanAhead.start(out)
    assert ahead is not None
    assert ahead.result() == tree_state(out) and len(tree_state(out) or {}) == 3


def test_an_odd_output_folder_scans_as_none_ahead_too(out: Path) -> None:
    (out / "link").symlink_to(out / "a.yaml")
    ahead = ScanAhead.start(out)
    assert ahead is not None and ahead.result() is None


def test_a_child_that_answers_nothing_is_replaced_by_a_scan_here(out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    real = treestate.tree_state

    def fail_in_child(folder: Path) -> treestate.TreeState | None:
        if os.getpid() != parent:
            raise MemoryError("the child died")
        return real(folder)

    monkeypatch.setattr(treestate, "tree_state", fail_in_child)
    ahead = ScanAhead.start(out)
    assert ahead is not None and ahead.result() == real(out)


def test_a_scan_nobody_asks_for_is_let_go_and_its_child_reaped(tmp_path: Path) -> None:
    for n in range(3000):  # a scan that takes a while: it is stopped, not waited for
        (tmp_path / f"file-with-a-long-name-{n:05d}.yaml").write_text("a: 1\n")
    ahead = ScanAhead.start(tmp_path)
    assert ahead is not None
    pid = ahead._pid
    ahead.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
