"""Hash the input files a cluster's output depends on (fleet.yaml, its cluster file, policies/)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpuspec.errors import GpuspecError
from gpuspec.loader.files import FLEET_FILE, cluster_files
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.render.filestate import FileState, file_state

if TYPE_CHECKING:
    from gpuspec.render.digestmemo import DigestMemo

#: Largest input file hashed (fleet files are refused past 1 MiB anyway; policies and templates are small).
MAX_INPUT_BYTES = 16 * 1024 * 1024


class UnusableInput(GpuspecError, ValueError):
    """An input file render depends on is refused (a clean exit-2 error; a ValueError for the render stamp)."""


#: Input name → the file's path and its state just before it was read (see :meth:`InputDigests.unchanged`).
InputStates = dict[str, tuple[str, FileState]]


def file_digest(path: Path, name: str | None = None, states: InputStates | None = None,
                memo: DigestMemo | None = None) -> str:
    """sha256 of a regular input file inside its repository; UnusableInput for a FIFO, device, outside link or
    oversized file (never read, so hashing cannot hang or leak).  With ``states``, the file's path and state just
    before it was read go there under ``name``.  ``memo``: digests remembered by file state (a file in the state
    it was hashed in is not read again, see :mod:`gpuspec.render.digestmemo`)."""
    try:
        if memo is not None:
            state, digest = memo.hashed(path, lambda p: read_bounded(p, MAX_INPUT_BYTES))
        else:
            state = file_state(os.stat(path))
            digest = hashlib.sha256(read_bounded(path, MAX_INPUT_BYTES)).hexdigest()
        if states is not None and name is not None:
            states[name] = (os.fspath(path), state)
        return digest
    except UnsafeFile as refused:
        raise UnusableInput(f"{path} {refused.message}",
                            hint="policy packs and fleet files must be regular files inside the repository") from None
    except OSError as exc:
        raise UnusableInput(f"{path} cannot be read: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class InputDigests:
    """sha256 of each input file, keyed by a machine-independent name (``fleet.yaml``, ``clusters/x.yaml``…)."""

    shared: dict[str, str] = field(default_factory=dict)
    clusters: dict[str, str] = field(default_factory=dict)
    #: Where each input was read from and its state just before (empty when the digests were not read here).
    states: InputStates = field(default_factory=dict, compare=False, repr=False)

    def unchanged(self, names: Iterable[str] | None = None) -> bool:
        """True when every input hashed (or each of ``names``) is still in the state it was read in (see
        :func:`unchanged`)."""
        return unchanged(self.states, names)

    def for_cluster(self, source_file: str) -> str:
        """One sha256 over fleet.yaml, policies/ and the cluster's own file (by its file name)."""
        key = cluster_input(Path(source_file))
        items = sorted(self.shared.items())
        if key in self.clusters:
            items.append((key, self.clusters[key]))
        digest = hashlib.sha256()
        for name, sha in items:
            digest.update(f"{name}\0{sha}\n".encode())
        return digest.hexdigest()

    def for_shared(self) -> str:
        """One sha256 over the inputs every cluster shares: fleet.yaml and policies/ (the fleet-wide files add
        what they take from each cluster, see :func:`gpuspec.render.bootstrap.entries_digest`)."""
        digest = hashlib.sha256()
        for name, sha in sorted(self.shared.items()):
            digest.update(f"{name}\0{sha}\n".encode())
        return digest.hexdigest()


def unchanged(states: InputStates, names: Iterable[str] | None = None) -> bool:
    """True when every file of ``states`` (or each of ``names``) is still in the state it was read in, so whatever
    read it since read the bytes of its digest (any write changes a file's status-change time)."""
    try:
        for name in states if names is None else names:
            path, state = states[name]
            if file_state(os.stat(path)) != state:
                return False
    except (KeyError, OSError):
        return False
    return True


def read_shared_digests(fleet_dir: Path, policies_dir: Path | None,
                        states: InputStates | None = None, memo: DigestMemo | None = None) -> dict[str, str]:
    """Hash fleet.yaml and every file below ``policies_dir`` (when it exists): the inputs every cluster shares
    (``states``, ``memo``: see :func:`file_digest`)."""
    shared = {FLEET_FILE: file_digest(fleet_dir / FLEET_FILE, FLEET_FILE, states, memo)}
    if policies_dir is not None and policies_dir.is_dir():
        for path in sorted(p for p in policies_dir.rglob("*") if p.is_file()):
            name = f"policies/{path.relative_to(policies_dir).as_posix()}"
            shared[name] = file_digest(path, name, states, memo)
    return shared


def cluster_input(path: Path) -> str:
    """The name :class:`InputDigests` gives the cluster file ``path``."""
    return f"clusters/{path.name}"


def read_input_digests(fleet_dir: Path, policies_dir: Path | None, *, remembered: bool = False) -> InputDigests:
    """Hash fleet.yaml, every cluster file and every file below ``policies_dir`` (when it exists).

    ``remembered``: take the digest of a file in the state it was hashed in from the per-user memo and read only
    the others (:mod:`gpuspec.render.digestmemo`; never for the pull-request gate)."""
    memo = None
    if remembered:
        from gpuspec.render.digestmemo import DigestMemo

        memo = DigestMemo(fleet_dir, policies_dir)
    states: InputStates = {}
    shared = read_shared_digests(fleet_dir, policies_dir, states, memo)
    clusters = {(name := cluster_input(p)): file_digest(p, name, states, memo) for p in cluster_files(fleet_dir)}
    if memo is not None:
        memo.save()
    return InputDigests(shared, clusters, states)
