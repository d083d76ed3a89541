"""Helpers of the hostile-input tests: a fleet repository in a temporary folder and the real CLI in-process."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuspec.cli.main import run as run_cli

REPO = Path(__file__).resolve().parents[2]
AUDIT_NODES = REPO / "tests" / "audit" / "fixtures" / "nodes" / "drift-count-mismatch.json"


@dataclass
class Run:
    """Exit code and output of one gpuspec run."""

    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """Standard output and standard error together."""
        return self.out + self.err


def make_repo(tmp_path: Path) -> Path:
    """A fleet repository (example fleet and policies, a .git folder) in ``tmp_path``; returns its root."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "fleet", root / "fleet")
    shutil.copytree(REPO / "policies", root / "policies")
    (root / ".git").mkdir()
    return root


def gpuspec(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
            cwd: Path | None = None) -> Run:
    """Run the real entry point in-process (in ``cwd``); never a traceback or an internal error."""
    if cwd is not None:
        monkeypatch.chdir(cwd)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(sys, "argv", ["gpuspec", *args])
    code = run_cli()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    assert "internal error" not in out + err, out + err
    return Run(code, out, err)
