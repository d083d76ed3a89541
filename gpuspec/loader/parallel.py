"""Share a batch of independent work items with one forked child process (a second CPU).

libyaml and the support-matrix checks hold the interpreter lock, so a second core only helps from a
second process.  The child is forked after every import (no start-up cost) and runs the very same
function.  Work is handed out in chunks: both processes claim the next chunk from a pipe filled with
chunk numbers before the fork (a pipe read of a few bytes is atomic), so when the other core is busy
with someone else's work the child simply claims fewer chunks and this process is never left waiting
for a fixed half.  The child sends its results back with :mod:`marshal` (plain data only: what the user
cache stores, so the results are what a warm run reads).  An item the child could not finish is done
again here, so every error comes from this process exactly as without a child.  The child dies with its
parent (Linux ``PR_SET_PDEATHSIG``) and never runs the parent's exit handlers.  Anything unexpected —
no ``fork``, threads running, a child that fails — means this process does everything.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

#: ``GPUSPEC_JOBS=1`` keeps all work in this process.
JOBS_VARIABLE = "GPUSPEC_JOBS"
#: Most chunks one batch is cut into (their numbers must fit in the pipe's buffer before the fork).
MAX_CHUNKS = 1024
#: Fewest items in a chunk.
MIN_CHUNK = 8

_PR_SET_PDEATHSIG = 1
_TOKEN = 4  # bytes per chunk number in the pipe

T = TypeVar("T")
Outcome = tuple[Any, Exception | None]


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


def map_split(items: Sequence[T], work: Callable[[T], Any], min_items: int) -> list[Outcome]:
    """``work(item)`` of every item, in order: ``(result, None)``, or ``(None, error)`` when ``work`` raised
    ``error`` (an ``Exception``) for that item.  Results must be plain data that :mod:`marshal` keeps.

    With at least ``min_items`` items and a second CPU, a forked child claims chunks of items alongside
    this process; what the child did not finish (everything, when it fails) is done here afterwards.
    """
    if not worth_a_child(len(items), min_items):
        return [_do(item, work) for item in items]
    size = max(MIN_CHUNK, -(-len(items) // MAX_CHUNKS))
    chunks = [range(start, min(start + size, len(items))) for start in range(0, len(items), size)]
    tokens_read, tokens_write = os.pipe()
    os.write(tokens_write, b"".join(n.to_bytes(_TOKEN, "little") for n in range(len(chunks))))
    os.close(tokens_write)
    results: list[Outcome | None] = [None] * len(items)
    child: _Child | None = None
    try:
        child = _start_child(tokens_read, items, chunks, work)
        for number in _claims(tokens_read, len(chunks)):
            for index in chunks[number]:
                results[index] = _do(items[index], work)
        done = child.collect() if child is not None else {}
    except BaseException:  # interrupted here: end the child now rather than when this process ends
        if child is not None:
            child.stop()
        raise
    finally:
        os.close(tokens_read)
    for number, outcomes in done.items():
        for index, (ok, result) in zip(chunks[number], outcomes, strict=True):
            if ok is True:
                results[index] = (result, None)
    return [outcome if outcome is not None else _do(items[index], work) for index, outcome in enumerate(results)]


def _do(item: T, work: Callable[[T], Any]) -> Outcome:
    try:
        return work(item), None
    except Exception as error:  # handed to the caller, which raises or reports it
        return None, error


def _claims(tokens: int, count: int) -> Iterator[int]:
    """Chunk numbers claimed from the token pipe until it is empty (a short or odd read ends the claims)."""
    while True:
        token = os.read(tokens, _TOKEN)
        if len(token) != _TOKEN:
            return
        number = int.from_bytes(token, "little")
        if number >= count:
            return
        yield number


class _Child:
    """A forked child and the pipe its results arrive on."""

    def __init__(self, pid: int, results: int, chunks: list[range]) -> None:
        self.pid, self.results, self.chunks = pid, results, chunks

    def collect(self) -> dict[int, list[Any]]:
        """Wait for the child; its results by chunk number (one ``(True, result)`` or ``(False, None)`` per
        item), or nothing when it failed or sent something else."""
        with os.fdopen(self.results, "rb") as pipe:
            blob = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        parsed: Any = None
        if os.waitstatus_to_exitcode(status) == 0:
            with contextlib.suppress(EOFError, ValueError, TypeError):
                parsed = marshal.loads(blob)
        if not isinstance(parsed, dict):
            return {}
        chunks = self.chunks
        return {number: outcomes for number, outcomes in parsed.items()
                if isinstance(number, int) and 0 <= number < len(chunks) and isinstance(outcomes, list)
                and len(outcomes) == len(chunks[number])
                and all(isinstance(pair, tuple) and len(pair) == 2 for pair in outcomes)}

    def stop(self) -> None:
        """Kill the child and reap it (its results are not wanted)."""
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.results)


def _start_child(tokens: int, items: Sequence[T], chunks: list[range], work: Callable[[T], Any]) -> _Child | None:
    """Fork a child claiming chunks from ``tokens``, or None when no child could be started."""
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
        _child(parent, write_end, tokens, items, chunks, work)
    os.close(write_end)
    return _Child(pid, read_end, chunks)


def _die_with_parent(parent: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # only the child pays for it

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _child(parent: int, write_end: int, tokens: int, items: Sequence[T], chunks: list[range],
           work: Callable[[T], Any]) -> None:  # pragma: no cover - runs in the child
    code = 1
    try:
        _die_with_parent(parent)
        out: dict[int, list[Any]] = {}
        for number in _claims(tokens, len(chunks)):
            outcomes = out[number] = []
            for index in chunks[number]:
                try:
                    outcomes.append((True, work(items[index])))
                except Exception:  # the parent does this item again and reports its error
                    outcomes.append((False, None))
        try:
            blob = marshal.dumps(out)
        except ValueError:  # a result marshal cannot keep: the parent does everything
            blob = b""
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(blob)
        code = 0
    finally:
        os._exit(code)
