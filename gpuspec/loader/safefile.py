"""Read input files without following links out of the repository, without blocking, and with a size bound.

A fleet file, policy pack or any file a report quotes from must be a regular
file inside the repository it belongs to.  A symbolic link whose target lies
outside that repository (``/proc/self/environ``, ``/dev/zero``, a file in the
user's home) is refused before it is opened; FIFOs, sockets and device files
are refused after a non-blocking open, so nothing waits for a writer; and no
read takes more than the limit plus one byte.

Nothing inside a ``.git`` folder (or any other git directory: a worktree's or submodule's, which live under
the main repository's ``.git``) is ever read as input, whatever the path: it holds the credentials CI
persists (actions/checkout writes the token as ``http.<url>.extraheader`` into ``.git/config``), so a fleet
file, template, policy pack, node export or link that names one is refused.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path


class UnsafeFile(Exception):
    """A file gpuspec refuses to read; the message says why in words a user understands."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@lru_cache(maxsize=64)
def _root_of(directory: str) -> str:
    """The real path of the repository enclosing ``directory`` (the nearest folder with ``.git``), or ''."""
    here = Path(directory)
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return os.path.realpath(candidate)
    return ""


def trusted_root(path: Path) -> str:
    """The real path of the folder a symbolic link at ``path`` may point into.

    That is the enclosing git repository; without one, the working directory when ``path`` lies below it,
    else the folder that holds ``path``.
    """
    absolute = Path(os.path.abspath(path))
    root = _root_of(str(absolute.parent))
    if root:
        return root
    cwd = os.path.abspath(os.getcwd())
    if str(absolute).startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.realpath(cwd)
    return os.path.realpath(absolute.parent)


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


#: The name of git's own folder; nothing below one is read as input.
GIT_DIR = ".git"
_GIT_REFUSED = "is inside a .git folder (git's own data, where CI keeps its token); gpuspec never reads it"


def in_git_dir(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` (as written, or where its links lead) lies inside a ``.git`` folder."""
    if GIT_DIR in Path(os.path.abspath(path)).parts:
        return True
    return GIT_DIR in Path(os.path.realpath(path)).parts


def check_git(path: str | os.PathLike[str]) -> None:
    """Raise UnsafeFile when ``path`` or the target of its links lies inside a ``.git`` folder."""
    if in_git_dir(path):
        raise UnsafeFile(_GIT_REFUSED)


def check_link(path: Path) -> str:
    """The real path of ``path``; raise UnsafeFile when it is in a ``.git`` folder or a symbolic link on the way
    leads out of its repository."""
    real = os.path.realpath(path)
    if GIT_DIR in Path(real).parts or GIT_DIR in Path(os.path.abspath(path)).parts:
        raise UnsafeFile(_GIT_REFUSED)
    if real != os.path.abspath(path) and not _inside(real, trusted_root(path)):
        raise UnsafeFile("is a symbolic link that leads outside the repository; gpuspec does not follow it")
    return real


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); raise UnsafeFile or OSError when refused.

    Symbolic links out of the repository, FIFOs, sockets, devices and files over ``limit`` bytes are refused
    without reading them.
    """
    real = check_link(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(real, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnsafeFile("is a directory, expected a YAML file")
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile("is not a regular file (a FIFO, socket or device); gpuspec does not read it")
        if info.st_size > limit:
            raise UnsafeFile(f"is {info.st_size} bytes, larger than the {limit}-byte limit")
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UnsafeFile(f"is larger than the {limit}-byte limit")
    return data
