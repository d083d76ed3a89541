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
from gpuspec.usercache import by_shard

_T = TypeVar("_T")

#: About how many clusters one chunk holds; a fleet up to this size is validated in one go.
CHUNK_CLUSTERS = 512


def cluster_chunks(paths: Sequence[Path], size: int = CHUNK_CLUSTERS) -> list[list[Path]]:
    """The cluster files ``paths`` in chunks of whole cache shards, each chunk the first shards (by number)
    that together hold at least ``size`` files (the last chunk may hold fewer)."""
    chunks: list[list[Path]] = []
    current: list[Path] = []
    for members in by_shard(paths, lambda path: path.name.rsplit(".", 1)[0]).values():
        current.extend(members)
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
    #: False when a file of the chunk is unusable (then ``findings`` are those files' problems; the policy
    #: packs are usable, :func:`chunk_plan` checked them).
    usable: bool
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


def chunk_plan(fleet_dir: Path, policies_dir: Path | None, today: dt.date | None,
               size: int | None = None) -> tuple[ValidationResult, list[list[Path]]] | None:
    """The validation of fleet.yaml alone (no cluster) and the chunks of about ``size`` (default
    :data:`CHUNK_CLUSTERS`) cluster files, when the fleet is to be validated in chunks.  None when it is small
    enough for one go, or its fleet.yaml or policy packs are unusable (their findings are reported in the order
    of one whole-fleet run then)."""
    if not (fleet_dir / FLEET_FILE).is_file():
        return None
    chunks = cluster_chunks(cluster_files(fleet_dir), size or CHUNK_CLUSTERS)
    if len(chunks) < 2:
        return None
    settings = validate_fleet(fleet_dir, policies_dir, (), today, cached=True)
    if not settings.usable:
        return None
    return settings, chunks


def validate_chunk(fleet_dir: Path, policies_dir: Path | None, chunk: Sequence[Path],
                   today: dt.date | None) -> ValidationResult:
    """:func:`gpuspec.pipeline.validate.validate_fleet` of fleet.yaml and the cluster files ``chunk`` (whole
    cache shards, from :func:`chunk_plan`)."""
    return validate_fleet(fleet_dir, policies_dir, {p.name for p in chunk}, today, cached=True)


def chunk_report(result: ValidationResult, chunk: Sequence[Path], prepare: Prepare) -> ChunkReport:
    """A chunk's validation in report form (``prepare`` locates and redacts its findings)."""
    findings, suppressed = prepare(result)
    return ChunkReport(findings, suppressed, result.usable, frozenset(display_path(p) for p in chunk))


def validate_in_chunks(fleet_dir: Path, policies_dir: Path | None, today: dt.date | None, prepare: Prepare,
                       size: int | None = None) -> MergedReport | None:
    """The findings of :func:`gpuspec.pipeline.validate.validate_fleet` for ``fleet_dir``, validated a chunk of
    about ``size`` clusters at a time; ``prepare`` turns each chunk's into report form before the next is read.
    None when :func:`chunk_plan` says to validate the whole fleet in one go."""
    plan = chunk_plan(fleet_dir, policies_dir, today, size)
    if plan is None:
        return None
    merger = Merger()
    for chunk in plan[1]:
        # One chunk's models at a time: the report is taken before the next chunk is read.
        merger.add(chunk_report(validate_chunk(fleet_dir, policies_dir, chunk, today), chunk, prepare))
    return merger.merged()


class Merger:
    """Gathers the chunks' reports into one, as one whole-fleet run reports it (see the module's docstring):
    in report order (by file, position, rule and message, as :func:`gpuspec.loader.positions.locate_findings`
    sorts one run's), and when any chunk was unusable only the problems of the unusable files."""

    def __init__(self) -> None:
        """No chunk yet."""
        self._findings: list[Finding] = []
        self._suppressed: list[Suppressed] = []
        self._unusable: list[Finding] = []
        self._seen: set[tuple[object, ...]] = set()
        self._usable = True
        self._first = True

    @property
    def usable(self) -> bool:
        """False once a chunk's input was unusable."""
        return self._usable

    def add(self, report: ChunkReport) -> None:
        """Take in the next chunk's report."""
        self._usable = self._usable and report.usable
        if not report.usable:
            self._unusable.extend(report.findings)
        elif self._usable:
            self._findings.extend(_new(report.findings, report.files, self._seen, self._first, lambda f: f))
            self._suppressed.extend(_new(report.suppressed, report.files, self._seen, self._first,
                                         lambda s: s.finding))
        self._first = False

    def merged(self) -> MergedReport:
        """The report of every chunk taken in."""
        if not self._usable:
            return MergedReport(sorted(self._unusable, key=Finding.sort_key), [], False)
        return MergedReport(sorted(self._findings, key=Finding.sort_key),
                            sorted(self._suppressed, key=lambda s: s.finding.sort_key()), True)


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
