"""Run a command in a child process and report its wall time and peak resident memory."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    """Wall time in seconds, peak RSS in MiB, exit code and CPU seconds (user + system) of one run."""

    seconds: float
    peak_mib: float
    exit_code: int
    cpu: float = 0.0


def measure(argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None) -> Measurement:
    """Run ``argv`` once and measure it (peak RSS and CPU of the child and its waited-for children, via wait4).

    Peak RSS is the largest single process of the tree (the kernel's ru_maxrss), CPU the sum over it.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measurement(seconds, usage.ru_maxrss / 1024, proc.returncode, usage.ru_utime + usage.ru_stime)


def best_of(argv: list[str], runs: int = 3, cwd: str | None = None, env: dict[str, str] | None = None) -> Measurement:
    """The fastest of ``runs`` measurements (peak memory of that run)."""
    return min((measure(argv, cwd, env) for _ in range(runs)), key=lambda m: m.seconds)
