"""What a cluster's spec makes the GPU Operator run: the Helm values gpuspec renders, and the ClusterPolicy and
NVIDIADrivers the chart of the pinned release writes from them (pure).

The chart's objects come from gpuspec's chart data (:mod:`gpuspec.matrix.chartspec`: the release's chart-intent data
over its values.yaml defaults), or from ``helm template`` of the real chart, which the command runs and hands in
(:func:`from_templated`).  The per-pool NVIDIADrivers are gpuspec's own overlay objects either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuspec.errors import GpuspecError
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import operator_version
from gpuspec.render.compile import compile_cluster
from gpuspec.render.filetree import YamlFile
from gpuspec.render.openshift import chart_objects

#: The key of the one ClusterPolicy in :attr:`OperatorObjects.specs` (the chart names it, the cluster may not).
CLUSTER_POLICY = ("ClusterPolicy", "")


@dataclass
class OperatorObjects:
    """The specs of the operator objects one side runs: (kind, name) -> spec, the ClusterPolicy under
    :data:`CLUSTER_POLICY`.  ``values`` are the Helm values they were written from (the exported ones if given)."""

    specs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    #: What wrote them, for messages: ``gpuspec's chart data of v24.9.2``, ``chart /path``, ``the cluster``.
    source: str = ""
    release: str = ""


def _part(obj: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` as a plain dict (empty when it is not a mapping)."""
    value = obj.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def rendered_values(fleet: Fleet, cluster: Cluster) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The Helm values gpuspec renders for ``cluster`` and its per-pool NVIDIADrivers (name -> spec)."""
    plan = compile_cluster(fleet, cluster, "")
    values: dict[str, Any] = {}
    drivers: dict[str, dict[str, Any]] = {}
    base = f"clusters/{cluster.name}/"
    for path, file in sorted(plan.files.items()):
        if not path.startswith(base) or not isinstance(file, YamlFile):
            continue
        rest = path[len(base):]
        if rest == "gpu-operator.values.yaml" and file.documents and isinstance(file.documents[0], dict):
            values = file.documents[0]
        elif rest.startswith("nvidiadriver-") and "/" not in rest:
            for doc in file.documents:
                if isinstance(doc, dict) and doc.get("kind") == "NVIDIADriver":
                    drivers[str(doc["metadata"]["name"])] = dict(doc.get("spec") or {})
    return values, drivers


def from_chart_data(fleet: Fleet, cluster: Cluster) -> OperatorObjects:
    """What the spec makes the operator run, with the chart's objects from gpuspec's chart data of the release.

    Raises GpuspecError when gpuspec has no chart data for the pinned release (``--chart`` gives the real chart).
    """
    release = operator_version(fleet, cluster) or ""
    values, drivers = rendered_values(fleet, cluster)
    try:
        written = chart_objects(values, release)
    except GpuspecError as exc:
        raise GpuspecError(f"cluster {cluster.name}: cannot compare the operator settings: {exc.message}",
                           hint="pass --chart with the GPU Operator chart of the release") from None
    out = OperatorObjects(values=values, source=f"gpuspec's chart data of {release}", release=release)
    if written["ClusterPolicy"].rendered:
        out.specs[CLUSTER_POLICY] = written["ClusterPolicy"].spec
    if written["NVIDIADriver"].rendered:
        out.specs[("NVIDIADriver", "default")] = written["NVIDIADriver"].spec
    for name, spec in drivers.items():
        out.specs[("NVIDIADriver", name)] = spec
    return out


def from_templated(fleet: Fleet, cluster: Cluster, templated: Iterable[Mapping[str, Any]],
                   label: str) -> OperatorObjects:
    """What the spec makes the operator run, with the chart's objects from ``helm template`` of a real chart
    (``templated``: its documents for :func:`rendered_values`' values; ``label`` names the chart)."""
    values, drivers = rendered_values(fleet, cluster)
    out = OperatorObjects(values=values, source=f"chart {label}", release=operator_version(fleet, cluster) or "")
    _add_specs(out, templated)
    for name, spec in drivers.items():
        out.specs[("NVIDIADriver", name)] = spec
    return out


def running_objects(objects: Iterable[Mapping[str, Any]], values: Mapping[str, Any] | None = None) -> OperatorObjects:
    """The specs of the exported ClusterPolicy (the first) and NVIDIADrivers, and the exported Helm values."""
    out = OperatorObjects(values=dict(values or {}), source="the cluster")
    _add_specs(out, objects)
    return out


def _add_specs(out: OperatorObjects, objects: Iterable[Mapping[str, Any]]) -> None:
    """Add the spec of the first ClusterPolicy and of every named NVIDIADriver among ``objects`` to ``out``."""
    for obj in objects:
        kind = obj.get("kind")
        meta, spec = _part(obj, "metadata"), _part(obj, "spec")
        if kind == "ClusterPolicy" and CLUSTER_POLICY not in out.specs:
            out.specs[CLUSTER_POLICY] = spec
        elif kind == "NVIDIADriver" and meta.get("name"):
            out.specs[("NVIDIADriver", str(meta["name"]))] = spec
