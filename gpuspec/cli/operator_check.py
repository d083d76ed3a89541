"""The round trip `gpuspec import` and `gpuspec audit --clusterpolicies` run: what the spec makes the operator run
against the exported ClusterPolicy, NVIDIADrivers and Helm values (:mod:`gpuspec.audit.roundtrip`), with the chart's
objects from gpuspec's chart data or from ``helm template`` of a real chart (``--chart``)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
import yaml

from gpuspec.audit.operator_render import (
    OperatorObjects,
    from_chart_data,
    from_templated,
    rendered_values,
    running_objects,
)
from gpuspec.audit.roundtrip import Carried, carriable, round_trip
from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet

CHART_HELP = ("A GPU Operator chart (folder or .tgz) of the pinned release: its ClusterPolicy and NVIDIADrivers for "
              "the spec's values, by `helm template`, are compared with the cluster's [default: gpuspec's chart data "
              "of the release].")


def _templated(fleet: Fleet, cluster: Cluster, chart: Path) -> list[dict[str, Any]]:
    """The documents ``helm template`` of ``chart`` prints for the Helm values the spec renders for ``cluster``."""
    from gpuspec.verify.helm import helm_template

    values, _ = rendered_values(fleet, cluster)
    with tempfile.TemporaryDirectory(prefix="gpuspec-roundtrip-") as scratch:
        values_file = Path(scratch) / "values.yaml"
        values_file.write_text(yaml.safe_dump(values, sort_keys=True), encoding="utf-8")
        result = helm_template(chart, [values_file], kube_version=cluster.kubernetes.version,
                               namespace=cluster.operator.namespace, include_crds=False, cache_dir=None)
    if not result.ok:
        raise GpuspecError(f"{chart}: {result.error}")
    return [m.obj for m in result.manifests]


def _rendered(fleet: Fleet, cluster: Cluster, chart: Path | None, note: bool = True) -> OperatorObjects | None:
    """What the spec makes the operator run; None (with a note, unless not ``note``) without chart data for the
    release or a chart."""
    if chart is not None:
        return from_templated(fleet, cluster, _templated(fleet, cluster, chart), str(chart))
    try:
        return from_chart_data(fleet, cluster)
    except GpuspecError as exc:
        if not note:
            return None
        click.echo(f"gpuspec: note: {exc.message}; the operator's settings were not compared"
                   + (f" ({exc.hint})" if exc.hint else ""), err=True)
        return None


def operator_findings(fleet: Fleet, cluster: Cluster, objects: Sequence[Mapping[str, Any]],
                      helm_values: Mapping[str, Any] | None, chart: Path | None) -> list[Finding]:
    """GS785/GS786 of ``cluster``'s spec against the exported operator ``objects`` (and Helm values).

    Without ``chart`` and without chart data for the pinned release the comparison is skipped with a note on
    standard error (the rest of the command goes on).
    """
    if not any(o.get("kind") == "ClusterPolicy" for o in objects):
        return []
    rendered = _rendered(fleet, cluster, chart)
    if rendered is None:
        return []
    return round_trip(fleet, cluster, rendered, running_objects(objects, helm_values))


def carried_settings(fleet: Fleet, cluster: Cluster, objects: Sequence[Mapping[str, Any]],
                     chart: Path | None) -> list[Carried]:
    """The running ClusterPolicy settings of ``objects`` only a cluster ``overrides`` entry keeps (for import)."""
    if not any(o.get("kind") == "ClusterPolicy" for o in objects):
        return []
    rendered = _rendered(fleet, cluster, chart, note=False)
    return [] if rendered is None else carriable(fleet, cluster, rendered, running_objects(objects))
