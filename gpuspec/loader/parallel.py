"""Share a batch of independent work items with one forked child process (a second CPU).

libyaml and the support-matrix checks hold the interpreter lock, so a second core only helps from a
second process.  The child is forked after every import (no start-up cost), works on every second item
with the very same function and sends the results back with :mod:`marshal` (plain data only: what the
user cache stores, so the results are what a warm run reads).  An item the child could not finish is
done again here, so every error comes from this process exactly as without a child.  The child dies
with its parent (Linux ``PR_SET_PDEATHSIG``) and never runs the parent's exit handlers.  Anything
unexpected — no ``fork``, threads running, a child that fails — means this process does everything.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

#: ``GPUSPEC_JOBS=1`` keeps all work in this process.
JOBS_VARIABLE = "GPUSPEC_JOBS"

_PR_SET_PDEATHSIG = 1
#: What the child sends for an item it did not finish: the parent does it again.
_NOT_DONE = (False, None)

T = TypeVar("T")


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def worth_a_child(count: int, min_items: int) -> bool:
    """True when ``count`` items (at least ``min_items``) are worth a fork and a second CPU is there."""
    if os.environ.get(JOBS_VARIABLE, "") == "1" or count < min_items:
        return False
    return hasattr(os, "fork") and _cpus() > 1 and threading.active_count() == 1


def map_split(items: Sequence[T], work: Callable[[T], Any], min_items: int) -> list[tuple[Any, Exception | None]]:
    """``work(item)`` of every item, in order: ``(result, None)``, or ``(None, error)`` when ``work`` raised
    ``error`` (an ``Exception``) for that item.  Results must be plain data that :mod:`marshal` keeps.

    With at least ``min_items`` items and a second CPU, a forked child does every second item while this
    process does the others; what the child did not finish (everything, when it fails) is done here after.
    """
    results: list[tuple[Any, Exception | None]] = [(None, None)] * len(items)
    child = _start_child(items[1::2], work) if worth_a_child(len(items), min_items) else None
    for index in range(0, len(items), 2) if child is not None else range(len(items)):
        results[index] = _do(items[index], work)
    if child is not None:
        for index, (done, result) in zip(range(1, len(items), 2), child(), strict=True):
            results[index] = (result, None) if done is True else _do(items[index], work)
    return results


def _do(item: T, work: Callable[[T], Any]) -> tuple[Any, Exception | None]:
    try:
        return work(item), None
    except Exception as error:  # handed to the caller, which raises or reports it
        return None, error


def _start_child(share: Sequence[T], work: Callable[[T], Any]) -> Callable[[], list[Any]] | None:
    """Fork a child working on ``share``; return the function that collects its results (one
    ``(True, result)`` per item, ``_NOT_DONE`` for those it did not finish), or None without a child."""
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(read_end)
        _child(parent, write_end, share, work)
    os.close(write_end)

    def collect() -> list[Any]:
        with os.fdopen(read_end, "rb") as pipe:
            blob = pipe.read()
        _, status = os.waitpid(pid, 0)
        parsed: Any = None
        if os.waitstatus_to_exitcode(status) == 0:
            with contextlib.suppress(EOFError, ValueError, TypeError):
                parsed = marshal.loads(blob)
        if not isinstance(parsed, list) or len(parsed) != len(share):
            return [_NOT_DONE] * len(share)
        return [pair if isinstance(pair, tuple) and len(pair) == 2 else _NOT_DONE for pair in parsed]
    return collect


def _die_with_parent(parent: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # only the child pays for it

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _child(parent: int, write_end: int, share: Sequence[T], work: Callable[[T], Any]) -> None:  # pragma: no cover
    code = 1
    try:
        _die_with_parent(parent)
        out: list[Any] = []
        for item in share:
            try:
                out.append((True, work(item)))
            except Exception:  # the parent does this item again and reports its error
                out.append(_NOT_DONE)
        try:
            blob = marshal.dumps(out)
        except ValueError:  # a result marshal cannot keep: the parent does everything
            blob = b""
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(blob)
        code = 0
    finally:
        os._exit(code)
