"""The render plan: what ``rendered/`` must contain, as plain data (no I/O, no YAML text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class YamlFile:
    """A YAML file of one or more documents (plain dicts/lists/scalars)."""

    documents: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class TextFile:
    """A plain text file of lines (no trailing newline in the items)."""

    lines: tuple[str, ...]


FileSpec = YamlFile | TextFile


@dataclass(slots=True)
class ClusterPlan:
    """Every output file of one cluster, keyed by POSIX path relative to the output folder."""

    name: str
    digest: str
    files: dict[str, FileSpec] = field(default_factory=dict)
    #: Image references the cluster pulls: upstream reference → reference the cluster uses (mirror-rewritten).
    images: dict[str, str] = field(default_factory=dict)
    #: Deliberate deviations (chart-value and NVIDIADriver overrides with their reasons), as plain data.
    deviations: list[dict[str, Any]] = field(default_factory=list)
    #: Findings policy exceptions accept in this cluster (out-of-matrix state with owner and expiry), as plain data.
    accepted: list[dict[str, Any]] = field(default_factory=list)
    #: Acceptance checks (one Job per pool: pool, job, namespace, resources, nodeSelector), as plain data.
    acceptance: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class RenderPlan:
    """The whole output: one plan per cluster, in cluster-name order, and the fleet-wide files (bootstrap)."""

    clusters: list[ClusterPlan]
    #: Files that depend on the whole fleet (output path → content), and the input digest they carry.
    shared: dict[str, FileSpec] = field(default_factory=dict)
    shared_digest: str = ""

    def files(self) -> dict[str, tuple[str, FileSpec]]:
        """Every output path → (input digest of the file, content)."""
        out: dict[str, tuple[str, FileSpec]] = {}
        for cluster in self.clusters:
            for path, spec in cluster.files.items():
                out[path] = (cluster.digest, spec)
        for path, spec in self.shared.items():
            out[path] = (self.shared_digest, spec)
        return out

    def cluster(self, name: str) -> ClusterPlan | None:
        """The plan of cluster ``name``, if any."""
        return next((c for c in self.clusters if c.name == name), None)  # tests and tools only, never per cluster
