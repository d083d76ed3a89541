"""The render pipeline as one call: validate, compile, serialize (the CLI and tests share it).

Compiling and serializing are pure per cluster, so large fleets are split over
worker processes (``fork``; one per CPU, at most :data:`MAX_JOBS`).  The result
does not depend on the number of workers.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding, Severity
from gpuspec.handover.documents import (
    DOCUMENT_SHARDS,
    INDEX_FILE,
    DocumentCache,
    HandoverSettings,
    cached_cluster_document,
    document_path,
    index_document,
    pack_summary,
    rule_settings,
)
from gpuspec.loader.files import YAML_SUFFIXES
from gpuspec.model.fleet import Fleet
from gpuspec.pipeline.validate import ValidationResult, validate_fleet
from gpuspec.render.bootstrap import BootstrapEntry, bootstrap_files, fleet_entries
from gpuspec.render.compile import compile_cluster
from gpuspec.render.context import cluster_context
from gpuspec.render.filestate import FileState
from gpuspec.render.filetree import RenderPlan, YamlFile
from gpuspec.render.inputs import InputDigests, read_input_digests
from gpuspec.render.operand_images import cluster_images
from gpuspec.render.serialize import serialize
from gpuspec.render.spool import OutputFiles, Spool
from gpuspec.render.stamp import Part, RenderStamp, cluster_key
from gpuspec.render.workers import can_fork, fork_pool
from gpuspec.templating.environment import override_files
from gpuspec.usercache import by_shard

#: Fleets smaller than this render in-process (starting workers costs more than it saves).
PARALLEL_THRESHOLD = 200
MAX_JOBS = 8


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: rendering builds many short-lived, acyclic objects."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class Rendered:
    """The serialized output: file bytes by output path, and per cluster the images it pulls.

    Clusters whose output the render stamp proved current (``reused``) are not rendered: their files are
    listed in ``kept`` instead of ``files``, and they have no ``images``.
    """

    #: Held in memory, or (rendered by workers) read back from their spools on each access.
    files: OutputFiles = field(default_factory=OutputFiles)
    images: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Per cluster, what the fleet index of the handover documents shows (packed, see
    #: :func:`gpuspec.handover.documents.pack_summary`).
    summaries: dict[str, bytes] = field(default_factory=dict)
    #: Per rendered cluster, the output paths of its files (handover document included).
    paths: dict[str, list[str]] = field(default_factory=dict)
    #: Per cluster, the key of its output (see :func:`cluster_keys`); set when ``prepare`` rendered.
    keys: dict[str, str] = field(default_factory=dict)
    #: The clusters not rendered because their stamped output is current.
    reused: dict[str, Part] = field(default_factory=dict)
    #: Each distinct mapping of images in ``images``, by its items (shared by the clusters that pull the same).
    _image_sets: dict[tuple[tuple[str, str], ...], dict[str, str]] = field(default_factory=dict, repr=False,
                                                                          compare=False)

    @property
    def clusters(self) -> list[str]:
        """Names of the rendered clusters (and of those reused), sorted."""
        return sorted({*self.images, *self.reused})

    @property
    def kept(self) -> dict[str, FileState]:
        """The output files of the reused clusters (current on disk, not in ``files``) with their stamped state."""
        return {rel: state for part in self.reused.values() for rel, state in zip(part.paths, part.states, strict=True)}

    def parts(self) -> dict[str, Part]:
        """Every cluster's stamp part: the reused ones and those rendered now."""
        out = dict(self.reused)
        for name, paths in self.paths.items():
            if name in self.keys and name in self.summaries:
                out[name] = Part(self.keys[name], tuple(paths), self.summaries[name])
        return out

    def absorb(self, other: Rendered) -> None:
        """Add another part of the output, whose spooled files name spools of its own (see
        :meth:`gpuspec.render.spool.OutputFiles.absorb`), with its reused clusters and keys."""
        self.files.absorb(other.files)
        self._add_clusters(other)
        self.reused.update(other.reused)
        self.keys.update(other.keys)

    def merge(self, other: Rendered) -> None:
        """Add another part of the output (its spooled files name the same spools as this one's)."""
        self.files.update_from(other.files)
        self._add_clusters(other)

    def _add_clusters(self, other: Rendered) -> None:
        """Add what ``other`` says of the clusters it rendered: images, index lines, paths and digests.  Clusters
        that pull the same images share one mapping of them (most of a fleet's clusters do)."""
        for name, images in other.images.items():
            self.images[name] = self._image_sets.setdefault(tuple(images.items()), images)
        self.summaries.update(other.summaries)
        self.paths.update(other.paths)


@dataclass
class Prepared:
    """The validation result and, when the fleet is valid, its rendered output."""

    validation: ValidationResult
    rendered: Rendered | None

    @property
    def errors(self) -> list[Finding]:
        """Findings at error severity (any one blocks rendering)."""
        return [f for f in self.validation.findings if f.severity.rank >= Severity.ERROR.rank]


def expected_bytes(plan: RenderPlan) -> dict[str, bytes]:
    """Every output file's exact bytes, keyed by path relative to the output folder."""
    with _no_cyclic_gc():
        return {path: serialize(spec) for path, (_, spec) in plan.files().items()}


#: Per cluster name, the records of the findings policy exceptions accept there.
AcceptedRecords = Mapping[str, Sequence[Mapping[str, Any]]]


#: How rendering uses the cache of handover documents: not at all, to read them, or to read and store them.
DocumentUse = Literal["off", "read", "store"]


def _render_clusters(fleet: Fleet, inputs: InputDigests, names: Iterable[str],
                     handover: HandoverSettings | None = None, documents: DocumentUse = "off",
                     accepted: AcceptedRecords | None = None, spool: tuple[int, Spool] | None = None,
                     pages_only: bool = False) -> Rendered:
    """Render the clusters ``names``; with ``spool`` (its number and the spool) their bytes go there, not into
    memory, one cluster at a time.  Cached handover documents are read (and stored) one shard at a time.
    ``pages_only``: each cluster's handover document alone (its other files are compiled, not serialized)."""
    out = Rendered()
    groups: list[tuple[int | None, list[str]]] = [(None, list(names))]
    if handover is not None and documents != "off":
        groups = list(_shards(names))
    with _no_cyclic_gc():
        for shard, group in groups:
            cache = DocumentCache(handover, shard) if handover is not None and shard is not None else None
            _render_group(fleet, inputs, group, handover, cache, documents == "store", accepted, spool, out,
                          pages_only)
            if cache is not None and documents == "store":
                cache.save()
    return out


def _shards(names: Iterable[str]) -> list[tuple[int, list[str]]]:
    """``names`` grouped by the shard of the document cache that holds their documents, by shard number."""
    return list(by_shard(names, str, DOCUMENT_SHARDS).items())


def _render_group(fleet: Fleet, inputs: InputDigests, names: Iterable[str], handover: HandoverSettings | None,
                  documents: DocumentCache | None, store: bool, accepted: AcceptedRecords | None,
                  spool: tuple[int, Spool] | None, out: Rendered, pages_only: bool = False) -> None:
    """Render ``names`` into ``out``: handover documents from ``documents`` when it has them (and with ``store``
    each put into it); ``pages_only``: no other file."""
    for name in names:
        cluster = fleet.cluster(name)
        assert cluster is not None
        plan = compile_cluster(fleet, cluster, inputs.for_cluster(cluster.source_file),
                               (accepted or {}).get(name, ()))
        if not pages_only:
            for path, spec in plan.files.items():
                out.files[path] = serialize(spec)
        out.images[plan.name] = plan.images
        out.paths[plan.name] = [] if pages_only else list(plan.files)
        if handover is not None:
            document, brief = cached_cluster_document(
                lambda cluster=cluster: cluster_context(fleet, cluster), plan, handover,  # type: ignore[misc]
                documents)
            out.files[document_path(plan.name)] = document
            out.paths[plan.name].append(document_path(plan.name))
            digest = handover.digest(plan.digest)
            out.summaries[plan.name] = pack_summary(brief)
            if documents is not None and store:
                documents.put(plan.name, digest, document, brief)
        if spool is not None:
            _spill(out.files, out.paths[plan.name], *spool)


def _spill(files: OutputFiles, paths: Iterable[str], number: int, spool: Spool) -> None:
    """Move the held bytes of ``paths`` (one cluster's files) into ``spool``, leaving their locations."""
    for path in paths:
        offset, length = spool.append(files[path])
        files.locate(path, number, offset, length)


#: What forked workers render from (set in the parent just before the pool starts), and the spools they write.
_WORK: tuple[Fleet, InputDigests, HandoverSettings | None, DocumentUse, AcceptedRecords | None,
             Sequence[Spool], bool] | None = None


def _worker(task: tuple[int, list[str]]) -> Rendered | str:
    assert _WORK is not None
    number, names = task
    try:
        fleet, inputs, handover, documents, accepted, spools, pages_only = _WORK
        return _render_clusters(fleet, inputs, names, handover, documents, accepted, (number, spools[number]),
                                pages_only)
    except GpuspecError as exc:
        return str(exc)


def jobs_for(clusters: int) -> int:
    """How many worker processes to use for a fleet of ``clusters`` (1 = in-process)."""
    if clusters < PARALLEL_THRESHOLD or not can_fork():
        return 1
    return max(1, min(MAX_JOBS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def render_fleet(fleet: Fleet, inputs: InputDigests, only: Iterable[str] | None = None, jobs: int = 0,
                 handover: HandoverSettings | None = None, accepted: AcceptedRecords | None = None,
                 reused: Mapping[str, Part] | None = None, spool_near: Path | None = None,
                 pages_only: bool = False) -> Rendered:
    """Compile and serialize every cluster (or those in ``only``); ``jobs`` 0 = choose automatically.

    With ``handover`` each cluster also gets its handover document, and the whole fleet (``only`` None) the
    fleet index of them.  ``accepted``: per cluster, the findings its policy exceptions accept (recorded in
    its ``deviations.yaml`` and handover document).  ``reused``: clusters whose stamped output is current
    (see :meth:`gpuspec.render.stamp.RenderStamp.reusable`); they are not rendered, their index line is the
    stamped one.  Rendered by workers, the output's bytes wait in unnamed spool files (in ``spool_near``, a
    folder on the output's disk, when it can hold them) rather than in memory.  ``pages_only``: the handover
    documents and their index alone (see :func:`render_clusters`).
    """
    reused = dict(reused or {})
    # Storing a shard keeps only the documents rendered now: with clusters reused, the cache is left alone.
    documents: DocumentUse = "off" if handover is None or reused else "store" if only is None else "read"
    only = list(only) if only is not None else None
    wanted = [c.name for c in fleet.clusters if c.name not in reused and (only is None or c.name in only)]
    out = render_clusters(fleet, inputs, wanted if reused else only, jobs, handover, documents, accepted, spool_near,
                          pages_only=pages_only)
    out.reused = reused
    for name, part in reused.items():
        out.summaries[name] = part.brief
    if only is None:
        add_fleet_files(out, fleet, handover, pages_only=pages_only)
    return out


def add_fleet_files(out: Rendered, fleet: Fleet, handover: HandoverSettings | None,
                    entries: Iterable[BootstrapEntry] | None = None, *, pages_only: bool = False) -> None:
    """Add the fleet-wide files to ``out``, which holds every cluster's part (rendered or reused): the bootstrap
    objects and (with ``handover``) the fleet index of the handover documents.  ``entries``: what the bootstrap
    objects take from each cluster, in the fleet's order, when ``fleet`` does not hold its clusters;
    ``pages_only``: the index alone."""
    if not pages_only:
        entries = list(entries) if entries is not None else fleet_entries(fleet)
        for path, doc in bootstrap_files(fleet, entries).items():
            out.files[path] = serialize(YamlFile((doc,)))
    if handover is not None:
        out.files[INDEX_FILE] = index_document(fleet, [out.summaries[name] for name in sorted(out.summaries)],
                                               handover)


def render_clusters(fleet: Fleet, inputs: InputDigests, only: Iterable[str] | None, jobs: int,
                    handover: HandoverSettings | None, documents: DocumentUse,
                    accepted: AcceptedRecords | None = None, spool_near: Path | None = None,
                    *, spool: bool = False, pages_only: bool = False) -> Rendered:
    """The files of the clusters of ``fleet`` (those in ``only``), without the fleet-wide ones, rendered by
    ``jobs`` workers (0: as many as :func:`jobs_for` says) whose bytes wait in spools (see
    :func:`render_fleet`); with ``spool`` also those rendered in this process.  ``pages_only``: only each
    cluster's handover document is written out (a page needs the compiled objects, not their YAML)."""
    wanted = set(only) if only is not None else None
    names = sorted(c.name for c in fleet.clusters if wanted is None or c.name in wanted)
    jobs = jobs or jobs_for(len(names))
    if jobs <= 1 or len(names) < 2:
        if not spool:
            return _render_clusters(fleet, inputs, names, handover, documents, accepted, pages_only=pages_only)
        alone = Spool(spool_near)
        out = _render_clusters(fleet, inputs, names, handover, documents, accepted, (0, alone), pages_only)
        out.files.attach([alone])
        return out
    # Warm the support-matrix caches and compile the handover template once, before forking.
    _render_clusters(fleet, inputs, names[:1], handover, "off", accepted, pages_only=pages_only)
    global _WORK
    # One spool per worker, opened before the fork so that this process reads what the workers write.
    spools = [Spool(spool_near) for _ in range(jobs)]
    _WORK = (fleet, inputs, handover, documents, accepted, spools, pages_only)
    # Whole shards of the document cache to each worker: each shard is read and stored by one process.
    chunks = list(enumerate(balanced([group for _, group in _shards(names)], jobs)))
    try:
        with fork_pool(jobs) as pool:
            parts = pool.map(_worker, chunks)
    finally:
        _WORK = None
    out = Rendered()
    out.files.attach(spools)
    for part in parts:
        if isinstance(part, str):
            raise GpuspecError(part)
        out.merge(part)
    return out


def balanced(groups: Sequence[list[str]], bins: int) -> list[list[str]]:
    """``groups`` (each kept whole) dealt into ``bins`` lists of names of about the same length: the largest
    group first, each to the list with the fewest names so far (the first such list on a tie)."""
    out: list[list[str]] = [[] for _ in range(bins)]
    for group in sorted(groups, key=len, reverse=True):
        min(out, key=len).extend(group)
    return out


def fleet_images(fleet: Fleet, names: Iterable[str]) -> dict[str, dict[str, str]]:
    """Per named cluster, the images it pulls (upstream → pulled reference), without compiling its files."""
    out: dict[str, dict[str, str]] = {}
    for name in names:
        cluster = fleet.cluster(name)
        assert cluster is not None
        out[name] = cluster_images(cluster_context(fleet, cluster))
    return out


def prepare(fleet_dir: Path, policies_dir: Path | None, only: Iterable[str] | None = None,
            jobs: int = 0, *, render: bool = True, today: dt.date | None = None,
            stamp: RenderStamp | None = None, spool_near: Path | None = None,
            inputs: InputDigests | None = None, pages_only: bool = False) -> Prepared:
    """Validate ``fleet_dir``; when usable and free of errors, render its output.

    ``stamp``: the render stamp of the output folder; clusters it proves current are not rendered again
    (``rendered.reused``, their files in ``rendered.kept``).

    ``spool_near``: a folder on the output's disk for the bytes workers render (see :func:`render_fleet`).
    ``inputs``: the input digests, when the caller read them before (default: the stamp's, else read now).

    ``render=False``: validate only, and fill ``rendered.images`` (no files) — enough for ``gpuspec images``;
    ``pages_only``: render the handover documents and their index alone (``gpuspec handover``).
    ``only`` with ``render=False`` also limits validation to those clusters' files (``<name>.yaml``/``.yml``).
    """
    wanted = sorted(set(only)) if only is not None else None
    files = None if render or wanted is None else {f"{n}{s}" for n in wanted for s in YAML_SUFFIXES}
    validation = validate_fleet(fleet_dir, policies_dir, files, today)
    fleet = validation.fleet
    if fleet is None or any(f.severity.rank >= Severity.ERROR.rank for f in validation.findings):
        return Prepared(validation, None)
    if not render:
        names = sorted(c.name for c in fleet.clusters if wanted is None or c.name in wanted)
        with _no_cyclic_gc():
            return Prepared(validation, Rendered(images=fleet_images(fleet, names)))
    handover = handover_settings(fleet_dir, policies_dir, fleet)
    accepted = {c.name: records for c in fleet.clusters if (records := validation.accepted_records(fleet, c.name))}
    inputs = inputs or (stamp.inputs if stamp is not None else None) or read_input_digests(fleet_dir, policies_dir)
    keys = cluster_keys(fleet, inputs, handover, accepted)
    reused = stamp.reusable(keys) if stamp is not None and only is None else {}
    rendered = render_fleet(fleet, inputs, only, jobs, handover, accepted, reused, spool_near, pages_only)
    rendered.keys = keys
    return Prepared(validation, rendered)


def handover_settings(fleet_dir: Path, policies_dir: Path | None, fleet: Fleet) -> HandoverSettings:
    """How the handover documents of ``fleet`` (of fleet.yaml: it needs no cluster) are rendered."""
    return HandoverSettings(fleet_dir, override_files(fleet_dir), rule_settings(fleet, policies_dir),
                            fleet.settings.git.path.strip("/") or ".")


def cluster_keys(fleet: Fleet, inputs: InputDigests, handover: HandoverSettings,
                 accepted: AcceptedRecords) -> dict[str, str]:
    """Per cluster, the key of everything its output files are a function of: gpuspec's code (support matrix
    included), fleet.yaml, policies/ and the cluster's own file (its input digest), the template overrides
    and rule settings of the handover documents, the output root, and the findings its exceptions accept
    today.  Nothing else of the fleet goes into a cluster's files (the fleet-wide files are always rendered)."""
    return keys_of(((c.name, c.source_file, accepted_json(accepted.get(c.name, ()))) for c in fleet.clusters),
                   inputs, handover)


def accepted_json(records: Sequence[Mapping[str, Any]]) -> str:
    """The findings a cluster's policy exceptions accept, as its output's key takes them."""
    return json.dumps(list(records), sort_keys=True, default=str)


def keys_of(clusters: Iterable[tuple[str, str, str]], inputs: InputDigests,
            handover: HandoverSettings) -> dict[str, str]:
    """:func:`cluster_keys` of clusters given as (name, cluster file, :func:`accepted_json` of what their
    exceptions accept)."""
    rules = json.dumps(sorted((k, repr(v)) for k, v in handover.rules.items()))
    return {name: cluster_key(name, handover.digest(inputs.for_cluster(source_file)), handover.rendered_root, rules,
                              records)
            for name, source_file, records in clusters}
