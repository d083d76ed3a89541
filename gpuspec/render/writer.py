"""Write the rendered files atomically, rewrite only what changed, and compare for ``render --check``.

The new tree is built in a hidden temporary folder next to the output: files
whose bytes are unchanged are hard-linked from the current output (same inode
and mtime), changed files are written fresh.  The two folders are then swapped
with one atomic ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames
elsewhere), so a failed or killed run leaves the previous output in place.
Files in the output that gpuspec did not write are never deleted: the run stops.
"""

from __future__ import annotations

import ctypes
import difflib
import errno
import hashlib
import multiprocessing
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gpuspec import usercache
from gpuspec.errors import GpuspecError
from gpuspec.render.generator import STAMP_PATH, settle_stamp
from gpuspec.render.serialize import HEADER_MARK, MARKDOWN_HEADER_MARK
from gpuspec.render.workers import fork_pool

_TMP_PREFIX = ".gpuspec-tmp-"
#: Trees with more files than this are written by several processes (file creation is the slow part).
PARALLEL_FILES = 4000
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
#: renamex_np(2) flag of macOS (sys/stdio.h): swap the two names atomically.
_RENAME_SWAP = 0x2


@dataclass
class WriteResult:
    """What a write changed, as output-relative paths."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """True when any file was written or deleted."""
        return bool(self.written or self.deleted)


def check_relative(path: str) -> None:
    """Refuse an output path that is absolute, empty or climbs out of the output folder."""
    pure = PurePosixPath(path)
    if (pure.is_absolute() or not pure.parts or any(p in ("", ".", "..") for p in pure.parts) or "\\" in path
            or str(pure) != path or "\0" in path):
        raise GpuspecError(f"refusing to write {path!r}: not a plain path inside the output folder")


def _is_ours(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False  # a FIFO or device is never read (and never gpuspec's)
        start = os.read(fd, len(MARKDOWN_HEADER_MARK)).decode("utf-8", "replace")
    except OSError:
        return False
    finally:
        os.close(fd)
    return start.startswith(HEADER_MARK) or start == MARKDOWN_HEADER_MARK


def scan_output(out: Path) -> dict[str, Path]:
    """Every regular file below ``out`` (relative POSIX path → path); GpuspecError on symlinks or odd files."""
    if out.is_symlink():
        raise GpuspecError(f"output folder {out} is a symbolic link; refusing to write through it")
    if not out.exists():
        return {}
    if not out.is_dir():
        raise GpuspecError(f"output path {out} exists and is not a folder")
    found: dict[str, Path] = {}
    _scan_folder(out, "", found)
    return found


def _scan_folder(folder: Path, prefix: str, found: dict[str, Path]) -> None:
    """Add the files below ``folder`` to ``found`` (keys start with ``prefix``), top-down like ``os.walk``.

    Directory entries tell file types without a stat per file (the kernel's d_type; a stat where it does not).
    """
    dirs: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                (dirs if entry.is_dir(follow_symlinks=False) else files).append(entry)
    except OSError:  # an unreadable folder is skipped, as os.walk does
        return
    for entry in (*dirs, *files):
        if entry.is_symlink():
            raise GpuspecError(f"{folder / entry.name} is a symbolic link; gpuspec refuses symlinks inside its "
                               "output folder")
    for entry in files:
        if not entry.is_file(follow_symlinks=False):
            raise GpuspecError(f"{folder / entry.name} is not a regular file; refusing to touch the output folder")
        found[prefix + entry.name] = folder / entry.name
    for entry in dirs:
        _scan_folder(folder / entry.name, f"{prefix}{entry.name}/", found)


def _foreign(existing: Mapping[str, Path], expected: Mapping[str, bytes]) -> list[str]:
    return sorted(rel for rel, path in existing.items() if rel not in expected and not _is_ours(path))


#: Largest existing output file compared byte for byte; a larger one (or a FIFO, device or link out of the
#: repository) is never read and counts as different, so it is rewritten.
MAX_OUTPUT_FILE_BYTES = 64 * 1024 * 1024


def _read(path: Path) -> bytes | None:
    """The bytes of an existing output file, or None when it is not a regular file of at most the limit (the
    output folder's own links are refused where it is scanned; here no link is followed at all)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_OUTPUT_FILE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_OUTPUT_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= MAX_OUTPUT_FILE_BYTES else None


def _exchange(a: Path, b: Path) -> None:
    """Atomically swap two directories (Linux renameat2, macOS renamex_np); fall back to two renames."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except (OSError, TypeError):  # Windows has no process-wide C library handle
        libc = None
    renameat2 = getattr(libc, "renameat2", None) if sys.platform.startswith("linux") else None
    renamex_np = getattr(libc, "renamex_np", None) if sys.platform == "darwin" else None
    if renameat2 is not None:
        if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), str(a))
    elif renamex_np is not None:
        if renamex_np(os.fsencode(a), os.fsencode(b), _RENAME_SWAP) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), str(a))
    aside = a.with_name(a.name + ".old")
    os.rename(b, aside)
    os.rename(a, b)
    os.rename(aside, a)


def stale_temporaries(out: Path) -> list[Path]:
    """The hidden temporary trees next to output folder ``out`` (left by a killed run unless one is writing)."""
    parent = out.absolute().parent
    try:
        return sorted(p for p in parent.glob(f".{out.name}{_TMP_PREFIX}*") if p.is_dir() and not p.is_symlink())
    except OSError:
        return []


def cleanup_stale(parent: Path, out_name: str) -> list[Path]:
    """Remove the hidden temporary trees of earlier runs next to the output (call it holding the lock).

    Every writer holds the output lock while its temporary tree exists, so under the lock any such tree
    is left over from a killed run (also one killed right after the swap, whose tree holds the old output).
    Returns what was removed.
    """
    removed = []
    for entry in sorted(parent.glob(f".{out_name}{_TMP_PREFIX}*")):
        if entry.is_symlink() or not entry.is_dir():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


#: How long a render waits for another render of the same output folder before giving up.
LOCK_TIMEOUT_SECONDS = 300.0


def lock_path(out: Path) -> Path:
    """The lock file of output folder ``out``: outside the repository (so `git add -A` never sees it), one per folder.

    In gpuspec's user cache (``locks/``), else the system's temporary folder; named by a digest of the folder's
    resolved path, so every spelling of the same folder takes the same lock.
    """
    key = hashlib.sha256(os.fsencode(os.path.realpath(out.absolute().parent / out.name))).hexdigest()[:32]
    root = usercache.cache_dir()
    folder = root / "locks" if root is not None else Path(tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / f"render-{key}.lock"


@contextmanager
def output_lock(out: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the lock of output folder ``out`` (an OS file lock through ``filelock``: flock, or msvcrt on Windows).

    Renders and checks of the same output run one after the other, so none reports a tree that another
    replaced under it.  The lock dies with its process; a render waits up to ``timeout`` seconds.
    """
    from filelock import FileLock, Timeout

    lock = FileLock(lock_path(out))
    try:
        lock.acquire(timeout=timeout, poll_interval=0.05)
    except Timeout:
        raise GpuspecError(f"another gpuspec render has been writing {out} for {timeout:.0f} s; "
                           "gave up waiting") from None
    try:
        yield
    finally:
        lock.release()


def write_output(out: Path, expected: Mapping[str, bytes], *, stamp: bool = False) -> WriteResult:
    """Make ``out`` hold exactly ``expected`` (relative path → bytes), atomically; return what changed.

    With ``stamp`` the output also gets the generator stamp (:mod:`gpuspec.render.generator`), rewritten only
    when another file changes.  A file-system error (no permission, read-only or full disk, a path that
    cannot hold a folder) is a GpuspecError naming the output folder; the previous output is left as it was.
    """
    try:
        out.absolute().parent.mkdir(parents=True, exist_ok=True)
        with output_lock(out):
            cleanup_stale(out.absolute().parent, out.name)
            return _write_output(out, expected, stamp)
    except OSError as exc:
        where = exc.filename or out
        raise GpuspecError(f"cannot write the output folder {out}: {exc.strerror or exc} ({where})",
                           hint="choose a writable --out") from None


def _with_stamp(expected: Mapping[str, bytes], existing: Mapping[str, Path],
                current: dict[str, bytes | None]) -> dict[str, bytes]:
    """``expected`` plus the settled generator stamp; ``current`` gains the stamp's present bytes."""
    current[STAMP_PATH] = _read(existing[STAMP_PATH]) if STAMP_PATH in existing else None
    seen: dict[str, bytes | None] = {**dict.fromkeys(existing), **current}
    return {**expected, STAMP_PATH: settle_stamp(expected, seen)}


def _write_output(out: Path, expected: Mapping[str, bytes], stamp: bool = False) -> WriteResult:
    for rel in expected:
        check_relative(rel)
    existing = scan_output(out)
    current = {rel: _read(existing[rel]) if rel in existing else None for rel in expected}
    if stamp:
        expected = _with_stamp(expected, existing, current)
    foreign = _foreign(existing, expected)
    if foreign:
        raise GpuspecError(
            f"{out} holds files gpuspec did not write ({', '.join(foreign[:5])}"
            f"{', …' if len(foreign) > 5 else ''}); refusing to replace the folder",
            hint="move them out of the output folder, or pass another --out",
        )
    result = WriteResult()
    for rel in sorted(expected):
        (result.unchanged if current[rel] == expected[rel] else result.written).append(rel)
    result.deleted = sorted(set(existing) - set(expected))
    if not result.changed and out.is_dir():
        return result
    parent = out.absolute().parent
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}{_TMP_PREFIX}{os.getpid()}-", dir=parent))
    try:
        mode = out.stat().st_mode & 0o7777 if out.is_dir() else 0o777 & ~_umask()
        os.chmod(tmp, mode)
        todo = sorted(expected)
        jobs = _jobs(len(todo))
        global _BUILD
        _BUILD = (tmp, expected, existing, current)
        try:
            if jobs > 1:
                with fork_pool(jobs) as pool:
                    pool.map(_build_files, [todo[i::jobs] for i in range(jobs)])
            else:
                _build_files(todo)
        finally:
            _BUILD = None
        if out.is_dir():
            _exchange(tmp, out.absolute())
        else:
            os.rename(tmp, out.absolute())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


#: What forked builders work on: temp folder, expected bytes, existing files and their current bytes.
_BUILD: tuple[Path, Mapping[str, bytes], Mapping[str, Path], Mapping[str, bytes | None]] | None = None


def _jobs(files: int) -> int:
    if files < PARALLEL_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def _build_files(paths: list[str]) -> None:
    """Put each of ``paths`` into the temp tree: a hard link when unchanged, else freshly written bytes."""
    assert _BUILD is not None
    tmp, expected, existing, current = _BUILD
    made: set[Path] = set()
    for rel in paths:
        data = expected[rel]
        target = tmp / rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        if current[rel] == data:
            try:
                os.link(existing[rel], target)
                continue
            except OSError:
                pass
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass(frozen=True, slots=True)
class Drift:
    """One output file that differs from what gpuspec would write, with a unified diff."""

    path: str
    kind: str  # "changed", "missing", "unexpected"
    diff: str


def check_output(out: Path, expected: Mapping[str, bytes], label: str = "rendered", *,
                 stamp: bool = False) -> list[Drift]:
    """Compare ``out`` with ``expected``; one Drift per stale, missing, hand-edited or unexpected file.

    With ``stamp`` the generator stamp is expected too: any valid stamp passes while the other files match
    (a newer or older gpuspec whose output is the same), else it must name this gpuspec's version.
    """
    with ExitStack() as stack:
        # No folder to lock (nothing rendered yet) or one we may not open: compare unlocked.
        with suppress(OSError):
            stack.enter_context(output_lock(out))
        return _check_output(out, expected, label, stamp)


def _check_output(out: Path, expected: Mapping[str, bytes], label: str, stamp: bool) -> list[Drift]:
    existing = scan_output(out)
    if stamp:
        current: dict[str, bytes | None] = {rel: _read(existing[rel]) if rel in existing else None
                                            for rel in expected}
        expected = _with_stamp(expected, existing, current)
    else:
        current = {}
    drifts: list[Drift] = []
    for rel in sorted(set(existing) | set(expected)):
        have = current[rel] if rel in current else _read(existing[rel]) if rel in existing else None
        want = expected.get(rel)
        if have == want:
            continue
        kind = "missing" if have is None else "unexpected" if want is None else "changed"
        old = (have or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (want or b"").decode("utf-8", "replace").splitlines(keepends=True)
        diff = "".join(difflib.unified_diff(
            old, new,
            fromfile=f"a/{label}/{rel}" if have is not None else "/dev/null",
            tofile=f"b/{label}/{rel}" if want is not None else "/dev/null",
        ))
        if diff and not diff.endswith("\n"):
            diff += "\n\\ No newline at end of file\n"
        drifts.append(Drift(rel, kind, diff))
    return drifts
