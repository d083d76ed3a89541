"""What a file's stat says of its identity, packed into one integer.

The state of a file is its size, modification time, status-change time and inode.  Any write changes the
status-change time, so an output file in the state a render left it in still holds the bytes that render
wrote.  A render keeps the state of every output file (tens of thousands in a large fleet) and the stamp
stores them, so each is one integer (about 60 bytes) rather than a tuple of four (about 200).
"""

from __future__ import annotations

import os

#: A file's (size, mtime_ns, ctime_ns, inode), packed by :func:`file_state`; equal states mean equal stats.
FileState = int

_FIELD = 64
_MASK = (1 << _FIELD) - 1


def pack_state(size: int, mtime_ns: int, ctime_ns: int, inode: int) -> FileState:
    """The :data:`FileState` of these stat fields (each a 64-bit number, as the kernel reports them)."""
    return (size & _MASK) | (inode & _MASK) << _FIELD | (ctime_ns & _MASK) << 2 * _FIELD | mtime_ns << 3 * _FIELD


def file_state(info: os.stat_result) -> FileState:
    """The :data:`FileState` of a stat result."""
    return pack_state(info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def state_size(state: FileState) -> int:
    """The file size a :data:`FileState` records."""
    return state & _MASK


def state_times(state: FileState) -> tuple[int, int]:
    """The modification and status-change times (ns) a :data:`FileState` records (a status-change time before
    1970 reads as a very large number)."""
    return state >> 3 * _FIELD, (state >> 2 * _FIELD) & _MASK
