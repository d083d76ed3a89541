"""Build the typed Fleet from a fleet directory, collecting every problem of every file."""

from __future__ import annotations

import gc
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuspec.catalogue.validate import BAD_VALUE, FILE_UNUSABLE
from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding
from gpuspec.loader.files import CLUSTERS_DIR, FLEET_FILE, YAML_SUFFIXES, cluster_files, display_path
from gpuspec.loader.parsecache import ModelCache, ParseCache
from gpuspec.loader.schema_errors import schema_findings
from gpuspec.loader.yamlread import YamlProblem, compose, node_to_data, read_text, read_yaml
from gpuspec.spec.models import Cluster, Fleet, FleetSettings

__all__ = [
    "CLUSTERS_DIR", "FLEET_FILE", "YAML_SUFFIXES", "LoadResult", "cluster_files", "display_path", "load_fleet",
]


@dataclass
class LoadResult:
    """What loading produced: the typed fleet (None when unusable) and the problems found on the way."""

    fleet: Fleet | None
    findings: list[Finding] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def usable(self) -> bool:
        """True when every file was readable and matched the schema."""
        return self.fleet is not None


def _problem(problem: YamlProblem) -> Finding:
    return problem.entry.finding(problem.message, problem.file, (), line=problem.line, column=problem.column)


def _read(path: Path, findings: list[Finding], cache: ParseCache | None = None,
          keys: dict[str, bytes] | None = None) -> tuple[str, Any] | None:
    display = display_path(path)
    try:
        if cache is None:
            data = read_yaml(path, display)
        else:
            text = read_text(path, display)
            key = cache.key(text)
            if keys is not None:
                keys[display] = key
            hit, data = cache.get(key)
            if not hit:
                data = node_to_data(compose(text, display), display)
                cache.put(key, data)
    except YamlProblem as problem:
        findings.append(_problem(problem))
        return None
    if not isinstance(data, dict):
        findings.append(
            BAD_VALUE.finding("the document must be a mapping of keys to values", display, (), line=1, column=1)
        )
        return None
    return display, data


def load_fleet(fleet_dir: Path, only: Collection[str] | None = None) -> LoadResult:
    """Read fleet.yaml and every cluster file below ``fleet_dir`` into a typed Fleet, or report why not.

    ``only``: read just the cluster files with these names (``x.yaml``) — a partial fleet for commands that
    need a few clusters; a name with no file is skipped.
    """
    # Loading builds hundreds of thousands of acyclic objects; the cyclic collector would only rescan them.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_fleet(fleet_dir, only)
    finally:
        if enabled:
            gc.enable()


def _load_fleet(fleet_dir: Path, only: Collection[str] | None) -> LoadResult:
    if not fleet_dir.exists():
        raise GpuspecError(f"fleet directory {display_path(fleet_dir)} does not exist",
                           hint="run gpuspec in a fleet repository or pass the fleet directory")
    if not fleet_dir.is_dir():
        raise GpuspecError(f"{display_path(fleet_dir)} is not a directory; expected a fleet directory")
    findings: list[Finding] = []
    raw: dict[str, Any] = {}

    settings: FleetSettings | None = None
    settings_path = fleet_dir / FLEET_FILE
    settings_display = display_path(settings_path)
    if not settings_path.exists():
        raise GpuspecError(f"{settings_display} not found", hint="a fleet directory holds fleet.yaml and clusters/")
    # A partial load (a few clusters) parses its files directly: opening the whole fleet's entries would
    # cost more time and memory than it saves.
    cache = ParseCache(fleet_dir) if only is None else None
    models = ModelCache(fleet_dir) if only is None else None
    keys: dict[str, bytes] = {}
    read = _read(settings_path, findings, cache, keys)
    if read:
        raw[read[0]] = read[1]
        try:
            settings = (models.validate(FleetSettings, read[1], keys.get(read[0])) if models is not None
                        else FleetSettings.model_validate(read[1]))
        except ValidationError as exc:
            findings.extend(schema_findings(exc, read[1], FleetSettings, read[0]))

    clusters: list[Cluster] = []
    paths = cluster_files(fleet_dir)
    if only is not None:
        paths = [p for p in paths if p.name in only]
    elif not paths:
        findings.append(FILE_UNUSABLE.finding(f"no cluster files in {display_path(fleet_dir / CLUSTERS_DIR)}",
                                              settings_display, (), line=1, column=1))
    ok = True
    for path in paths:
        read = _read(path, findings, cache, keys)
        if not read:
            ok = False
            continue
        display, data = read
        raw[display] = data
        try:
            cluster = (models.validate(Cluster, data, keys.get(display)) if models is not None
                       else Cluster.model_validate(data))
        except ValidationError as exc:
            ok = False
            findings.extend(schema_findings(exc, data, Cluster, display))
            continue
        cluster._source_file = display
        clusters.append(cluster)

    if cache is not None and models is not None:
        cache.save()
        models.save()
    if settings is None or not ok or findings:
        return LoadResult(None, findings, raw)
    # The parts are validated models already: no need to build and run the Fleet validator.
    fleet = Fleet.model_construct(settings=settings, clusters=clusters, settings_file=settings_display,
                                  root=str(fleet_dir))
    fleet._content_keys = keys
    return LoadResult(fleet, findings, raw)
