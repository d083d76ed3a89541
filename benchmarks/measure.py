"""Run a command in a child process and report its wall time and peak resident memory."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    """Wall time in seconds, peak RSS in MiB and exit code of one run."""

    seconds: float
    peak_mib: float
    exit_code: int


def measure(argv: list[str], cwd: str | None = None) -> Measurement:
    """Run ``argv`` once and measure it (peak RSS of the child alone, via wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measurement(seconds, usage.ru_maxrss / 1024, proc.returncode)


def best_of(argv: list[str], runs: int = 3, cwd: str | None = None) -> Measurement:
    """The fastest of ``runs`` measurements (peak memory of that run)."""
    return min((measure(argv, cwd) for _ in range(runs)), key=lambda m: m.seconds)
