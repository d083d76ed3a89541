"""Run a command in a child process and report its wall time and peak resident memory."""

from __future__ import annotations

import compileall
import functools
import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: gpuspec's package folder, compiled to bytecode once before the first measured run.
PACKAGE = Path(__file__).resolve().parent.parent / "gpuspec"


@dataclass(frozen=True)
class Measurement:
    """Wall time in seconds, peak RSS in MiB, exit code and CPU seconds (user + system) of one run."""

    seconds: float
    peak_mib: float
    exit_code: int
    cpu: float = 0.0


@functools.cache
def _compiled() -> None:
    compileall.compile_dir(str(PACKAGE), quiet=1)


def installed_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) as an installed gpuspec runs in it: with its modules' bytecode.

    pip compiles a wheel's modules when it installs them; a machine that sets ``PYTHONDONTWRITEBYTECODE`` (as
    some CI images do) would otherwise make every measured run compile gpuspec's sources again.
    """
    _compiled()
    out = dict(os.environ if env is None else env)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def measure(argv: list[str], cwd: str | None = None, env: Mapping[str, str] | None = None) -> Measurement:
    """Run ``argv`` once and measure it (peak RSS and CPU of the child and its waited-for children, via wait4).

    Peak RSS is the largest single process of the tree (the kernel's ru_maxrss), CPU the sum over it.  The
    child runs in :func:`installed_env` of ``env``.
    """
    child_env = installed_env(env)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measurement(seconds, usage.ru_maxrss / 1024, proc.returncode, usage.ru_utime + usage.ru_stime)


def best_of(argv: list[str], runs: int = 3, cwd: str | None = None,
            env: Mapping[str, str] | None = None) -> Measurement:
    """The fastest of ``runs`` measurements (peak memory of that run)."""
    return min((measure(argv, cwd, env) for _ in range(runs)), key=lambda m: m.seconds)
