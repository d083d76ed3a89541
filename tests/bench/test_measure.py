"""The benchmarks' child processes run as an installed gpuspec does: with bytecode, whatever the machine sets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.measure import installed_env, measure


def test_children_may_use_bytecode_when_the_machine_forbids_writing_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "PYTHONDONTWRITEBYTECODE" not in installed_env()
    assert installed_env({"A": "1", "PYTHONDONTWRITEBYTECODE": "1"}) == {"A": "1"}
    probe = "import sys; sys.exit(3 if sys.dont_write_bytecode else 4)"
    assert measure([sys.executable, "-c", probe], cwd=str(tmp_path)).exit_code == 4
