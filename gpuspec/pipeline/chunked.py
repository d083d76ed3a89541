"""Validate a large fleet a chunk of clusters at a time, with the findings one whole-fleet run reports.

Every validate check looks at one cluster at a time, given fleet.yaml and the policy packs, so a chunk of
cluster files validated together with fleet.yaml gives exactly the findings of those files.  Findings on
other files (fleet.yaml, a policy pack) come from every chunk: the first chunk's are kept as they are, and a
later chunk adds one only when no kept finding has the same rule, file, path and message (the support-matrix
checks report a problem of fleet.yaml that several clusters run into once, too).

A chunk is a group of whole shards of the per-cluster caches (see :class:`gpuspec.usercache.ShardedMemo`), so
each shard is read and stored once per run and only one chunk's models, data and cache entries are held at
a time: memory is bounded by the chunk, not the fleet.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gpuspec.findings import Finding, Suppressed
from gpuspec.loader.files import FLEET_FILE, cluster_files, display_path
from gpuspec.pipeline.validate import ValidationResult, validate_fleet
from gpuspec.usercache import shard_of

_T = TypeVar("_T")

#: About how many clusters one chunk holds; a fleet up to this size is validated in one go.
CHUNK_CLUSTERS = 512


def cluster_chunks(paths: Sequence[Path], size: int = CHUNK_CLUSTERS) -> list[list[Path]]:
    """The cluster files ``paths`` in chunks of whole cache shards, each chunk the first shards (by number)
    that together hold at least ``size`` files (the last chunk may hold fewer)."""
    shards: dict[int, list[Path]] = {}
    for path in paths:
        shards.setdefault(shard_of(path.name.rsplit(".", 1)[0]), []).append(path)
    chunks: list[list[Path]] = []
    current: list[Path] = []
    for number in sorted(shards):
        current.extend(shards[number])
        if len(current) >= size:
            chunks.append(current)
            current = []
    if current:
        chunks.append(current)
    return chunks


@dataclass
class ChunkReport:
    """One chunk's findings and suppressed findings as reports show them (see ``prepare`` in
    :func:`validate_in_chunks`), and whether its input was usable."""

    findings: list[Finding]
    suppressed: list[Suppressed]
    usable: bool
    loaded: bool
    #: The chunk's cluster files, as findings name them.
    files: frozenset[str]


#: Turns one chunk's validation into what a report shows (located, redacted findings and suppressed ones).
Prepare = Callable[[ValidationResult], tuple[list[Finding], list[Suppressed]]]


@dataclass
class MergedReport:
    """The findings of every chunk, as one whole-fleet run reports them."""

    findings: list[Finding]
    suppressed: list[Suppressed]
    usable: bool


def validate_in_chunks(fleet_dir: Path, policies_dir: Path | None, today: dt.date | None, prepare: Prepare,
                       size: int | None = None) -> MergedReport | None:
    """The findings of :func:`gpuspec.pipeline.validate.validate_fleet` for ``fleet_dir``, validated a chunk of
    about ``size`` (default :data:`CHUNK_CLUSTERS`) clusters at a time; ``prepare`` turns each chunk's into
    report form before the next is read.  None when the fleet is small enough for one go, or its fleet.yaml
    or policy packs are unusable (the caller validates the whole fleet then: those findings are reported in
    the order of one run)."""
    if not (fleet_dir / FLEET_FILE).is_file():
        return None
    chunks = cluster_chunks(cluster_files(fleet_dir), size or CHUNK_CLUSTERS)
    if len(chunks) < 2:
        return None
    settings = validate_fleet(fleet_dir, policies_dir, (), today, cached=True)
    if not settings.usable:
        return None
    return merge_chunks(_chunk_reports(fleet_dir, policies_dir, today, prepare, chunks))


def _chunk_reports(fleet_dir: Path, policies_dir: Path | None, today: dt.date | None, prepare: Prepare,
                   chunks: list[list[Path]]) -> Iterator[ChunkReport]:
    for chunk in chunks:
        result = validate_fleet(fleet_dir, policies_dir, {p.name for p in chunk}, today, cached=True)
        findings, suppressed = prepare(result)
        usable, loaded = result.usable, result.load.usable
        del result  # before the next chunk is read: one chunk's models at a time
        yield ChunkReport(findings, suppressed, usable, loaded, frozenset(display_path(p) for p in chunk))


def merge_chunks(reports: Iterator[ChunkReport]) -> MergedReport:
    """One report of the chunks' (see the module's docstring), in report order (by file, position, rule and
    message, as :func:`gpuspec.loader.positions.locate_findings` sorts one run's)."""
    findings: list[Finding] = []
    suppressed: list[Suppressed] = []
    unusable: list[Finding] = []
    seen: set[tuple[object, ...]] = set()
    usable = True
    first = True
    for report in reports:
        usable = usable and report.usable
        if not report.loaded:
            unusable.extend(report.findings)
        elif usable:
            findings.extend(_new(report.findings, report.files, seen, first, lambda f: f))
            suppressed.extend(_new(report.suppressed, report.files, seen, first, lambda s: s.finding))
        first = False
    if unusable or not usable:
        unusable.sort(key=Finding.sort_key)
        return MergedReport(unusable, [], False)
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=lambda s: s.finding.sort_key())
    return MergedReport(findings, suppressed, True)


def _new(items: list[_T], own: frozenset[str], seen: set[tuple[object, ...]], first: bool,
            finding: Callable[[_T], Finding]) -> Iterator[_T]:
    """``items`` but those on files of no cluster of the chunk that an earlier chunk reported already."""
    for item in items:
        f = finding(item)
        if f.file in own:
            yield item
            continue
        key = (type(item), f.rule_id, f.file, f.path, f.message)
        if first or key not in seen:
            seen.add(key)
            yield item
