"""Container runtime plumbing of a cluster: GS221 (settings cannot be verified), GS222 (an override contradicts them).

The toolkit settings NVIDIA documents per distribution x runtime x release come from
``gpuspec/matrix/data/runtime.yaml`` through :mod:`gpuspec.matrix.runtime`; ``render`` puts the documented ones into
``toolkit.env``.  Part of the shared support-matrix evaluation of :mod:`gpuspec.rules.matrix`.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuspec.catalogue import matrix as cat
from gpuspec.matrix.runtime import (
    TOOLKIT_ENV,
    host_driver_install,
    nri_leaves_runtime_alone,
    nri_plugin,
    rendered_env,
    runtime_cell,
    runtime_variables,
)
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, ValueOverride
from gpuspec.model.resolve import effective_driver
from gpuspec.rules.constraints import Sink


def _override(cluster: Cluster, path: str) -> tuple[int, ValueOverride] | None:
    for index, override in enumerate(cluster.overrides):
        if override.path == path:
            return index, override
    return None


def runtime_settings(fleet: Fleet, cluster: Cluster, release_version: str, tag: str, res: Sink) -> None:
    """GS221 when NVIDIA documents no runtime settings for the cluster's cell and the spec supplies none, or when its
    pools mix a distribution's own driver installer with operator drivers; GS222 for every override entry of
    ``toolkit.env`` that gives a documented, required variable another value."""
    _host_driver_mix(fleet, cluster, release_version, tag, res)
    k8s = cluster.kubernetes
    dist, runtime = k8s.distribution.value, k8s.runtime.value
    cell = runtime_cell(release_version, dist, runtime, k8s.version)
    env_override = _override(cluster, TOOLKIT_ENV)
    if cell is None or cell.status == "unknown":
        if _sets_runtime_variables(env_override) or _nri_on(cluster, release_version):
            return
        why = cell.source if cell is not None else "NVIDIA's GPU Operator documentation has no cell for it"
        hint = "set the distribution's runtime settings as an override of toolkit.env, with its reason"
        if nri_leaves_runtime_alone(release_version, runtime, cluster.operator.operands.cdi):
            hint += f"; or turn the NRI plugin on (override {nri_plugin().chart_value}: true)"
        res.add(
            cat.CANNOT_VERIFY_RUNTIME,
            f"cannot verify the container toolkit's runtime settings for {dist} with {runtime} at GPU Operator {tag}: "
            f"{why}; gpuspec renders no toolkit.env, so the operator's default containerd/CRI-O paths apply",
            cluster.source_file, ("kubernetes", "distribution"), hint,
        )
        return
    if not cell.required or env_override is None or not isinstance(env_override[1].value, list):
        return
    index, override = env_override
    documented = {e.name: e.value for e in rendered_env(cell)}
    for j, entry in enumerate(override.value):
        if not isinstance(entry, Mapping):
            continue
        name, value = entry.get("name"), entry.get("value")
        if name not in documented or str(value) == documented[name]:
            continue
        res.add(
            cat.RUNTIME_SETTING_CONTRADICTED,
            f"toolkit.env {name}={value} contradicts NVIDIA's setting for {dist} with {runtime} at GPU Operator "
            f"{tag}: {name}={documented[name]} ({cell.source})",
            cluster.source_file, ("overrides", index, "value", j, "value"),
            f"drop {name} from the override: gpuspec renders {name}={documented[name]}",
        )


def _nri_on(cluster: Cluster, release_version: str) -> bool:
    found = _override(cluster, nri_plugin().chart_value)
    return (found is not None and found[1].value is True and nri_leaves_runtime_alone(
        release_version, cluster.kubernetes.runtime.value, cluster.operator.operands.cdi))


def _host_driver_mix(fleet: Fleet, cluster: Cluster, release_version: str, tag: str, res: Sink) -> None:
    """The driver installer's paths (e.g. GKE's /home/kubernetes/bin/nvidia) are cluster-wide chart values: NVIDIA
    documents them for clusters whose drivers all come from the installer, not for a mix with operator drivers."""
    dist = cluster.kubernetes.distribution.value
    entry = host_driver_install(release_version, dist)
    if entry is None:
        return
    sources = [effective_driver(fleet, cluster, pool).source for pool in cluster.pools]
    if DriverSource.HOST not in sources or all(s is DriverSource.HOST for s in sources):
        return
    index = sources.index(DriverSource.HOST)
    res.add(
        cat.CANNOT_VERIFY_RUNTIME,
        f"cannot verify the toolkit and driver paths for {dist} at GPU Operator {tag}: pool "
        f"{cluster.pools[index].name!r} takes its driver from the host (the {dist} driver installer) while other "
        f"pools get it from the operator; NVIDIA documents the installer's settings "
        f"({', '.join(sorted(entry.values))}) only for clusters whose drivers all come from it, gpuspec renders none",
        cluster.source_file, ("pools", index),
        "put the installer's pools and the operator-managed pools in separate clusters",
    )


def _sets_runtime_variables(found: tuple[int, ValueOverride] | None) -> bool:
    """True when an override of toolkit.env sets a variable that tells the toolkit where the runtime's config is."""
    if found is None or not isinstance(found[1].value, list):
        return False
    names = runtime_variables()
    return any(isinstance(e, Mapping) and isinstance(e.get("name"), str) and e["name"] in names
               for e in found[1].value)
