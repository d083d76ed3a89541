"""Helper of the audit tests: run the real gpuspec CLI in a subprocess (not a conftest, to keep the name unique)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def run_gpuspec(*args: str, stdin: str | None = None, cwd: Path | None = None) -> CliResult:
    """Run `python -m gpuspec.cli.main ARGS` the way a user runs gpuspec (real exit codes, stderr, no traceback)."""
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    env.pop("GPUSPEC_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "gpuspec.cli.main", *args], input=stdin, capture_output=True, text=True,
        cwd=cwd or REPO, env=env, timeout=120, check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return CliResult(proc.returncode, proc.stdout, proc.stderr)

