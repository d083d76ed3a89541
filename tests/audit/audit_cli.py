"""Helper of the audit tests: run the gpuspec CLI the way a user does (not a conftest, to keep the name unique).

:func:`run_gpuspec` runs the command in this process through the same entry function as the console script
(:func:`gpuspec.cli.main.run`: real exit codes, errors as messages); :func:`run_gpuspec_process` starts a real
process, for the few tests about the process itself (pipes, exit status).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from click.testing import CliRunner

from gpuspec.cli.main import run

HERE = Path(__file__).parent
REPO = HERE.parent.parent


@dataclass
class CliResult:
    """Exit code and output of one gpuspec run."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        """Standard output parsed as JSON."""
        return json.loads(self.out)


def _checked(result: CliResult) -> CliResult:
    assert "Traceback" not in result.err, result.err
    assert "internal error" not in result.err, result.err
    return result


def run_gpuspec(*args: str, stdin: str | None = None, cwd: Path | None = None) -> CliResult:
    """Run `gpuspec ARGS` in this process via the console entry function (exit code, stdout, stderr)."""
    runner = CliRunner(env={"NO_COLOR": "1", "GPUSPEC_DEBUG": None})
    with contextlib.chdir(cwd or REPO), runner.isolation(input=stdin) as (out, err, _), \
            mock.patch.object(sys, "argv", ["gpuspec", *args]):
        code = run()
        sys.stdout.flush()
        sys.stderr.flush()
    return _checked(CliResult(code, out.getvalue().decode(), err.getvalue().decode()))


def run_gpuspec_process(*args: str, stdin: str | None = None, cwd: Path | None = None) -> CliResult:
    """Run `python -m gpuspec.cli.main ARGS` in a child process (real pipes and process exit status)."""
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    env.pop("GPUSPEC_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "gpuspec.cli.main", *args], input=stdin, capture_output=True, text=True,
        cwd=cwd or REPO, env=env, timeout=120, check=False,
    )
    return _checked(CliResult(proc.returncode, proc.stdout, proc.stderr))
