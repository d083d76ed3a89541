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

The write side is the same guard turned around (:func:`write_file`, :func:`safe_write`): every file gpuspec
writes by a name the user or the repository gives (a report's ``--output``, CODEOWNERS, ``init``'s skeleton,
``upgrade --apply``'s spec edits, ``import``'s drafts) is refused when an existing entry of that name is a
symbolic link, a FIFO, socket, device or folder, when it lies inside a ``.git`` folder, or when a folder on the
way is a link that leads out of the repository or into ``.git``; the bytes go to a new temporary file in the
same folder (created with ``O_EXCL | O_NOFOLLOW``) that then replaces the name, so no link is ever followed and
a reader never sees half a file.  :func:`safe_read` is the bounded, non-blocking read of a file read by name,
with the same clean errors.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from functools import lru_cache
from pathlib import Path

from gpuspec.errors import GpuspecError


class UnsafeFile(Exception):
    """A file gpuspec refuses to read or write; the message says why in words a user understands."""

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


def _real_path(absolute: str, folders: dict[str, str] | None) -> str:
    """``os.path.realpath`` of the absolute path ``absolute``; with ``folders`` (folder → its real path, filled as
    folders are met) a path that is not itself a link resolves through its folder's entry, so the folders of many
    files are resolved once."""
    if folders is None:
        return os.path.realpath(absolute)
    try:
        if stat.S_ISLNK(os.lstat(absolute).st_mode):
            return os.path.realpath(absolute)
    except OSError:
        return os.path.realpath(absolute)
    folder, name = os.path.split(absolute)
    real_folder = folders.get(folder)
    if real_folder is None:
        real_folder = folders[folder] = os.path.realpath(folder)
    return os.path.join(real_folder, name)


def check_link(path: Path, folders: dict[str, str] | None = None) -> str:
    """The real path of ``path``; raise UnsafeFile when it is in a ``.git`` folder or a symbolic link on the way
    leads out of its repository.  ``folders``: real paths of folders already resolved (see :func:`read_bounded`)."""
    absolute = os.path.abspath(path)
    real = _real_path(absolute, folders)
    if GIT_DIR in real.split(os.sep) or GIT_DIR in absolute.split(os.sep):
        raise UnsafeFile(_GIT_REFUSED)
    if real != absolute and not _inside(real, trusted_root(path)):
        raise UnsafeFile("is a symbolic link that leads outside the repository; gpuspec does not follow it")
    return real


def read_bounded(path: Path, limit: int, *, expected: str = "a YAML file",
                 folders: dict[str, str] | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); raise UnsafeFile or OSError when refused.

    Symbolic links out of the repository, FIFOs, sockets, devices and files over ``limit`` bytes are refused
    without reading them; the path its links lead to is opened without following a link again
    (``O_NOFOLLOW``), so a link swapped in meanwhile fails the open.  ``expected`` names what a folder at
    ``path`` should have been.  ``folders``: a dict shared by the reads of one batch of files, in which the real
    path of each folder is kept (resolved once, not once per file).
    """
    real = check_link(path, folders)
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
             | getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(real, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnsafeFile(f"is a directory, expected {expected}")
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


def safe_read(path: Path, limit: int, *, shown: str | None = None, expected: str = "a file",
              missing_ok: bool = False) -> bytes | None:
    """The bytes of a file gpuspec reads by name (:func:`read_bounded`); a refusal is a GpuspecError (exit 2).

    The message names the file (``shown``, default ``path``) and says why: inside ``.git``, a link out of the
    repository, a FIFO, socket, device or folder, over ``limit`` bytes, unreadable.  A missing file is None
    with ``missing_ok``, else an error.
    """
    name = str(path) if shown is None else shown
    try:
        return read_bounded(path, limit, expected=expected)
    except UnsafeFile as refused:
        raise GpuspecError(f"{name} {refused.message}") from None
    except FileNotFoundError:
        if missing_ok:
            return None
        raise GpuspecError(f"{name} does not exist") from None
    except OSError as exc:
        raise GpuspecError(f"cannot read {name}: {exc.strerror or exc}") from None


_WRITE_GIT = "is inside a .git folder (git's own data, where CI keeps its token); gpuspec never writes there"
_WRITE_LINK = "is a symbolic link; gpuspec does not write through links"
_WRITE_FOLDER = "is a folder, not a file"
_WRITE_SPECIAL = "is not a regular file (a FIFO, socket or device); gpuspec does not write it"
_WRITE_OUTSIDE = ("is in a folder reached through a symbolic link that leads outside the repository; gpuspec does "
                  "not write through links")


def _refuse_entry(info: os.stat_result) -> None:
    """Raise UnsafeFile unless ``info`` (an lstat) is a regular file."""
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFile(_WRITE_LINK)
    if stat.S_ISDIR(info.st_mode):
        raise UnsafeFile(_WRITE_FOLDER)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile(_WRITE_SPECIAL)


def check_write(path: Path) -> None:
    """Raise UnsafeFile when gpuspec must not write ``path``; return when it may (absent or a regular file).

    Refused: a path inside a ``.git`` folder, as written or where the links of its folders lead; a folder on the
    way that is a symbolic link leading out of the repository (:func:`trusted_root`); an existing entry of that
    name that is a symbolic link (even one into the repository), a folder, a FIFO, a socket or a device.  A
    folder that does not exist yet is judged by the part of the path that exists.
    """
    absolute = os.path.abspath(path)
    parent = os.path.dirname(absolute)
    real_parent = os.path.realpath(parent)
    if GIT_DIR in Path(absolute).parts or GIT_DIR in Path(real_parent).parts:
        raise UnsafeFile(_WRITE_GIT)
    if real_parent != parent and not _inside(real_parent, trusted_root(Path(absolute))):
        raise UnsafeFile(_WRITE_OUTSIDE)
    try:
        info = os.lstat(absolute)
    except FileNotFoundError:
        return
    _refuse_entry(info)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_file(path: Path, data: bytes, *, mode: int | None = None, exclusive: bool = False,
               parents: bool = False) -> None:
    """Write ``data`` as the file ``path`` without following a link; raise UnsafeFile or OSError when refused.

    :func:`check_write` first (nothing is created when it refuses); ``parents`` then creates missing folders.
    The bytes go to a new temporary file in the same folder (``O_CREAT | O_EXCL | O_NOFOLLOW``), the name is
    checked again (still absent or a regular file) and the temporary file replaces it (``os.replace``): a link
    is never written through and a reader sees the old file or the new one, never half of one.  ``exclusive``
    refuses an existing file (FileExistsError) and creates the name itself with ``O_EXCL``.  The new file gets
    ``mode``, else the mode of the file it replaces, else 0o666 less the umask.
    """
    check_write(path)
    absolute = Path(os.path.abspath(path))
    if parents:
        absolute.parent.mkdir(parents=True, exist_ok=True)
    name = absolute.name
    cloexec = getattr(os, "O_CLOEXEC", 0)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    folder = os.open(absolute.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | cloexec)
    try:
        create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow | cloexec
        if exclusive:
            fd = os.open(name, create, 0o666, dir_fd=folder)
            try:
                _write_all(fd, data)
                if mode is not None:
                    os.fchmod(fd, mode)
            except BaseException:
                os.close(fd)
                os.unlink(name, dir_fd=folder)
                raise
            os.close(fd)
            return
        temporary = f".{name[:96]}.{secrets.token_hex(6)}.gpuspec-tmp"
        fd = os.open(temporary, create, 0o666, dir_fd=folder)
        try:
            try:
                _write_all(fd, data)
                try:
                    info: os.stat_result | None = os.lstat(name, dir_fd=folder)
                except FileNotFoundError:
                    info = None
                if info is not None:
                    _refuse_entry(info)
                chosen = mode if mode is not None else stat.S_IMODE(info.st_mode) if info is not None else None
                if chosen is not None:
                    os.fchmod(fd, chosen)
            finally:
                os.close(fd)
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def safe_write(path: Path, data: str | bytes, *, shown: str | None = None, what: str = "", mode: int | None = None,
               exclusive: bool = False, parents: bool = False, hint: str | None = None) -> None:
    """Write a file gpuspec writes by name (:func:`write_file`, text as UTF-8); a refusal is a GpuspecError.

    The message names the file (``shown``, default ``path``) and says why (a symbolic link, a FIFO, socket,
    device or folder, inside ``.git``, a folder linked out of the repository, a missing folder, no permission);
    ``what`` (e.g. "the report") reads "cannot write the report to FILE: ..." in the last cases.  ``hint``
    goes with an I/O error; an existing file under ``exclusive`` hints at --force.
    """
    name = str(path) if shown is None else shown
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        write_file(path, payload, mode=mode, exclusive=exclusive, parents=parents)
    except UnsafeFile as refused:
        raise GpuspecError(f"{name} {refused.message}; nothing was written") from None
    except FileExistsError:
        raise GpuspecError(f"{name} already exists; not overwriting it", hint="pass --force to replace it") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        folder = Path(os.path.abspath(path)).parent
        if isinstance(exc, FileNotFoundError) and not folder.is_dir():
            reason = f"the folder {path.parent} does not exist"
        target = f"{what} to {name}" if what else name
        raise GpuspecError(f"cannot write {target}: {reason}", hint=hint) from None
