"""The sha256 of render's input files, remembered by each file's state so that a re-render reads and hashes only
the files that changed.

A digest is taken from the memo only when the file is, by ``lstat``, a regular file (no link) in a folder whose
links stay inside the repository (what :func:`gpuspec.loader.safefile.read_bounded` would allow) and its state
(size, modification time, status-change time, inode: :mod:`gpuspec.render.filestate`) is the one it had when its
bytes were read.  Any write sets the status-change time to the clock of that moment, which no user can set back,
so a file in the same state holds the same bytes, with one exception: a write within the same tick of the file
system's clock as the read, with the same size.  As git does with its index ("racy git"), a digest is therefore
remembered only for a file whose modification and status-change times are at least :data:`RACY_NS` older than
the moment the memo was opened, before the file was looked at; a file changed since is hashed again, each run,
until it has settled.

The memo is an entry of the per-user cache, sealed like every other (:mod:`gpuspec.usercache`): nothing in the
repository or the output folder can add to it.  It serves local runs only: render's digests of its inputs and
the keys of the last reports of `lint`, `validate` and `verify` (:mod:`gpuspec.cli.resultcache`); the
pull-request gate (``render --check --base``, ``lint --base``) never reads it
(:meth:`gpuspec.render.stamp.RenderStamp.open`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from gpuspec import usercache
from gpuspec.loader.safefile import UnsafeFile, check_link
from gpuspec.render.filestate import FileState, file_state, state_times

#: How much older than the memo's opening a file's times must be for its digest to be remembered: the coarsest
#: timestamp granularity of a common file system (FAT's two seconds), far above Linux's clock tick.
RACY_NS = 2_000_000_000
#: Bumped when what an entry holds changes.
FORMAT = 1


class DigestMemo:
    """Digests of the input files of one fleet and policy folder, by path and state (see the module)."""

    def __init__(self, fleet_dir: Path, policies_dir: Path | None, now_ns: int | None = None,
                 scope: str = "render") -> None:
        """Open the memo of these folders (empty when caching is off); ``now_ns``: the moment it counts as opened
        (default: now); ``scope``: the command whose inputs it holds (each keeps its own, as each saves only the
        files of its run)."""
        self.opened = time.time_ns() if now_ns is None else now_ns
        self.slot = usercache.entry_path("input-digests", str(FORMAT), scope, os.path.abspath(fleet_dir),
                                         os.path.abspath(policies_dir or ""))
        stored = usercache.load(self.slot)
        self._stored: dict[str, object] = stored if isinstance(stored, dict) else {}
        self._kept: dict[str, tuple[FileState, str]] = {}
        self._folders: dict[str, bool] = {}
        #: How many digests this run took from the memo, and how many it read.
        self.hits = 0
        self.reads = 0

    def _folder_ok(self, folder: str) -> bool:
        """True when the links on the way to ``folder`` stay inside its repository and out of ``.git``."""
        ok = self._folders.get(folder)
        if ok is None:
            try:
                check_link(Path(folder))
                ok = True
            except (UnsafeFile, OSError, RuntimeError, ValueError):
                ok = False
            self._folders[folder] = ok
        return ok

    def lookup(self, path: Path) -> tuple[FileState, str] | None:
        """The state and remembered digest of ``path`` when it is a regular file in that state, else None."""
        where = os.fspath(path)
        try:
            info = os.lstat(where)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode) or not self._folder_ok(os.path.dirname(os.path.abspath(where))):
            return None
        state = file_state(info)
        stored = self._stored.get(where)
        if not (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == state and isinstance(stored[1], str)):
            return None
        self._kept[where] = (state, stored[1])
        self.hits += 1
        return state, stored[1]

    def remember(self, path: Path, state: FileState, digest: str) -> None:
        """Remember the ``digest`` of the bytes read from ``path`` just after it was in ``state`` (a regular
        file, not a link): only once the state has settled (:data:`RACY_NS` before the memo was opened)."""
        self.reads += 1
        where = os.fspath(path)
        try:
            if not stat.S_ISREG(os.lstat(where).st_mode):
                return
        except OSError:
            return
        if max(state_times(state)) < self.opened - RACY_NS:
            self._kept[where] = (state, digest)

    def hashed(self, path: Path, read: Callable[[Path], bytes]) -> tuple[FileState, str]:
        """The state of ``path`` and the sha256 of its bytes: remembered for a file in that state, else read by
        ``read`` just after its state is taken, and remembered (see :meth:`remember`)."""
        known = self.lookup(path)
        if known is not None:
            return known
        state = file_state(os.stat(path))
        digest = hashlib.sha256(read(path)).hexdigest()
        self.remember(path, state, digest)
        return state, digest

    def save(self) -> None:
        """Store the digests of this run's files (only theirs: the entry never outgrows the inputs)."""
        if self.slot is not None and self._kept != self._stored:
            usercache.store(self.slot, self._kept)
