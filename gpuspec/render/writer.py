"""Write the rendered files atomically, rewrite only what changed, and compare for ``render --check``.

A new output folder is built in a hidden temporary folder next to it and renamed into place.  An existing one
is changed by a journalled transaction whose cost follows what changed, not the size of the fleet: the
written files are staged in a hidden folder next to the output (same file system), the journal that lists
them and the files to delete is committed with one rename, and only then are the staged files renamed into
place and the stale ones deleted.  A failed or killed run before the commit leaves the output as it was;
one killed after it is completed, under the output lock, by the next gpuspec run that writes or checks the
folder (:func:`recover`), so every run sees the old tree or the new one, byte for byte.
Files in the output that gpuspec did not write are never deleted: the run stops.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gpuspec import usercache
from gpuspec.errors import GpuspecError
from gpuspec.render.filestate import FileState, file_state, state_size
from gpuspec.render.generator import STAMP_PATH, stamp_to_write
from gpuspec.render.serialize import HEADER_MARK, MARKDOWN_HEADER_MARK
from gpuspec.render.spool import Layered, size_of
from gpuspec.render.workers import can_fork, fork_pool

_TMP_PREFIX = ".gpuspec-tmp-"
#: Trees with more files than this are written by several processes (file creation is the slow part).
PARALLEL_FILES = 4000


@dataclass
class WriteResult:
    """What a write changed, as output-relative paths."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    #: The state of every file of the output as this write left it (taken under the output lock), when known.
    tree: dict[str, FileState] | None = None

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


def _is_ours(path: str | Path) -> bool:
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


def scan_output(out: Path, states: dict[str, FileState] | None = None,
                unstated: Collection[str] = ()) -> dict[str, str]:
    """Every regular file below ``out`` (relative POSIX path → path); GpuspecError on symlinks or odd files.

    ``states`` (when given) receives each file's :data:`FileState`, except for the files in ``unstated``."""
    if out.is_symlink():
        raise GpuspecError(f"output folder {out} is a symbolic link; refusing to write through it")
    if not out.exists():
        return {}
    if not out.is_dir():
        raise GpuspecError(f"output path {out} exists and is not a folder")
    found: dict[str, str] = {}
    _scan_folder(os.fspath(out), "", found, states, unstated)
    return found


def _scan_folder(folder: str, prefix: str, found: dict[str, str], states: dict[str, FileState] | None,
                 unstated: Collection[str] = ()) -> None:
    """Add the files below ``folder`` to ``found`` (keys start with ``prefix``), top-down like ``os.walk``.

    Directory entries tell file types without a stat per file (the kernel's d_type; a stat where it does not).
    Plain strings, not Path objects: this runs once per output file.
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
            raise GpuspecError(f"{entry.path} is a symbolic link; gpuspec refuses symlinks inside its "
                               "output folder")
    for entry in files:
        if not entry.is_file(follow_symlinks=False):
            raise GpuspecError(f"{entry.path} is not a regular file; refusing to touch the output folder")
        rel = prefix + entry.name
        found[rel] = entry.path
        if states is not None and rel not in unstated:
            states[rel] = file_state(entry.stat(follow_symlinks=False))
    for entry in dirs:
        _scan_folder(entry.path, f"{prefix}{entry.name}/", found, states, unstated)


def _foreign(existing: Mapping[str, str], expected: Collection[str], kept: Collection[str] = ()) -> list[str]:
    return sorted(rel for rel in existing if rel not in expected and rel not in kept and not _is_ours(existing[rel]))


class _Below(Mapping[str, str]):
    """The files ``rels`` of a scan of ``folder`` as :func:`scan_output` gives them (relative path → path), each
    path made when asked for: a re-render looks up a few of tens of thousands."""

    __slots__ = ("_folder", "_rels")

    def __init__(self, folder: str, rels: frozenset[str]) -> None:
        """The files ``rels`` below ``folder``."""
        self._folder = folder
        self._rels = rels

    def __getitem__(self, rel: str) -> str:
        if rel not in self._rels:
            raise KeyError(rel)
        return os.path.join(self._folder, rel)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rels)

    def __len__(self) -> int:
        return len(self._rels)

    def __contains__(self, rel: object) -> bool:
        return rel in self._rels


#: Largest existing output file compared byte for byte; a larger one (or a FIFO, device or link out of the
#: repository) is never read and counts as different, so it is rewritten.
MAX_OUTPUT_FILE_BYTES = 64 * 1024 * 1024


def read_output(path: str | Path) -> bytes | None:
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
    is left over from a killed or failed run: a committed transaction is completed (:func:`recover`), anything
    else is removed.  Returns what was removed.
    """
    removed = []
    for entry in sorted(parent.glob(f".{out_name}{_TMP_PREFIX}*")):
        if entry.is_symlink() or not entry.is_dir():
            continue
        recover(entry, parent / out_name)
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
    path = lock_path(out)
    if path in _HELD:  # this process holds it already (the render command around its write): re-entered
        yield
        return
    from filelock import FileLock, Timeout

    lock = FileLock(path)
    try:
        lock.acquire(timeout=timeout, poll_interval=0.05)
    except Timeout:
        raise GpuspecError(f"another gpuspec render has been writing {out} for {timeout:.0f} s; "
                           "gave up waiting") from None
    _HELD.add(path)
    try:
        yield
    finally:
        _HELD.discard(path)
        lock.release()


#: The output locks this process holds (a second FileLock of the same file would wait for the first).
_HELD: set[Path] = set()


def holds_lock(out: Path) -> bool:
    """True when this process holds the lock of output folder ``out``."""
    return lock_path(out) in _HELD


def write_output(out: Path, expected: Mapping[str, bytes], *, stamp: bool = False,
                 kept: Mapping[str, FileState] | None = None,
                 scanned: dict[str, FileState] | None = None) -> WriteResult:
    """Make ``out`` hold exactly ``expected`` (relative path → bytes) plus ``kept``, atomically; return what changed.

    ``kept``: output files the caller has proven current (the render stamp: unchanged inputs, unchanged file
    state), with the state it saw; they are neither read nor rewritten.  When the caller has held the output
    lock since it took their state, nothing else has changed them and they are not even stat'ed again; else
    each must still be in that state (checked under the lock, so a concurrent render cannot change it unseen).
    With ``stamp`` the output also gets the generator stamp (:mod:`gpuspec.render.generator`), rewritten only
    when another file changes.  A file-system error (no permission, read-only or full disk, a path that cannot
    hold a folder) is a GpuspecError naming the output folder; the previous output is left as it was.
    ``scanned``: the state of every file of ``out`` (relative path → state) as the caller scanned it holding the
    output lock it still holds; then the folder is not listed again (the writer takes the mapping over).
    """
    try:
        out.absolute().parent.mkdir(parents=True, exist_ok=True)
        held = holds_lock(out)
        trusted = bool(kept) and held
        with output_lock(out):
            if cleanup_stale(out.absolute().parent, out.name):
                scanned = None  # a killed run's transaction changed the folder since the caller's scan
            return _write_output(out, expected, stamp, kept or {}, trusted, scanned if held else None)
    except OSError as exc:
        where = exc.filename or out
        raise GpuspecError(f"cannot write the output folder {out}: {exc.strerror or exc} ({where})",
                           hint="choose a writable --out") from None


def _same_files(existing: Mapping[str, str], expected: Mapping[str, bytes],
                states: Mapping[str, FileState]) -> set[str]:
    """The paths of ``expected`` whose file in the output holds exactly its bytes.

    One file at a time, neither side kept (``expected`` may read its bytes back from a spool); a file whose
    size (in ``states``, when known) differs is not read.
    """
    same: set[str] = set()
    for rel in expected:
        path = existing.get(rel)
        if path is None:
            continue
        state = states.get(rel)
        if state is not None and state_size(state) != size_of(expected, rel):
            continue
        if read_output(path) == expected[rel]:
            same.add(rel)
    return same


def _settle(expected: Mapping[str, bytes], existing: Mapping[str, str], same: set[str], kept: frozenset[str],
            stamp: bool) -> Mapping[str, bytes]:
    """``expected`` with the settled generator stamp added (``stamp``); it joins ``same`` when it equals the one
    the output holds.

    ``same``: the paths of ``expected`` whose file is unchanged (see :func:`_same_files`); ``kept`` files count
    as unchanged (the caller proved them current), whatever their bytes.
    """
    extras: dict[str, bytes] = {}
    # (No set of the whole output is built: a large fleet's has tens of thousands of paths.)
    outside = any(rel not in expected and rel not in kept and rel != STAMP_PATH for rel in existing)
    # Whether every file but the one being settled is unchanged (a stamp nobody writes counts as a change).
    others_same = len(same) == len(expected) and not outside and (stamp or STAMP_PATH not in existing)
    if stamp:
        present = read_output(existing[STAMP_PATH]) if STAMP_PATH in existing else None
        extras[STAMP_PATH] = stamp_to_write(present, others_same)
        if extras[STAMP_PATH] == present:
            same.add(STAMP_PATH)
    return Layered(extras, expected) if extras else expected


def _write_output(out: Path, expected: Mapping[str, bytes], stamp: bool = False,
                  kept_states: Mapping[str, FileState] | None = None, trusted: bool = False,
                  scanned: dict[str, FileState] | None = None) -> WriteResult:
    for rel in expected:
        check_relative(rel)
    kept = frozenset(kept_states or {})
    existing: Mapping[str, str]
    if scanned is not None:
        states = scanned
        existing = _Below(os.fspath(out), frozenset(states))
    else:
        states = {}
        existing = scan_output(out, states, kept if trusted else frozenset())
    if trusted:
        states.update({rel: state for rel, state in (kept_states or {}).items() if rel in existing})
    moved = sorted(rel for rel, state in (kept_states or {}).items() if states.get(rel) != state)
    if moved:
        raise GpuspecError(f"{out}: {moved[0]} changed while this render ran (another run or an edit); "
                           "render again")
    same = _same_files(existing, expected, states)
    expected = _settle(expected, existing, same, kept, stamp)
    foreign = _foreign(existing, expected, kept)
    if foreign:
        raise GpuspecError(
            f"{out} holds files gpuspec did not write ({', '.join(foreign[:5])}"
            f"{', …' if len(foreign) > 5 else ''}); refusing to replace the folder",
            hint="move them out of the output folder, or pass another --out",
        )
    result = WriteResult()
    for rel in sorted(expected):
        (result.unchanged if rel in same else result.written).append(rel)
    if kept:
        result.unchanged = sorted([*result.unchanged, *kept])
    result.deleted = sorted(rel for rel in existing if rel not in expected and rel not in kept)
    if not result.changed and out.is_dir():
        result.tree = states
        return result
    parent = out.absolute().parent
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}{_TMP_PREFIX}{os.getpid()}-", dir=parent))
    if not out.is_dir():
        _first_write(tmp, out, expected)
        return result
    _transaction(tmp, out, expected, result)
    for rel in result.deleted:
        states.pop(rel, None)
    outdir = out.absolute()
    for rel in result.written:
        states[rel] = file_state(os.stat(outdir / rel, follow_symlinks=False))
    result.tree = states
    return result


def _first_write(tmp: Path, out: Path, expected: Mapping[str, bytes]) -> None:
    """A new output folder: build the whole tree in ``tmp``, then rename it into place."""
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        todo = sorted(expected)
        _stage(tmp, todo, expected)
        os.rename(tmp, out.absolute())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _transaction(tmp: Path, out: Path, expected: Mapping[str, bytes], result: WriteResult) -> None:
    """Change an existing output folder by a journalled transaction (see :data:`JOURNAL`).

    Stage every written file in ``tmp``, create the folders they need (listed in ``tmp`` first), then commit by
    renaming the journal into place; only then move the staged files into the output and delete the stale ones.
    A failure or kill before the commit leaves the output as it was (the next run removes ``tmp`` and the
    folders it created); one after it is completed by the next run that takes the lock (:func:`cleanup_stale`).
    """
    outdir = out.absolute()
    puts = [(f"{_STAGED}/{i}", rel) for i, rel in enumerate(result.written)]
    try:
        _stage(tmp, [name for name, _ in puts], expected, result.written)
        folders = _missing_folders(outdir, result.written, result.deleted)
        _write_json(tmp / _MKDIRS, folders)
        for folder in folders:
            (outdir / folder).mkdir()
        _write_json(tmp / (JOURNAL + ".new"), {"out": os.path.realpath(outdir), "put": puts,
                                              "delete": result.deleted})
        _commit_journal(tmp)
    except BaseException:
        _abandon(tmp, outdir)
        raise
    _apply(tmp, outdir, puts, result.deleted)
    shutil.rmtree(tmp, ignore_errors=True)


#: The journal file of a transaction: present only after its commit point (a rename), it lists the staged
#: files and where they go, and the files to delete.  The staged files are in ``files/`` of the same folder.
JOURNAL = "journal.json"
_STAGED = "files"
_MKDIRS = "folders.json"


def _commit_journal(tmp: Path) -> None:
    """The commit point: one rename makes the transaction's journal exist."""
    os.rename(tmp / (JOURNAL + ".new"), tmp / JOURNAL)


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")


def _missing_folders(outdir: Path, written: list[str], deleted: list[str]) -> list[str]:
    """The folders (output-relative, parents first) the written files need that do not exist yet; none below
    a path that is a file now (a file that becomes a folder: made when the transaction is applied)."""
    gone = set(deleted)
    need: dict[str, None] = {}
    for rel in written:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if folder in need:
                continue
            target = outdir / folder
            if target.is_dir():
                continue
            if folder in gone or target.exists():
                break
            need[folder] = None
    return list(need)


def _abandon(tmp: Path, outdir: Path) -> None:
    """Undo an uncommitted transaction: remove the folders it created in the output (when still empty) and
    its staging folder."""
    try:
        folders = json.loads((tmp / _MKDIRS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        folders = []
    for folder in reversed(folders if isinstance(folders, list) else []):
        if isinstance(folder, str):
            with suppress(OSError, GpuspecError):
                check_relative(folder)
                (outdir / folder).rmdir()
    shutil.rmtree(tmp, ignore_errors=True)


def _apply(tmp: Path, outdir: Path, puts: list[tuple[str, str]] | list[list[str]], deleted: list[str]) -> None:
    """Carry out a committed journal (idempotent: a file already moved or deleted is skipped)."""
    for rel in deleted:
        with suppress(FileNotFoundError):
            os.unlink(outdir / rel)
        _prune(outdir, rel)
    for name, rel in puts:
        source = tmp / name
        if not os.path.lexists(source):
            continue  # moved before the run was stopped
        target = outdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)


def _prune(outdir: Path, rel: str) -> None:
    """Remove the folders of ``rel`` that its deletion left empty (never the output folder itself)."""
    parts = rel.split("/")[:-1]
    while parts:
        try:
            (outdir / "/".join(parts)).rmdir()
        except OSError:
            return
        parts.pop()


def recover(staging: Path, outdir: Path) -> bool:
    """Finish the committed transaction left in ``staging`` (a killed or failed run), or abandon an uncommitted
    one; True when a journal was carried out.  Only plain output paths and staged files are ever moved."""
    try:
        journal = json.loads((staging / JOURNAL).read_text(encoding="utf-8"))
    except FileNotFoundError:
        _abandon(staging, outdir)
        return False
    except (OSError, ValueError):
        journal = None
    puts, deleted = _journal_entries(journal, outdir)
    if puts is None or deleted is None:
        shutil.rmtree(staging, ignore_errors=True)  # not a journal this gpuspec wrote for this folder
        return False
    if outdir.is_dir():
        scan_output(outdir)  # refuses symbolic links inside the output before anything is moved
        _apply(staging, outdir, puts, deleted)
    shutil.rmtree(staging, ignore_errors=True)
    return True


def _journal_entries(journal: object, outdir: Path) -> tuple[list[tuple[str, str]] | None, list[str] | None]:
    if not isinstance(journal, dict) or journal.get("out") != os.path.realpath(outdir):
        return None, None
    puts, deleted = journal.get("put"), journal.get("delete")
    if not isinstance(puts, list) or not isinstance(deleted, list):
        return None, None
    try:
        pairs = [(str(name), str(rel)) for name, rel in puts]
        for name, rel in pairs:
            check_relative(rel)
            if not re.fullmatch(rf"{_STAGED}/[0-9]+", name):
                return None, None
        for rel in deleted:
            check_relative(rel)
    except (GpuspecError, TypeError, ValueError):
        return None, None
    return pairs, [str(rel) for rel in deleted]


def _stage(tmp: Path, names: list[str], data: Mapping[str, bytes], keys: list[str] | None = None) -> None:
    """Write ``data[keys[i]]`` to ``tmp/names[i]`` for each i (``keys`` None: the same as ``names``), by several
    processes for many.  The forked builders inherit the lists: nothing is pickled or sent to them but a number."""
    global _BUILD
    jobs = _jobs(len(names))
    _BUILD = (tmp, names, keys, data, jobs)
    try:
        if jobs > 1:
            with fork_pool(jobs) as pool:
                pool.map(_build_share, range(jobs))
        else:
            _build_share(0)
    finally:
        _BUILD = None


#: What forked builders work on: the folder files go into, the file names, the keys of their bytes (None: the
#: names), the bytes by key, and how many builders share the files.
_BUILD: tuple[Path, list[str], list[str] | None, Mapping[str, bytes], int] | None = None


def _jobs(files: int) -> int:
    if files < PARALLEL_FILES or not can_fork():
        return 1
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def _build_share(share: int) -> None:
    """Write builder ``share``'s files of :data:`_BUILD` (every so-many'th, from its own number on) into new
    files below the folder."""
    assert _BUILD is not None
    tmp, names, keys, data, jobs = _BUILD
    made: set[Path] = set()
    for i in range(share, len(names), jobs):
        target = tmp / names[i]
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            view = memoryview(data[names[i] if keys is None else keys[i]])
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
                 stamp: bool = False, kept: Mapping[str, FileState] | None = None) -> list[Drift]:
    """Compare ``out`` with ``expected``; one Drift per stale, missing, hand-edited or unexpected file.

    ``kept``: output files the caller has proven current, with their state (see :func:`write_output`); they are
    not read, and one that is gone or no longer in that state counts as changed.  With ``stamp`` the generator
    stamp is expected too: any valid stamp passes while the other files match (a newer or older gpuspec whose
    output is the same), else it must name this gpuspec's version.
    """
    with ExitStack() as stack:
        # No folder to lock (nothing rendered yet) or one we may not open: compare unlocked.
        with suppress(OSError):
            stack.enter_context(output_lock(out))
            cleanup_stale(out.absolute().parent, out.name)  # a killed render's committed transaction is finished
        return _check_output(out, expected, label, stamp, kept or {})


def _check_output(out: Path, expected: Mapping[str, bytes], label: str, stamp: bool,
                  kept_states: Mapping[str, FileState]) -> list[Drift]:
    states: dict[str, FileState] = {}
    existing = scan_output(out, states)
    drifts = [Drift(rel, "missing" if rel not in states else "changed",
                    f"{label}/{rel} changed while this check ran; check again\n")
              for rel, state in sorted(kept_states.items()) if states.get(rel) != state]
    kept = frozenset(kept_states)
    same = _same_files(existing, expected, states)
    expected = _settle(expected, existing, same, kept, stamp)
    # The files in either but kept or unchanged ones, without a set of the whole output (tens of thousands).
    differing = [rel for rel in existing if rel not in kept and rel not in same]
    differing += [rel for rel in expected if rel not in existing and rel not in kept and rel not in same]
    for rel in sorted(differing):
        have = read_output(existing[rel]) if rel in existing else None
        want = expected.get(rel)
        if have != want:
            drifts.append(drift(rel, have, want, label))
    return drifts


def drift(rel: str, have: bytes | None, want: bytes | None, label: str = "rendered") -> Drift:
    """The Drift of the output file ``rel`` that holds ``have`` where ``want`` belongs (None: no such file),
    with a unified diff from the one to the other."""
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
    return Drift(rel, kind, diff)
