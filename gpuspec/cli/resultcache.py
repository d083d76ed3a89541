"""The last report of `lint` and `validate`, replayed when none of its inputs changed since that run.

A second `gpuspec lint` of the same fleet (a pre-commit hook, an editor, a developer running it again)
need not import the schema, rules and support matrix to find what it found before.  The entry is
keyed by everything the report depends on:

- gpuspec's code and packaged data (:func:`gpuspec.usercache.code_fingerprint`), the command and the
  options that change findings (policy packs, ``--today``, else today's date in UTC, which exceptions
  expire against), the working folder (reports name files relative to it), the fleet and policy folders
  and the repository root a link may point into, and every ``GPUSPEC_*`` setting;
- the bytes of every file below the fleet folder and the policy folder (``fleet.yaml``, cluster files,
  ``templates/``, packs and their exceptions), by path and sha256, and the folders' listings.

The findings are stored as the report shows them (located, credentials redacted), sealed like every
entry of the user cache (:mod:`gpuspec.usercache`), so an entry planted in a shared cache folder is
ignored.  Anything unusual in the inputs (a FIFO, a device, a link out of the repository or to a
folder, a file over 16 MiB, more than 100,000 files) is never hashed or cached: the command then runs
in full and reports it as usual.  ``GPUSPEC_NO_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuspec import usercache
from gpuspec.findings import Finding, Suppressed

if TYPE_CHECKING:
    from gpuspec.render.digestmemo import DigestMemo

#: Bumped when what an entry holds changes.
FORMAT = 1
#: Largest input file hashed; a larger one is reported by the loader, never cached.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: More files than this below the inputs: run in full (hashing them would cost more than it saves).
MAX_FILES = 100_000
#: Settings that choose where caches live or whether they are used, not what a report says.
_CACHE_SETTINGS = frozenset({"GPUSPEC_CACHE_DIR", "GPUSPEC_CACHE_KEY", "GPUSPEC_CACHE_KEY_FILE", "GPUSPEC_NO_CACHE"})


@dataclass(frozen=True, slots=True)
class Report:
    """What a command reports, ready for any reporter: located, redacted findings and their context."""

    findings: list[Finding]
    suppressed: list[Suppressed] = field(default_factory=list)
    summary: str | None = None
    usable: bool = True


class _Uncacheable(Exception):
    """An input the key cannot stand for; the command runs in full."""


class _Hasher:
    """Digests of the input files of one key: read as the loader reads them, or taken from the per-user memo of
    digests by file state (:mod:`gpuspec.render.digestmemo`) for a file in the state it was hashed in."""

    def __init__(self, memo: DigestMemo | None) -> None:
        self.memo = memo
        self.folders: dict[str, str] = {}  # real paths of the folders met (see safefile.read_bounded)

    def file_digest(self, path: str, regular: bool = False) -> str:
        """sha256 of a file read as the loader reads it (:func:`gpuspec.loader.safefile.read_bounded`: no link out
        of the repository or into ``.git``, no FIFO or device, bounded); _Uncacheable otherwise.  ``regular``: the
        caller saw a regular file (not a link) there, whose digest the memo may hold."""
        from gpuspec.loader.safefile import UnsafeFile, read_bounded

        def read(where: Path) -> bytes:
            return read_bounded(where, MAX_FILE_BYTES, folders=self.folders)

        try:
            if regular and self.memo is not None:
                return self.memo.hashed(Path(path), read)[1]
            return hashlib.sha256(read(Path(path))).hexdigest()
        except (UnsafeFile, OSError):
            raise _Uncacheable(path) from None


def _lstat(digest: Any, top: str) -> os.stat_result | None:
    """``lstat`` of ``top``; None, with its absence added to ``digest``, when there is nothing there."""
    try:
        return os.lstat(top)
    except FileNotFoundError:
        digest.update(f"absent\0{top}\n".encode("utf-8", "surrogateescape"))
        return None
    except OSError:
        raise _Uncacheable(top) from None


def _hash_tree(digest: Any, folder: Path, budget: list[int], hasher: _Hasher) -> None:
    """Add every entry below ``folder`` (name, kind, link target, content digest) to ``digest``."""
    top = os.fspath(folder)
    info = _lstat(digest, top)
    if info is not None:
        _hash_entries(digest, top, info, budget, hasher)


def _hash_entries(digest: Any, top: str, info: os.stat_result, budget: list[int], hasher: _Hasher) -> None:
    """Add every entry below the folder ``top`` (whose ``lstat`` is ``info``) to ``digest``."""
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise _Uncacheable(top)  # a fleet or policy "folder" that is a link or a file: the loader explains
    stack = [(top, "")]
    while stack:
        current, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            raise _Uncacheable(current) from None
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                raise _Uncacheable(current)
            rel = prefix + entry.name  # the path relative to ``top`` (os.path.relpath's, without its cost)
            if entry.is_symlink():
                try:
                    target = os.readlink(entry.path)
                except OSError:
                    raise _Uncacheable(entry.path) from None
                if os.path.isdir(entry.path):
                    raise _Uncacheable(entry.path)
                line = f"link\0{rel}\0{target}\0{hasher.file_digest(entry.path)}\n"
            elif entry.is_dir(follow_symlinks=False):
                if entry.name == "__pycache__":
                    continue
                stack.append((entry.path, rel + os.sep))
                line = f"dir\0{rel}\n"
            elif entry.is_file(follow_symlinks=False):
                line = f"file\0{rel}\0{hasher.file_digest(entry.path, regular=True)}\n"
            else:
                raise _Uncacheable(entry.path)
            digest.update(line.encode("utf-8", "surrogateescape"))


def _repository_root(folder: Path) -> str:
    """The real path of the repository enclosing ``folder`` (as the loader trusts links into it)."""
    from gpuspec.loader.safefile import trusted_root

    return trusted_root(folder / "x")


def _hash_input(digest: Any, path: Path, budget: list[int], hasher: _Hasher) -> None:
    """Add the folder or regular file ``path`` (a chart archive, a CRD file) to ``digest``, as :func:`_hash_tree`."""
    top = os.fspath(path)
    info = _lstat(digest, top)
    if info is None:
        return
    if stat.S_ISREG(info.st_mode):
        digest.update(f"file\0{top}\0{hasher.file_digest(top, regular=True)}\n".encode("utf-8", "surrogateescape"))
        return
    digest.update(f"tree\0{top}\n".encode("utf-8", "surrogateescape"))
    _hash_entries(digest, top, info, budget, hasher)


#: Besides ``GPUSPEC_*``: the settings of the tools a command runs (helm, kubectl, kustomize, Go's runtime).
TOOL_SETTINGS = ("HELM_", "KUBECTL_", "KUSTOMIZE_", "GODEBUG", "GOFLAGS")


def input_key(command: str, fleet_dir: Path, policies_dir: Path, options: Sequence[str], today: date,
              inputs: Sequence[Path] = (), settings: Sequence[str] = ("GPUSPEC_",),
              memo: DigestMemo | None = None) -> str | None:
    """The digest of everything a `command` report of this fleet depends on, or None when it cannot be cached.

    ``inputs``: further folders or files the report reads (verify: the rendered folder, local charts, CRDs),
    hashed like the fleet; ``settings``: prefixes of the environment variables that can change it; ``memo``:
    file digests remembered by file state, so that only files changed since they were last hashed are read."""
    if usercache.cache_dir() is None:
        return None
    digest = hashlib.sha256()
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(tuple(settings)) and k not in _CACHE_SETTINGS)
    head = [str(FORMAT), usercache.code_fingerprint(), command, os.getcwd(), os.path.abspath(fleet_dir),
            os.path.abspath(policies_dir), today.isoformat(), *options, "\0".join(f"{k}={v}" for k, v in env)]
    digest.update("\0".join(head).encode("utf-8", "surrogateescape"))
    budget = [MAX_FILES]
    hasher = _Hasher(memo)
    try:
        for folder in (fleet_dir, policies_dir):
            root = _repository_root(folder)
            digest.update(f"\0root\0{root}\n".encode("utf-8", "surrogateescape"))
            _hash_tree(digest, folder, budget, hasher)
        for path in inputs:
            digest.update(f"\0input\0{os.path.abspath(path)}\0{_repository_root(path)}\n"
                          .encode("utf-8", "surrogateescape"))
            _hash_input(digest, path, budget, hasher)
    except (_Uncacheable, RuntimeError, ValueError):  # RuntimeError: a symlink loop in pathlib before 3.13
        return None
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Entry:
    """The cache entry of one command on one fleet: its key now, and where it is stored."""

    command: str
    fleet_dir: Path
    policies_dir: Path
    options: tuple[str, ...]
    today: date
    key: str | None
    inputs: tuple[Path, ...] = ()
    settings: tuple[str, ...] = ("GPUSPEC_",)
    #: Plain data stored beside the report (verify: what its summary line counts).
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    #: The file digests the key was taken with (the check in :meth:`store` reads only files changed since).
    memo: DigestMemo | None = field(default=None, compare=False, repr=False)

    def _slot(self) -> Path | None:
        """One entry per command, working folder and inputs: a new key replaces the old entry."""
        return usercache.entry_path("results", str(FORMAT), self.command, os.getcwd(),
                                    os.path.abspath(self.fleet_dir), os.path.abspath(self.policies_dir),
                                    *(os.path.abspath(path) for path in self.inputs))

    def load(self) -> Report | None:
        """The report the last run stored for these inputs, or None."""
        if self.key is None:
            return None
        stored = usercache.load(self._slot())
        if not isinstance(stored, dict) or stored.get("key") != self.key:
            return None
        try:
            self.extra.clear()
            self.extra.update(stored.get("extra") or {})
            return Report(
                findings=[Finding.from_data(f) for f in stored["findings"]],
                suppressed=[Suppressed.from_data(s) for s in stored["suppressed"]],
                summary=stored["summary"],
                usable=bool(stored["usable"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def store(self, report: Report) -> None:
        """Remember ``report`` for these inputs, unless they changed while the command ran."""
        if self.key is None or input_key(self.command, self.fleet_dir, self.policies_dir, self.options,
                                         self.today, self.inputs, self.settings, self.memo) != self.key:
            return
        usercache.store(self._slot(), {
            "key": self.key,
            "extra": dict(self.extra),
            "findings": [f.data() for f in report.findings],
            "suppressed": [s.data() for s in report.suppressed],
            "summary": report.summary,
            "usable": report.usable,
        })


def entry(command: str, fleet_dir: Path, policies_dir: Path, options: Sequence[str] = (),
          today: date | None = None, inputs: Sequence[Path] = (), settings: Sequence[str] = ("GPUSPEC_",)) -> Entry:
    """The cache entry of ``command`` on these inputs (``today``: the day exceptions expire against, default
    today in UTC; ``inputs`` and ``settings``: see :func:`input_key`); its key is None when the inputs cannot be
    cached."""
    day = today or datetime.now(UTC).date()
    memo = None
    if usercache.cache_dir() is not None:
        from gpuspec.render.digestmemo import DigestMemo

        memo = DigestMemo(fleet_dir, policies_dir, scope=f"results-{command}")
    key = input_key(command, fleet_dir, policies_dir, options, day, inputs, settings, memo)
    if memo is not None:
        memo.save()
    return Entry(command, fleet_dir, policies_dir, tuple(options), day, key, tuple(inputs), tuple(settings),
                 memo=memo)
