"""Remember a successful render so that re-rendering or checking unchanged inputs costs little more than
hashing them.

After ``gpuspec render`` (or a clean ``render --check``) a stamp goes into the user cache: a digest of every
input file's bytes and of gpuspec's own code, the findings that were reported, and the size, mtime, ctime
and inode of every file in the output folder.  When the inputs hash the same and the output folder's files
are exactly the stamped ones, neither has changed since, so the output is current: the stored findings are
reported again and nothing is validated, compiled or compared.  Any edit of an output file (even with its
mtime restored) changes its ctime, so a hand-edited file always takes the full path.

The stamp also keeps, per cluster, the key of everything that cluster's files are a function of (gpuspec's
code, fleet.yaml, policies/, the template overrides, its own file, the findings its exceptions accept) and
the paths of those files.  When the inputs changed, a cluster whose key is the same and whose files are
exactly as stamped is current: it is neither compiled nor serialized, compared or rewritten
(:meth:`RenderStamp.reusable`), so a re-render costs what changed plus a stat of the output tree.

The clusters' parts are stored in :data:`gpuspec.usercache.SHARDS` entries by cluster name, beside a main entry
(the key, the findings, the fleet-wide files' states): no entry, and so no payload built or read back, holds
the whole fleet, and a chunk of a large fleet reads only its own clusters' shards.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuspec import usercache
from gpuspec.findings import Finding
from gpuspec.render.filestate import FileState
from gpuspec.render.inputs import InputDigests, read_input_digests
from gpuspec.render.treestate import ScanAhead, TreeState, tree_state
from gpuspec.templating.environment import override_files


@dataclass(frozen=True)
class Stamped:
    """What the last successful render of unchanged inputs reported."""

    findings: list[Finding]
    files: int
    clusters: int


@dataclass(frozen=True, slots=True)
class Part:
    """One cluster's share of the output as stamped: its key, its files, and its line of the handover index."""

    key: str
    paths: tuple[str, ...]
    #: The cluster's handover index summary, packed (see :func:`gpuspec.handover.documents.pack_summary`).
    brief: bytes
    #: The state each of ``paths`` had when the output was stamped.
    states: tuple[FileState, ...] = ()

    def data(self, states: tuple[FileState, ...]) -> tuple[Any, ...]:
        """Plain data for the cache entry, with ``states`` (the state of each of :attr:`paths` now)."""
        return (self.key, self.paths, self.brief, states)

    @classmethod
    def from_data(cls, data: Any) -> Part | None:
        """The part stored as :meth:`data`, or None when the entry does not hold one."""
        try:
            key, paths, brief, states = data
            if isinstance(key, str) and isinstance(brief, bytes) and _tuple_of(paths, str) \
                    and _tuple_of(states, int, len(paths)):
                return cls(key, paths, brief, states)
        except (TypeError, ValueError):
            pass
        return None

    def current_in(self, tree: TreeState) -> bool:
        """True when each of :attr:`paths` is in ``tree`` in the state it was stamped in."""
        return all(tree.get(rel) == state for rel, state in zip(self.paths, self.states, strict=True))


def _tuple_of(value: Any, kind: type, length: int | None = None) -> bool:
    return isinstance(value, tuple) and length in (None, len(value)) and all(isinstance(item, kind) for item in value)


def _slot(fleet_dir: Path, policies_dir: Path | None, out: Path) -> Path | None:
    """The user-cache entry of the stamp of this (fleet, policies, output) triple; None when caching is off."""
    return usercache.entry_path("render", os.getcwd(), os.fspath(fleet_dir), os.fspath(policies_dir or ""),
                                os.path.abspath(out))


def cluster_key(*parts: str) -> str:
    """The key of one cluster's output: gpuspec's code and ``parts`` (its input digest, accepted findings…)."""
    digest = hashlib.sha256(usercache.code_fingerprint().encode())
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class _ShardRead:
    """What a run read from one of the stamp's shards: the run that wrote it, the clusters it holds, and those
    whose stored part :meth:`RenderStamp.reusable` found current."""

    run: Any
    names: frozenset[str]
    reused: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class RenderStamp:
    """The stamp slot of one (fleet, policies, output) triple and the digest of the inputs as they are now."""

    path: Path
    key: str
    out: Path
    #: The input digests the key was made of (prepare reuses them instead of hashing the inputs again).
    inputs: InputDigests | None = None
    _memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def _data(self) -> Any:
        """The stored main entry, read once per run."""
        if "data" not in self._memo:
            self._memo["data"] = usercache.load(self.path)
        return self._memo["data"]

    @staticmethod
    def scan_ahead(fleet_dir: Path, policies_dir: Path | None, out: Path) -> ScanAhead | None:
        """Start scanning the output folder in a child process when a stamp of it is stored (call once the output
        lock is held, before the inputs are hashed, and pass the scan to :meth:`open`); None when there is
        nothing to compare a scan with."""
        slot = _slot(fleet_dir, policies_dir, out)
        return ScanAhead.start(out) if slot is not None and slot.is_file() else None

    @classmethod
    def open(cls, fleet_dir: Path, policies_dir: Path | None, out: Path,
             today: dt.date | None = None, *, remembered: bool = True,
             ahead: ScanAhead | None = None) -> RenderStamp | None:
        """Hash the inputs; None when caching is off or an input cannot be read (the full path reports why).

        ``today`` (the day policy exceptions expire against; default today in UTC) is part of the key: a stamp
        of yesterday's run does not vouch for an exception that expired overnight.  ``remembered``: the digests
        of inputs in the state they were hashed in come from the per-user memo (a local run; the pull-request
        gate passes False: see :mod:`gpuspec.render.digestmemo`); ``ahead``: the output folder's scan, started by
        :meth:`scan_ahead`, which the first look at the output takes.
        """
        slot = _slot(fleet_dir, policies_dir, out)
        if slot is None:
            return None
        try:
            inputs = read_input_digests(fleet_dir, policies_dir, remembered=remembered)
        except (OSError, ValueError):
            return None
        digest = hashlib.sha256(usercache.code_fingerprint().encode())
        day = today or dt.datetime.now(dt.UTC).date()
        digest.update(f"today\0{day.isoformat()}\n".encode())
        templates = override_files(fleet_dir)
        for name, sha in sorted({**inputs.shared, **inputs.clusters, **templates}.items()):
            digest.update(f"{name}\0{sha}\n".encode("utf-8", "surrogateescape"))
        stamp = cls(slot, digest.hexdigest(), out, inputs)
        if ahead is not None:
            stamp._memo["ahead"] = ahead
        return stamp

    def _shard_path(self, shard: int) -> Path:
        return self.path.with_name(f"{self.path.name}-{shard}")

    def _parts(self, shard: int, run: Any) -> dict[str, Any]:
        """The stored parts of ``shard`` (name → data) when its entry belongs to the run ``run``, else none."""
        data = usercache.load(self._shard_path(shard))
        parts = data.get("parts") if isinstance(data, dict) and data.get("run") == run else None
        return parts if isinstance(parts, dict) else {}

    def _tree(self) -> TreeState | None:
        """The output folder's state, scanned on the first call of :meth:`current` or :meth:`reusable`, or since
        :meth:`scan_ahead` (the render holds the output lock from before either to its write), and kept for the
        run (a fleet rendered in chunks asks once per chunk)."""
        if "tree" not in self._memo:
            ahead: ScanAhead | None = self._memo.pop("ahead", None)
            self._memo["tree"] = ahead.result() if ahead is not None else tree_state(self.out)
        tree: TreeState | None = self._memo["tree"]
        return tree

    def take_scan(self) -> TreeState | None:
        """The output folder's scan this run made (see :meth:`_tree`), given up by the stamp; None when it made
        none or the folder held anything but folders and regular files."""
        tree: TreeState | None = self._memo.pop("tree", None)
        self.release_scan()
        return tree

    def release_scan(self) -> None:
        """Let go of the output folder's scan once the render has asked :meth:`reusable` for every chunk (a state
        per output file: tens of megabytes for thousands of clusters, not needed while the output is written),
        and of a scan started ahead that no chunk asked for."""
        self._memo.pop("tree", None)
        ahead: ScanAhead | None = self._memo.pop("ahead", None)
        if ahead is not None:
            ahead.close()

    def current(self) -> Stamped | None:
        """The stored result when inputs and output folder are exactly as stamped, else None."""
        data = self._data()
        if not isinstance(data, dict) or data.get("key") != self.key:
            return None
        try:
            shards, fleetwide, count = data["shards"], data["fleetwide"], data["count"]
            findings = [Finding.from_data(f) for f in data["findings"]]
            stamped = Stamped(findings, int(data["files"]), int(data["clusters"]))
        except (KeyError, TypeError, ValueError):
            return None
        tree = self._tree()
        if tree is None or len(tree) != count or not isinstance(fleetwide, dict) or not isinstance(shards, dict):
            return None
        seen = set(fleetwide)
        if any(tree.get(rel) != state for rel, state in fleetwide.items()):
            return None
        for shard, run in shards.items():
            for value in (self._parts(shard, run) if isinstance(shard, int) else {}).values():
                part = Part.from_data(value)
                if part is None or not part.current_in(tree):
                    return None
                seen.update(part.paths)
        return stamped if len(seen) == count else None

    def reusable(self, keys: dict[str, str]) -> dict[str, Part]:
        """The clusters (name → key now) whose stamped part has the same key and whose files are exactly as
        stamped (same size, mtime, ctime and inode): their output is current and need not be rendered again.
        The output folder is looked at once per run (it is locked until the render has written it); only the
        stamp's shards that hold ``keys`` are read."""
        data = self._data()
        runs = data.get("shards") if isinstance(data, dict) else None
        if not isinstance(runs, dict):
            return {}
        tree = self._tree()
        if tree is None:
            return {}
        found: dict[str, Part] = {}
        read: dict[int, _ShardRead] = self._memo.setdefault("read", {})
        for shard, names in usercache.by_shard(keys, str).items():
            stored = self._parts(shard, runs[shard]) if shard in runs else {}
            seen = read.setdefault(shard, _ShardRead(runs.get(shard), frozenset(stored)))
            for name in names:
                part = Part.from_data(stored.get(name))
                if part is None or part.key != keys[name] or not part.paths:
                    continue
                if part.current_in(tree):
                    found[name] = part
                    seen.reused.add(name)
        return found

    def save(self, findings: list[Finding], files: int, clusters: int,
             parts: dict[str, Part] | None = None, tree: TreeState | None = None) -> None:
        """Stamp the output folder as it is now (call after it has been written or checked), with each cluster's
        ``parts`` (their files must be in the folder as written or checked); ``tree``: its state as the writer
        left it (default: a scan now).

        The parts go into :data:`gpuspec.usercache.SHARDS` entries of their own, by cluster name, one built at a
        time, so no payload of the whole fleet is built; the main entry is written last and names the run each
        shard belongs to (a shard of an older or unfinished run is never read as this one's).  A shard whose every
        part :meth:`reusable` found current, and which holds the same clusters, is left as it is (the output
        lock, held since, means no other render rewrote it): a re-render writes the shards of what changed."""
        tree = tree if tree is not None else tree_state(self.out)
        if tree is None:
            return
        run = os.urandom(16)
        present = ((name, part) for name, part in (parts or {}).items()
                   if part.paths and all(rel in tree for rel in part.paths))
        shards = usercache.by_shard(present, lambda member: member[0])
        claimed: set[str] = set()
        runs: dict[int, bytes] = {}
        read: dict[int, _ShardRead] = self._memo.get("read", {})
        for shard, members in shards.items():
            for _name, part in members:
                claimed.update(part.paths)
            known = read.get(shard)
            names = {name for name, _part in members}
            if known is not None and isinstance(known.run, bytes) and names == known.names <= known.reused:
                runs[shard] = known.run  # every part of it is the one stored, and current: its entry stays
                continue
            stored = {name: part.data(tuple(tree[rel] for rel in part.paths)) for name, part in members}
            usercache.store(self._shard_path(shard), {"run": run, "parts": stored})
            runs[shard] = run
        usercache.store(self.path, {"key": self.key, "run": run, "shards": runs, "count": len(tree),
                                    "fleetwide": {rel: state for rel, state in tree.items() if rel not in claimed},
                                    "files": files, "clusters": clusters,
                                    "findings": [f.data() for f in findings]})
