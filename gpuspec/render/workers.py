"""Worker processes that end with their parent: a killed render leaves no writer running behind it.

``multiprocessing`` and ``ctypes`` are imported only when a pool is started: a command that renders a few
clusters in its own process (a re-render after one edit) does not pay for them.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import multiprocessing.pool

_PR_SET_PDEATHSIG = 1


def can_fork() -> bool:
    """True where worker processes can be forked (what ``multiprocessing``'s ``fork`` start method needs)."""
    return hasattr(os, "fork")


def die_with_parent(parent: int) -> None:
    """Pool initializer: ask the kernel to kill this worker when its parent dies (Linux), and exit at once
    when the parent ``parent`` is already gone."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: workers still end when their task queue closes
        pass
    if os.getppid() != parent:
        os._exit(1)


def fork_pool(processes: int) -> multiprocessing.pool.Pool:
    """A ``fork`` pool of ``processes`` workers that are killed when this process dies."""
    import multiprocessing

    return multiprocessing.get_context("fork").Pool(processes, initializer=die_with_parent,
                                                    initargs=(os.getpid(),))
