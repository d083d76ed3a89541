"""Build the typed Fleet of a git revision from blob bytes (no checkout).

This mirrors :func:`gpuspec.loader.fleetload.load_fleet`: the same YAML reader
(libyaml compose + :func:`gpuspec.loader.yamlread.node_to_data`), the same
pydantic models and the same schema findings, only the bytes come from git.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from gpuspec.catalogue.entry import Entry
from gpuspec.catalogue.validate import BAD_VALUE, FILE_UNUSABLE
from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding
from gpuspec.history.gitread import TreeEntry, list_tree, read_blobs, resolve_commit
from gpuspec.loader.files import CLUSTERS_DIR, FLEET_FILE, YAML_SUFFIXES
from gpuspec.loader.schema_errors import schema_findings
from gpuspec.loader.yamlread import MAX_FILE_BYTES, YamlProblem, compose, decode_utf8, node_to_data
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.settings import FleetSettings
from gpuspec.redaction import one_line


@dataclass
class RevisionFleet:
    """The fleet of one revision: the typed Fleet (None when unusable) and the problems that made it so."""

    rev: str
    commit: str
    fleet: Fleet | None
    findings: list[Finding] = field(default_factory=list)

    def require(self) -> Fleet:
        """The fleet, or a GpuspecError that names the first problems when the fleet at this revision is unusable."""
        if self.fleet is not None:
            return self.fleet
        lines = [describe_finding(f) for f in self.findings[:5]]
        more = len(self.findings) - len(lines)
        if more > 0:
            lines.append(f"... and {more} more")
        raise GpuspecError(
            f"the fleet at base revision {self.rev} ({self.commit[:12]}) is unusable:\n  " + "\n  ".join(lines),
            hint="gpuspec can only compare with a base whose fleet loads; choose another --base "
            "(e.g. the last commit where `gpuspec validate` passed)",
        )


def describe_finding(finding: Finding) -> str:
    """One line naming where a problem is and what it is (for error messages)."""
    where = finding.file or "?"
    if finding.line:
        where += f":{finding.line}:{finding.column or 1}"
    elif finding.path:
        where += " at " + ".".join(str(p) for p in finding.path)
    return one_line(f"{where}: {finding.rule_id} {finding.message}")


def parse_document(data: bytes, display: str) -> Any:
    """Decode and parse one YAML document exactly as the fleet loader does; raise YamlProblem when unusable."""
    if len(data) > MAX_FILE_BYTES:
        raise YamlProblem(
            display, 1, 1, f"is {len(data)} bytes, larger than the {MAX_FILE_BYTES}-byte limit for a fleet file",
            FILE_UNUSABLE,
        )
    text = decode_utf8(data, display)
    return node_to_data(compose(text, display), display)


def blob_texts(repo_root: Path, rev: str, entries: Mapping[str, TreeEntry]) -> dict[str, str]:
    """The texts of ``entries`` (by name) at revision ``rev``, read as the base fleet is: a blob over the fleet-file
    limit is never requested (its size comes from ``ls-tree``) and one that is not UTF-8 is refused, each a
    GpuspecError (exit 2) naming ``rev:path``."""
    for entry in entries.values():
        if entry.size > MAX_FILE_BYTES:
            raise GpuspecError(f"{rev}:{entry.path}: {FILE_UNUSABLE.id} is {entry.size} bytes at revision {rev}, "
                               f"larger than the {MAX_FILE_BYTES}-byte limit for a fleet file")
    blobs = read_blobs(repo_root, [e.object_id for e in entries.values()])
    texts: dict[str, str] = {}
    for name, entry in sorted(entries.items()):
        try:
            texts[name] = decode_utf8(blobs[entry.object_id], f"{rev}:{entry.path}")
        except YamlProblem as problem:
            raise GpuspecError(str(problem)) from None
    return texts


def _fail(findings: list[Finding], entry: Entry, message: str, file: str, line: int = 1, column: int = 1) -> None:
    findings.append(entry.finding(message, file, (), line=line, column=column))


def _document(
    entry: TreeEntry, blobs: dict[str, bytes], display: str, findings: list[Finding]
) -> dict[str, Any] | None:
    if entry.is_symlink or entry.is_submodule:
        _fail(findings, FILE_UNUSABLE, "is a symbolic link or submodule in git; gpuspec reads only regular files",
              display)
        return None
    if entry.size > MAX_FILE_BYTES or entry.object_id not in blobs:
        _fail(findings, FILE_UNUSABLE, f"is {entry.size} bytes at the base revision, larger than the "
              f"{MAX_FILE_BYTES}-byte limit for a fleet file", display)
        return None
    try:
        data = parse_document(blobs[entry.object_id], display)
    except YamlProblem as problem:
        _fail(findings, problem.entry, problem.message, problem.file, problem.line, problem.column)
        return None
    if not isinstance(data, dict):
        _fail(findings, BAD_VALUE, "the document must be a mapping of keys to values", display)
        return None
    return data


def load_fleet_at(repo_root: Path, rev: str, fleet_rel: str, only: Collection[str] | None = None) -> RevisionFleet:
    """Read the fleet in ``fleet_rel`` (repository-relative) at git revision ``rev`` into a typed Fleet.

    A revision that names no commit, or that has no fleet.yaml in ``fleet_rel``, is a GpuspecError (exit 2);
    files that do not parse or match the schema make the result unusable and are listed in ``findings``.
    ``only``: read just the cluster files with these names (``x.yaml``): a partial fleet.
    """
    commit = resolve_commit(repo_root, rev)
    prefix = PurePosixPath(fleet_rel) if fleet_rel else PurePosixPath()
    entries = {e.path: e for e in list_tree(repo_root, commit, fleet_rel)}
    settings_key = (prefix / FLEET_FILE).as_posix()
    clusters_key = (prefix / CLUSTERS_DIR).as_posix()

    def display(path: str) -> str:
        return f"{rev}:{path}"

    if settings_key not in entries:
        raise GpuspecError(
            f"{settings_key} does not exist at revision {rev} ({commit[:12]})",
            hint="the fleet directory must exist at the base revision too; pass the right FLEET_DIR or --base",
        )
    cluster_entries = [
        e for path, e in entries.items()
        if PurePosixPath(path).parent.as_posix() == clusters_key
        and path.endswith(YAML_SUFFIXES) and not PurePosixPath(path).name.startswith(".")
        and (only is None or PurePosixPath(path).name in only)
    ]
    # Blobs over the size limit are never read (their size comes from ls-tree): _document reports them.
    blobs = read_blobs(repo_root, [e.object_id for e in (entries[settings_key], *cluster_entries)
                                   if e.size <= MAX_FILE_BYTES])

    findings: list[Finding] = []
    settings: FleetSettings | None = None
    settings_display = display(settings_key)
    data = _document(entries[settings_key], blobs, settings_display, findings)
    if data is not None:
        try:
            settings = FleetSettings.model_validate(data)
        except ValidationError as exc:
            findings.extend(schema_findings(exc, data, FleetSettings, settings_display))

    if not cluster_entries and only is None:
        _fail(findings, FILE_UNUSABLE, f"no cluster files in {clusters_key} at {rev}", settings_display)
    clusters: list[Cluster] = []
    for entry in sorted(cluster_entries, key=lambda e: e.path):
        shown = display(entry.path)
        doc = _document(entry, blobs, shown, findings)
        if doc is None:
            continue
        try:
            cluster = Cluster.model_validate(doc)
        except ValidationError as exc:
            findings.extend(schema_findings(exc, doc, Cluster, shown))
            continue
        cluster._source_file = shown
        clusters.append(cluster)

    if settings is None or findings:
        return RevisionFleet(rev, commit, None, findings)
    fleet = Fleet(settings=settings, clusters=clusters, settings_file=settings_display, root=f"{rev}:{fleet_rel}")
    return RevisionFleet(rev, commit, fleet, findings)
