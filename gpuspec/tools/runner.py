"""Run an external tool without a shell, with a timeout, and capture what it printed."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuspec.errors import ToolMissingError

#: Default seconds a tool may run before it is stopped.
DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one tool run produced: its argv, exit code, output and how long it took.

    ``returncode`` is ``None`` when the tool was stopped because it ran past its timeout
    (then ``timed_out`` is true).
    """

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """True when the tool finished in time with exit code 0."""
        return not self.timed_out and self.returncode == 0

    def describe_failure(self) -> str:
        """A one-paragraph description of why the run failed (empty when it succeeded)."""
        if self.ok:
            return ""
        name = Path(self.argv[0]).name if self.argv else "tool"
        if self.timed_out:
            return f"{name} did not finish within {self.duration:.0f}s"
        detail = (self.stderr.strip() or self.stdout.strip()).splitlines()
        tail = "\n".join(detail[-20:])
        return f"{name} exited with code {self.returncode}" + (f": {tail}" if tail else "")


def run_tool(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
) -> ToolResult:
    """Run ``argv`` (never through a shell) and return its exit code, stdout and stderr.

    Output is decoded as UTF-8 (invalid bytes replaced).  A tool that runs longer than
    ``timeout`` seconds is killed and reported with ``timed_out=True``.  An executable that
    does not exist or cannot be executed raises :class:`ToolMissingError`.
    """
    args = tuple(os.fspath(a) for a in argv)
    if not args:
        raise ValueError("run_tool needs a command")
    started = time.monotonic()
    try:
        proc = subprocess.run(
            args,
            input=stdin.encode() if stdin is not None else None,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            timeout=timeout,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return ToolResult(
            argv=args,
            returncode=None,
            stdout=_decode(exc.stdout),
            stderr=_decode(exc.stderr),
            duration=time.monotonic() - started,
            timed_out=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise ToolMissingError(
            f"cannot execute {args[0]}: {exc.strerror or exc}",
            hint="run `gpuspec tools install` to install the pinned helm and kubectl into the user cache",
        ) from exc
    return ToolResult(
        argv=args,
        returncode=proc.returncode,
        stdout=_decode(proc.stdout),
        stderr=_decode(proc.stderr),
        duration=time.monotonic() - started,
    )


def _decode(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")
