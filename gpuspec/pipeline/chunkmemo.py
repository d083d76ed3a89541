"""A chunk's validation, remembered by everything it is a function of, so that a re-render of a large fleet
validates only the chunks whose inputs changed.

:func:`gpuspec.pipeline.chunked.validate_chunk` reads fleet.yaml, the policy folder (its files and the names
in it) and the chunk's cluster files, names files relative to the working folder and judges policy exceptions
at a day; with gpuspec's code and data (the support matrix) that is all its result depends on.  An entry is
keyed by exactly these, and holds what a render takes from the result when the render stamp proves every
cluster of the chunk current (:func:`gpuspec.pipeline.render_chunked.prepare_in_chunks`): the chunk's report
(located, redacted findings, as the report function the render passes made them) and per cluster its name, its
file, the findings its exceptions accept (as its output's key takes them) and what the bootstrap objects take
from it.

Only a usable chunk without errors is remembered, and only when its files are as they were when the run hashed
them (:meth:`gpuspec.render.inputs.InputDigests.unchanged`): a file edited while the chunk was validated is not
stored under the older bytes' digest.  There is one entry per chunk position of a fleet folder; a new key
replaces the old entry.

When a chunk's key changed because some of its cluster files did, the entry still stands for the clusters whose
file did not (:meth:`ChunkMemo.unchanged_clusters`): every validate check looks at one cluster file at a time,
given fleet.yaml and the policy packs (:mod:`gpuspec.pipeline.chunked`), so their findings are what validating
them again would give, and a re-render validates only the changed files of the chunk.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from gpuspec import usercache
from gpuspec.findings import Finding, Severity, Suppressed
from gpuspec.loader.files import display_path
from gpuspec.pipeline.chunked import ChunkReport
from gpuspec.render.bootstrap import BootstrapEntry
from gpuspec.render.inputs import InputDigests, cluster_input

#: Bumped when what an entry holds changes.
FORMAT = 2


@dataclass(frozen=True, slots=True)
class ChunkCluster:
    """What a render takes from one validated cluster of a chunk whose output it reuses."""

    name: str
    source_file: str
    #: The findings its policy exceptions accept (:func:`gpuspec.pipeline.render.accepted_json`).
    accepted: str
    entry: BootstrapEntry

    def data(self) -> tuple[Any, ...]:
        """Plain data for the cache entry."""
        return (self.name, self.source_file, self.accepted, astuple(self.entry))

    @classmethod
    def from_data(cls, data: Any) -> ChunkCluster:
        """The cluster stored as :meth:`data`; TypeError or ValueError when ``data`` is not one."""
        name, source_file, accepted, (tool, project, namespace, chart, destinations, flux) = data
        texts = (name, source_file, accepted, tool, project, namespace, chart, *flux,
                 *(text for destination in destinations for pair in destination for text in pair))
        if len(flux) != 2 or not all(isinstance(text, str) for text in texts) \
                or not all(len(pair) == 2 for destination in destinations for pair in destination):
            raise ValueError("not a stored cluster")
        return cls(name, source_file, accepted, BootstrapEntry(tool, project, namespace, chart, destinations, flux))


@dataclass(frozen=True, slots=True)
class KnownCluster:
    """One cluster of a remembered chunk whose file is as it was: what the render took from it and the findings
    (and suppressed findings) on its file, in report form."""

    cluster: ChunkCluster
    findings: tuple[Finding, ...]
    suppressed: tuple[Suppressed, ...]


@dataclass(frozen=True, slots=True)
class KnownChunk:
    """A chunk's remembered validation: its report and its clusters, in the fleet's order."""

    report: ChunkReport
    clusters: tuple[ChunkCluster, ...]


class ChunkMemo:
    """The remembered validations of the chunks of one fleet folder, for the inputs as hashed at the run's start."""

    def __init__(self, fleet_dir: Path, policies_dir: Path | None, today: dt.date, inputs: InputDigests,
                 report: Callable[..., Any]) -> None:
        """Open the memo for these inputs (``today``: the day exceptions expire against; ``report``: the
        function that turns a chunk's validation into the report stored)."""
        self._inputs = inputs
        self._scope = (str(FORMAT), os.getcwd(), os.path.abspath(fleet_dir),
                       os.path.abspath(policies_dir) if policies_dir is not None else "")
        digest = hashlib.sha256(usercache.code_fingerprint().encode())
        for part in (*self._scope, today.isoformat(), f"{report.__module__}.{report.__qualname__}",
                     *_listing(policies_dir)):
            digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
        for name, sha in sorted(inputs.shared.items()):
            digest.update(f"{name}\0{sha}\n".encode("utf-8", "surrogateescape"))
        self._shared_key = digest.hexdigest()

    def _slot(self, index: int) -> Path | None:
        return usercache.entry_path("render-chunk", *self._scope, str(index))

    def _key(self, chunk: Sequence[Path]) -> str | None:
        """The key of ``chunk`` (whole cache shards, in order); None when a file of it was not hashed."""
        digest = hashlib.sha256(self._shared_key.encode())
        for path in chunk:
            sha = self._inputs.clusters.get(cluster_input(path))
            if sha is None:
                return None
            digest.update(f"{display_path(path)}\0{sha}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def get(self, index: int, chunk: Sequence[Path]) -> KnownChunk | None:
        """The remembered validation of ``chunk``, the ``index``-th of the fleet, when its inputs are the same."""
        key = self._key(chunk)
        stored = usercache.load(self._slot(index)) if key is not None else None
        if not isinstance(stored, dict) or stored.get("key") != key:
            return None
        try:
            findings = [Finding.from_data(f) for f in stored["findings"]]
            suppressed = [Suppressed.from_data(s) for s in stored["suppressed"]]
            clusters = tuple(ChunkCluster.from_data(c) for c in stored["clusters"])
        except (KeyError, TypeError, ValueError):
            return None
        files = frozenset(display_path(p) for p in chunk)
        return KnownChunk(ChunkReport(findings, suppressed, True, files), clusters)

    def unchanged_clusters(self, index: int, chunk: Sequence[Path]) -> dict[str, KnownCluster]:
        """The clusters of the remembered ``index``-th chunk whose file is in ``chunk`` with the bytes it had, by
        file (as findings name it), when their validation may stand for ``chunk``'s: the entry was made with the
        same shared inputs and every finding it holds is on a cluster file of it.  (A finding on fleet.yaml or a
        policy pack cannot be told apart by the cluster that ran into it, so such an entry gives none.)"""
        stored = usercache.load(self._slot(index))
        if not isinstance(stored, dict) or stored.get("shared") != self._shared_key:
            return {}
        try:
            files = {str(name): str(sha) for name, sha in stored["files"].items()}
            findings = [Finding.from_data(f) for f in stored["findings"]]
            suppressed = [Suppressed.from_data(s) for s in stored["suppressed"]]
            clusters = [ChunkCluster.from_data(c) for c in stored["clusters"]]
        except (AttributeError, KeyError, TypeError, ValueError):
            return {}
        if any(f.file not in files for f in (*findings, *(s.finding for s in suppressed))):
            return {}
        now = {display_path(p): self._inputs.clusters.get(cluster_input(p)) for p in chunk}
        return {c.source_file: KnownCluster(c, tuple(f for f in findings if f.file == c.source_file),
                                            tuple(s for s in suppressed if s.finding.file == c.source_file))
                for c in clusters if c.source_file in files and now.get(c.source_file) == files[c.source_file]}

    def put(self, index: int, chunk: Sequence[Path], report: ChunkReport, clusters: Sequence[ChunkCluster]) -> None:
        """Remember the validation of ``chunk`` (usable, without errors), unless its inputs changed since the run
        hashed them."""
        key = self._key(chunk)
        errors = any(f.severity.rank >= Severity.ERROR.rank for f in report.findings)
        if key is None or not report.usable or errors or not self._unchanged(chunk):
            return
        usercache.store(self._slot(index), {
            "key": key,
            "shared": self._shared_key,
            "files": {display_path(p): self._inputs.clusters[cluster_input(p)] for p in chunk},
            "findings": [f.data() for f in report.findings],
            "suppressed": [s.data() for s in report.suppressed],
            "clusters": [c.data() for c in clusters],
        })

    def _unchanged(self, chunk: Sequence[Path]) -> bool:
        """True when the shared inputs and the files of ``chunk`` are as they were when the run hashed them."""
        return self._inputs.unchanged([*self._inputs.shared, *(cluster_input(p) for p in chunk)])


def _listing(folder: Path | None) -> list[str]:
    """The names in ``folder`` (policy pack references are checked against them, folders included)."""
    if folder is None:
        return []
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return ["\0unlistable"]
