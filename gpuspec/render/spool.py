"""Rendered bytes kept in anonymous temporary files instead of the parent's memory.

A large fleet is rendered by forked workers.  Each appends the bytes it serializes to its own spool (an
unnamed temporary file the parent opened before forking, so the parent and every later fork can read it)
and reports only where each file's bytes lie.  The parent then holds an index of the output, not the
output: its memory no longer grows with the bytes of the whole fleet.  The spools have no name on disk
(the file system frees them when the last process holding them ends, however it ends), so a killed render
leaves none behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import IO


class Spool:
    """An unnamed temporary file that one process appends bytes to and any process that inherited it reads."""

    def __init__(self, near: Path | None = None) -> None:
        """Open a new spool: in ``near`` (a folder on the output's disk) when it can hold one, else in the
        system's temporary folder."""
        self._file: IO[bytes] = _temporary_file(near)
        self._fd = self._file.fileno()
        self._end = 0

    def append(self, data: bytes) -> tuple[int, int]:
        """Write ``data`` after everything this process appended before; return its (offset, length)."""
        offset = self._end
        view = memoryview(data)
        done = 0
        while done < len(data):
            done += os.pwrite(self._fd, view[done:], offset + done)
        self._end = offset + len(data)
        return offset, len(data)

    def read(self, offset: int, length: int) -> bytes:
        """The ``length`` bytes at ``offset`` (as one process or another appended them)."""
        parts: list[bytes] = []
        done = 0
        while done < length:
            part = os.pread(self._fd, length - done, offset + done)
            if not part:
                raise OSError(f"spool ended {length - done} bytes early")
            parts.append(part)
            done += len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        """Free the spool (its bytes are gone once every process that holds it closed it)."""
        self._file.close()


def _temporary_file(near: Path | None) -> IO[bytes]:
    if near is not None:
        try:
            return tempfile.TemporaryFile(dir=near)
        except OSError:  # a read-only or missing folder (a check of a read-only checkout): the system's own
            pass
    return tempfile.TemporaryFile()


#: Where a file's bytes lie: the index of the spool, the offset and the length, packed into one integer by
#: :func:`location` (about 36 bytes, where a tuple of three took about 120: a large fleet has tens of thousands).
Location = int

_LENGTH_BITS = 36  # up to 64 GiB per file
_OFFSET_BITS = 44  # up to 16 TiB per spool
_SPOOL_SHIFT = _LENGTH_BITS + _OFFSET_BITS


def location(spool: int, offset: int, length: int) -> Location:
    """The :data:`Location` of ``length`` bytes at ``offset`` of spool number ``spool``."""
    if not (0 <= length < 1 << _LENGTH_BITS and 0 <= offset < 1 << _OFFSET_BITS and spool >= 0):
        raise ValueError(f"cannot locate {length} bytes at {offset} of spool {spool}")
    return spool << _SPOOL_SHIFT | offset << _LENGTH_BITS | length


def where(located: Location) -> tuple[int, int, int]:
    """The (spool, offset, length) of a :data:`Location`."""
    return (located >> _SPOOL_SHIFT, located >> _LENGTH_BITS & (1 << _OFFSET_BITS) - 1,
            located & (1 << _LENGTH_BITS) - 1)


class OutputFiles(MutableMapping[str, bytes]):
    """Output bytes by path: held in memory, or located in spools (read back on each access, never kept).

    Assigning bytes holds them in memory; :meth:`locate` records where a worker spooled them.  The index of
    located files pickles without the spools (a worker sends its index to the parent, which :meth:`attach`\\ es
    the spools it opened).
    """

    def __init__(self) -> None:
        """An empty output."""
        self._held: dict[str, bytes] = {}
        self._located: dict[str, Location] = {}
        self._spools: Sequence[Spool] = ()

    def __getstate__(self) -> dict[str, object]:
        """The index and held bytes, without the spools (open files do not travel between processes)."""
        return {"held": self._held, "located": self._located}

    def __setstate__(self, state: dict[str, object]) -> None:
        """Rebuild from :meth:`__getstate__` (no spools attached yet)."""
        self._held = state["held"]  # type: ignore[assignment]
        self._located = state["located"]  # type: ignore[assignment]
        self._spools = ()

    def attach(self, spools: Sequence[Spool]) -> None:
        """Read located files from ``spools`` (indexed as the locations name them)."""
        self._spools = spools

    def locate(self, path: str, spool: int, offset: int, length: int) -> None:
        """Record that the bytes of ``path`` are ``length`` bytes at ``offset`` of spool number ``spool``."""
        self._place(path, location(spool, offset, length))

    def _place(self, path: str, located: Location) -> None:
        """Record the :data:`Location` of ``path``'s bytes (no longer held)."""
        self._held.pop(path, None)
        self._located[path] = located

    def size(self, path: str) -> int:
        """The length of the bytes of ``path``, without reading them."""
        if path in self._held:
            return len(self._held[path])
        return where(self._located[path])[2]

    def held_size(self) -> int:
        """How many bytes of the output this process holds in memory (spooled ones are not)."""
        return sum(len(data) for data in self._held.values())

    def update_from(self, other: OutputFiles) -> None:
        """Add every file of ``other`` (held bytes and locations; both name the same spools)."""
        self._add(other, 0)

    def absorb(self, other: OutputFiles) -> None:
        """Add every file of ``other``, whose locations name spools of its own: they are read from here on
        too (numbered after this output's)."""
        first = len(self._spools)
        self._spools = [*self._spools, *other._spools]
        self._add(other, first)

    def _add(self, other: OutputFiles, first: int) -> None:
        """Add ``other``'s held bytes, and its locations with their spool numbers moved up by ``first``."""
        for path, data in other._held.items():
            self[path] = data
        moved = first << _SPOOL_SHIFT  # the spool's index is the top field: a sum moves it
        for path, located in other._located.items():
            self._place(path, located + moved)

    def __getitem__(self, path: str) -> bytes:
        """The bytes of ``path`` (KeyError when it is not part of the output)."""
        held = self._held.get(path)
        if held is not None:
            return held
        spool, offset, length = where(self._located[path])
        return self._spools[spool].read(offset, length)

    def __setitem__(self, path: str, data: bytes) -> None:
        """Hold ``data`` in memory as the bytes of ``path``."""
        self._located.pop(path, None)
        self._held[path] = data

    def __delitem__(self, path: str) -> None:
        """Remove ``path`` from the output."""
        if self._held.pop(path, None) is None:
            del self._located[path]

    def __contains__(self, path: object) -> bool:
        """True when ``path`` is part of the output (no bytes are read)."""
        return path in self._held or path in self._located

    def __iter__(self) -> Iterator[str]:
        """The paths: held ones first, then located ones."""
        yield from self._held
        yield from self._located

    def __len__(self) -> int:
        """How many files the output has."""
        return len(self._held) + len(self._located)


class Layered(Mapping[str, bytes]):
    """``base`` with the files of ``top`` added (or replaced), read-only, reading nothing until asked."""

    def __init__(self, top: Mapping[str, bytes], base: Mapping[str, bytes]) -> None:
        """Layer ``top`` over ``base``."""
        self.top = top
        self.base = base

    def __getitem__(self, path: str) -> bytes:
        """The bytes of ``path``: those of ``top`` when it has them, else those of ``base``."""
        return self.top[path] if path in self.top else self.base[path]

    def __contains__(self, path: object) -> bool:
        """True when either layer has ``path`` (no bytes are read)."""
        return path in self.top or path in self.base

    def __iter__(self) -> Iterator[str]:
        """Every path once: those of ``base``, then those only ``top`` has."""
        yield from self.base
        yield from (path for path in self.top if path not in self.base)

    def __len__(self) -> int:
        """How many paths the layers have together."""
        return len(self.base) + sum(1 for path in self.top if path not in self.base)


def size_of(files: Mapping[str, bytes], path: str) -> int:
    """The length of ``files[path]``, without reading spooled bytes back."""
    if isinstance(files, Layered):
        return len(files.top[path]) if path in files.top else size_of(files.base, path)
    if isinstance(files, OutputFiles):
        return files.size(path)
    return len(files[path])
