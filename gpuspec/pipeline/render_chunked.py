"""Validate and render a large fleet a chunk of clusters at a time, into the output one whole-fleet run gives.

A cluster's files are a function of fleet.yaml, the policy packs and its own file (see
:func:`gpuspec.pipeline.render.cluster_keys`), so each chunk of :mod:`gpuspec.pipeline.chunked` is validated
and, while no chunk had an error, rendered on its own, its bytes spooled to disk; then its models are let go.
What stays per cluster is what the fleet-wide files and the render stamp need: the output's index, the
handover index line, the key and what the bootstrap objects take from the cluster.  Those fleet-wide files are
rendered at the end from fleet.yaml and these parts.  Memory is bounded by the chunk, not the fleet.

A chunk whose validation :class:`gpuspec.pipeline.chunkmemo.ChunkMemo` remembers for the same inputs, and
every cluster of which the render stamp proves current, is neither validated nor rendered: its findings and
what the fleet-wide files take from its clusters come from the memo.  In a chunk whose files changed, the
clusters whose file did not (and whose output the stamp proves current) are taken from the memo alike, so a
re-render validates and renders the changed cluster files.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuspec.findings import Severity
from gpuspec.handover.documents import HandoverSettings
from gpuspec.loader.files import display_path
from gpuspec.loader.fleetload import LoadResult
from gpuspec.pipeline.chunked import (
    ChunkReport,
    MergedReport,
    Merger,
    Prepare,
    chunk_plan,
    chunk_report,
    validate_chunk,
)
from gpuspec.pipeline.chunkmemo import ChunkCluster, ChunkMemo, KnownChunk, KnownCluster
from gpuspec.pipeline.render import (
    Prepared,
    Rendered,
    accepted_json,
    add_fleet_files,
    handover_settings,
    jobs_for,
    keys_of,
    render_clusters,
)
from gpuspec.pipeline.validate import ValidationResult
from gpuspec.policy.acceptance import utc_today
from gpuspec.render.bootstrap import BootstrapEntry, bootstrap_entry
from gpuspec.render.inputs import InputDigests, read_input_digests
from gpuspec.render.stamp import Part, RenderStamp

#: About how many clusters one chunk of a render holds.  Fewer than a validation's chunk: a render's workers are
#: forked from the parent and so each counts the chunk's models as its own (128 keeps every process of a
#: 5,000-cluster render under 130 MiB, where 512 took 182 MiB; see docs/performance.md).
RENDER_CHUNK_CLUSTERS = 128


@dataclass
class ChunkedPrepared:
    """What :func:`prepare_in_chunks` made: the prepared render (validation findings located and redacted)
    and the merged report of the chunks' findings."""

    prepared: Prepared
    report: MergedReport


@dataclass
class _Fleetwide:
    """What the fleet-wide files take from every cluster rendered so far."""

    out: Rendered = field(default_factory=Rendered)
    #: Per cluster file (its place in the fleet), what the bootstrap objects take from its cluster.
    entries: dict[int, BootstrapEntry] = field(default_factory=dict)


def prepare_in_chunks(fleet_dir: Path, policies_dir: Path | None, prepare: Prepare, *, jobs: int = 0,
                      today: dt.date | None = None, stamp: RenderStamp | None = None,
                      spool_near: Path | None = None, size: int | None = None,
                      inputs: InputDigests | None = None, pages_only: bool = False) -> ChunkedPrepared | None:
    """:func:`gpuspec.pipeline.render.prepare` of the whole fleet (same findings, same output), a chunk of about
    ``size`` clusters at a time (see :func:`gpuspec.pipeline.chunked.chunk_plan`); ``prepare`` turns a chunk's
    validation into report form; ``inputs``: the input digests, when the caller read them before; ``pages_only``:
    the handover documents and their index alone (see :func:`gpuspec.pipeline.render.render_clusters`).  None
    when the fleet is to be prepared in one go."""
    plan = chunk_plan(fleet_dir, policies_dir, today, size or RENDER_CHUNK_CLUSTERS)
    if plan is None:
        return None
    settings, chunks = plan
    base = settings.fleet
    assert base is not None
    handover = handover_settings(fleet_dir, policies_dir, base)
    inputs = inputs or (stamp.inputs if stamp is not None else None) or read_input_digests(fleet_dir, policies_dir)
    # Each cluster file's place in the fleet (the chunks hold every one; the fleet's order is the sorted one).
    place = {display_path(path): index for index, path in enumerate(sorted(p for c in chunks for p in c))}
    # As many workers for every chunk as for the whole fleet (a small last chunk too).
    jobs = jobs or jobs_for(len(place))
    merger = Merger()
    fleetwide: _Fleetwide | None = _Fleetwide()
    memo = ChunkMemo(fleet_dir, policies_dir, today or utc_today(), inputs, prepare) if stamp is not None else None
    for index, chunk in enumerate(chunks):
        known = memo.get(index, chunk) if memo is not None and fleetwide is not None and merger.usable else None
        if known is not None and stamp is not None and fleetwide is not None \
                and _reuse_chunk(known, inputs, handover, stamp, place, fleetwide):
            merger.add(known.report)  # every cluster of the chunk is current: nothing to validate or render
            continue
        kept = _current_clusters(memo, index, chunk, inputs, handover, stamp) \
            if memo is not None and stamp is not None and fleetwide is not None and merger.usable else {}
        todo = [path for path in chunk if display_path(path) not in kept]
        result = validate_chunk(fleet_dir, policies_dir, todo, today)
        reported = _with_kept(chunk_report(result, todo, prepare), kept.values(), chunk)
        merger.add(reported)
        if fleetwide is not None and (not merger.usable or _has_errors(result)):
            fleetwide = None  # nothing is written: the remaining chunks are only validated
        if fleetwide is not None:
            clusters = _render_chunk(result, inputs, handover, stamp, jobs, spool_near, place, fleetwide,
                                     [known.cluster for known in kept.values()], pages_only)
            if memo is not None:
                memo.put(index, chunk, reported, clusters)
        del result  # before the next chunk is read: one chunk's models at a time
    report = merger.merged()
    rendered = None
    if fleetwide is not None and report.usable:
        rendered = fleetwide.out
        add_fleet_files(rendered, base, handover, [fleetwide.entries[i] for i in sorted(fleetwide.entries)],
                        pages_only=pages_only)
    validation = ValidationResult(LoadResult(base if report.usable else None), report.findings)
    return ChunkedPrepared(Prepared(validation, rendered), report)


def _has_errors(result: ValidationResult) -> bool:
    return any(f.severity.rank >= Severity.ERROR.rank for f in result.findings)


def _current_clusters(memo: ChunkMemo, index: int, chunk: Sequence[Path], inputs: InputDigests,
                      handover: HandoverSettings, stamp: RenderStamp) -> dict[str, KnownCluster]:
    """The clusters of ``chunk`` (by file) that need neither validating nor rendering: the memo holds their
    validation for their file as it is, and the stamp proves their output current."""
    known = memo.unchanged_clusters(index, chunk)
    if not known:
        return {}
    current = stamp.reusable(_keys([k.cluster for k in known.values()], inputs, handover))
    return {file: k for file, k in known.items() if k.cluster.name in current}


def _with_kept(reported: ChunkReport, kept: Iterable[KnownCluster], chunk: Sequence[Path]) -> ChunkReport:
    """The report of the whole ``chunk``: ``reported`` (the validation of its other files) and the remembered
    findings of the ``kept`` clusters (an unusable report stays those files' problems alone)."""
    files = frozenset(display_path(p) for p in chunk)
    if not reported.usable:
        return ChunkReport(reported.findings, reported.suppressed, False, files)
    kept = list(kept)
    return ChunkReport([*reported.findings, *(f for k in kept for f in k.findings)],
                       [*reported.suppressed, *(s for k in kept for s in k.suppressed)], True, files)


def _render_chunk(result: ValidationResult, inputs: InputDigests, handover: HandoverSettings, stamp: RenderStamp | None,
                  jobs: int, spool_near: Path | None, place: dict[str, int],
                  fleetwide: _Fleetwide, kept: Sequence[ChunkCluster] = (),
                  pages_only: bool = False) -> list[ChunkCluster]:
    """Render the clusters of one valid chunk that the stamp does not prove current, into ``fleetwide``; return
    what the render took from each cluster of the chunk (for :class:`ChunkMemo`), in the fleet's order.
    ``result`` is the validation of the chunk's files but those of the ``kept`` clusters (remembered, current)."""
    fleet = result.fleet
    assert fleet is not None
    accepted = {c.name: records for c in fleet.clusters if (records := result.accepted_records(fleet, c.name))}
    clusters = [ChunkCluster(c.name, c.source_file, accepted_json(accepted.get(c.name, ())), bootstrap_entry(fleet, c))
                for c in fleet.clusters]
    if kept:
        clusters = sorted([*clusters, *kept], key=lambda c: place[c.source_file])
    keys = _keys(clusters, inputs, handover)
    reused = stamp.reusable(keys) if stamp is not None else {}
    wanted = [name for name in keys if name not in reused]
    # A chunk holds whole shards of the document cache: each is stored with every document it should keep,
    # unless some of its clusters are reused (as for a whole fleet).
    part = render_clusters(fleet, inputs, wanted, jobs, handover, "off" if reused else "store", accepted,
                           spool_near, spool=True, pages_only=pages_only)
    _absorb(part, keys, reused, clusters, place, fleetwide)
    return clusters


def _reuse_chunk(known: KnownChunk, inputs: InputDigests, handover: HandoverSettings, stamp: RenderStamp,
                 place: dict[str, int], fleetwide: _Fleetwide) -> bool:
    """Take every cluster of a chunk whose validation is remembered from the stamp into ``fleetwide``; False
    (and nothing taken) when the stamp does not prove each of them current."""
    keys = _keys(known.clusters, inputs, handover)
    reused = stamp.reusable(keys)
    if len(reused) != len(keys):
        return False
    _absorb(Rendered(), keys, reused, known.clusters, place, fleetwide)
    return True


def _keys(clusters: Sequence[ChunkCluster], inputs: InputDigests, handover: HandoverSettings) -> dict[str, str]:
    return keys_of(((c.name, c.source_file, c.accepted) for c in clusters), inputs, handover)


def _absorb(part: Rendered, keys: dict[str, str], reused: dict[str, Part], clusters: Sequence[ChunkCluster],
            place: dict[str, int], fleetwide: _Fleetwide) -> None:
    """Add one chunk's rendered ``part`` and its ``reused`` clusters to ``fleetwide``."""
    part.keys = keys
    part.reused = reused
    for name, stamped in reused.items():
        part.summaries[name] = stamped.brief
    fleetwide.out.absorb(part)
    for cluster in clusters:
        fleetwide.entries[place[cluster.source_file]] = cluster.entry
