"""The state of every file of an output folder, scanned here or ahead by a child process.

A re-render of a large fleet compares each cluster's stamped files with the output folder as it is (see
:mod:`gpuspec.render.stamp`): a stat of every output file, tens of thousands of them.  The scan does not depend
on anything the render reads first, so :meth:`ScanAhead.start` hands it to a forked child once the render holds
the output lock, and the render collects it when it first needs it: the stat calls run on the second core while
this process validates.  Whatever goes wrong with the child (no fork, killed, garbled answer), the scan is made
here instead.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import tempfile
from pathlib import Path
from typing import BinaryIO

from gpuspec.render.filestate import FileState, file_state

#: relative path → its :data:`FileState`
TreeState = dict[str, FileState]


def tree_state(out: Path) -> TreeState | None:
    """The stat fingerprint of every regular file below ``out``; None when absent or holding anything else."""
    state: TreeState = {}
    stack = [("", os.fspath(out))]
    try:
        if out.is_symlink() or not out.is_dir():
            return None
        while stack:
            rel, folder = stack.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = rel + entry.name
                    if entry.is_symlink():
                        return None
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((name + "/", entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        state[name] = file_state(entry.stat(follow_symlinks=False))
                    else:
                        return None
    except OSError:
        return None
    return state


class ScanAhead:
    """:func:`tree_state` of one folder, being made by a child process."""

    def __init__(self, out: Path, pid: int, answer: BinaryIO) -> None:
        """The scan of ``out`` by the child ``pid``, which writes it into the unnamed file ``answer``."""
        self._out = out
        self._pid = pid
        self._answer: BinaryIO | None = answer

    @classmethod
    def start(cls, out: Path) -> ScanAhead | None:
        """Fork a child that scans ``out``; None where this platform or process cannot fork."""
        if not hasattr(os, "fork"):
            return None
        try:
            answer = tempfile.TemporaryFile()  # noqa: SIM115 (unnamed: gone with the last descriptor; closed by close())
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            answer.close()
            return None
        if pid == 0:  # the child: scan, answer, and leave without running any of the parent's exit code
            code = 1
            try:
                _write_all(answer.fileno(), marshal.dumps(tree_state(out)))
                code = 0
            finally:
                os._exit(code)
        return cls(out, pid, answer)

    def result(self) -> TreeState | None:
        """The child's scan (see :func:`tree_state`), or a scan made now when the child gave none."""
        answer: object = False
        if self._answer is not None and self._reaped() == 0:
            try:
                self._answer.seek(0)
                answer = marshal.loads(self._answer.read())
            except (OSError, EOFError, ValueError, TypeError):
                answer = False
        self.close()
        if answer is None or (isinstance(answer, dict) and all(
                isinstance(k, str) and isinstance(v, int) for k, v in answer.items())):
            return answer
        return tree_state(self._out)

    def _reaped(self) -> int | None:
        """Wait for the child; its exit status (None when it cannot be waited for)."""
        try:
            _pid, status = os.waitpid(self._pid, 0)
        except OSError:
            return None
        self._pid = -1
        return os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        """Let the child go and reap it (a scan of a large folder takes a fraction of a second)."""
        if self._answer is None:
            return
        if self._pid > 0:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            self._reaped()
        self._answer.close()
        self._answer = None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
