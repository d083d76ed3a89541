"""Deliberate deviations: chart values and NVIDIADriver fields set by hand, merged into the output (pure).

A cluster's ``overrides`` set Helm values of the pinned chart; a pool's ``driverOverrides`` set fields
of its NVIDIADriver ``spec``.  This module knows which paths gpuspec itself renders from a spec field
(those cannot be overridden: the field is the way), merges overrides into the rendered documents in
spec order, and builds the deviation records that ``rendered/clusters/<c>/deviations.yaml``,
``gpuspec deviations`` and the handover documents read.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.loader.files import repository_path
from gpuspec.matrix.chartvalues import ChartIndex, chart_index
from gpuspec.matrix.load import load_matrix
from gpuspec.matrix.query import parse_version
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.pool_specs import ValueOverride
from gpuspec.render.facts import NFD, ReleaseFacts

#: Where an override lands.
HELM_VALUES = "helm-values"
NVIDIADRIVER = "NVIDIADriver"

_IMAGE = "operator.version or operator.channel (gpuspec pins every image of the release; air-gapped: mirror)"

#: Helm values paths gpuspec renders from spec fields (a path, its parents and its children are managed).
MANAGED_VALUES: dict[str, str] = {
    "psa.enabled": "nothing: gpuspec always enables Pod Security labels on the operator namespace",
    "cdi.enabled": "operator.operands.cdi",
    "daemonsets.tolerations": "pools[].taints",
    "sandboxWorkloads.enabled": "operator.operands.sandboxWorkloads and pools[].devices.sandbox",
    "mig.strategy": "pools[].mig.strategy",
    "nfd.enabled": "operator.operands.nfd",
    f"{NFD}.image": _IMAGE,
    f"{NFD}.imagePullSecrets": "mirrors[].pullSecrets",
    f"{NFD}.worker.tolerations": "pools[].taints",
    "driver.enabled": "pools[].driver.source",
    "driver.version": "pools[].driver.version / branch (or the channel's driver)",
    "driver.usePrecompiled": "pools[].driver.source",
    "driver.kernelModuleType": "pools[].driver.kernelModuleType",
    "driver.useOpenKernelModules": "pools[].driver.kernelModuleType",
    "driver.nvidiaDriverCRD": "pools[].driver (pools with different drivers get one NVIDIADriver each)",
    "driver.upgradePolicy": "rollout (autoUpgrade, maxParallelUpgrades, maxUnavailable, drain, podDeletion)",
    "driver.rdma.enabled": "operator.operands.rdma and pools[].devices.rdma",
    "driver.repoConfig": "mirrors[].packageRepoConfigMap",
    "driver.certConfig": "mirrors[].caConfigMap",
    "dcgmExporter.serviceMonitor.enabled": "operator.operands.dcgmExporter.serviceMonitor",
    "migManager.config": "pools[].mig.layout / pools[].mig.custom",
    "devicePlugin.config": "pools[].sharing",
    "gds.enabled": "operator.operands.gds and pools[].devices.gds",
    "gdrcopy.enabled": "operator.operands.gdrcopy and pools[].devices.gdrcopy",
    "dcgmExporter.enabled": "operator.operands.dcgmExporter.enabled",
}

#: Lists gpuspec renders that an override may still set: the override's entries are merged into the rendered
#: list by this key (an entry of the same name replaces gpuspec's, new names are appended).  ``toolkit.env``
#: carries the runtime settings NVIDIA documents per distribution (data/runtime.yaml; GS222 judges an override
#: that contradicts a required one), ``migManager.env`` the MIG manager's (GKE's driver installer: WITH_REBOOT).
MERGED_BY_NAME: dict[str, str] = {"toolkit.env": "name", "migManager.env": "name"}

#: NVIDIADriver ``spec`` fields gpuspec renders from spec fields.
MANAGED_DRIVER_FIELDS: dict[str, str] = {
    "driverType": "nothing: gpuspec renders GPU drivers",
    "repository": _IMAGE,
    "image": _IMAGE,
    "version": "pools[].driver.version / branch",
    "usePrecompiled": "pools[].driver.source",
    "nodeSelector": "pools[].nodeSelector",
    "manager": _IMAGE,
    "default": "nothing: gpuspec's NVIDIADrivers are never the default",
    "kernelModuleType": "pools[].driver.kernelModuleType",
    "useOpenKernelModules": "pools[].driver.kernelModuleType",
    "upgradePolicy": "rollout",
    "imagePullSecrets": "mirrors[].pullSecrets",
    "repoConfig": "mirrors[].packageRepoConfigMap",
    "certConfig": "mirrors[].caConfigMap",
    "rdma": "operator.operands.rdma and pools[].devices.rdma",
    "gds": "operator.operands.gds and pools[].devices.gds",
    "gdrcopy": "operator.operands.gdrcopy and pools[].devices.gdrcopy",
    "tolerations": "pools[].taints",
}


def _overlaps(a: str, b: str) -> bool:
    """True when one dotted path equals the other or lies below it."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def managed_values_paths(facts: ReleaseFacts) -> dict[str, str]:
    """Every Helm values path gpuspec manages at this release → the spec field that sets it."""
    managed = dict(MANAGED_VALUES)
    for component, image in facts.images.items():
        if component == NFD:
            continue
        for key in ("repository", "image", "version"):
            managed.setdefault(f"{component}.{key}", _IMAGE)
        managed.setdefault(f"{component}.imagePullSecrets", "mirrors[].pullSecrets")
        if image.enabled_default is not None:
            managed.setdefault(f"{component}.enabled", "operator.operands (gpuspec turns operands on and off)")
    return managed


def leaf_paths(tree: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """Dotted paths of the non-map values of ``tree``."""
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from leaf_paths(value, path + ".")
        else:
            yield path


def managed_by(path: str, managed: Mapping[str, str], rendered: Mapping[str, Any] | None = None) -> str | None:
    """The spec field that sets ``path`` (or a path that overlaps it), or None when an override may set it.

    ``rendered``: the values gpuspec renders without overrides; any of their paths is managed too.
    """
    for known, spec_field in managed.items():
        if _overlaps(path, known):
            return f"{spec_field} (gpuspec renders {known})"
    for known in leaf_paths(rendered or {}):
        if path == known and known in MERGED_BY_NAME:
            continue
        if _overlaps(path, known):
            return f"the spec (gpuspec renders {known} for this cluster)"
    return None


# ----------------------------------------------------------------------------- NVIDIADriver fields


@dataclass(frozen=True, slots=True)
class DriverField:
    """One NVIDIADriver ``spec`` field as the support matrix records it."""

    name: str
    type: str
    default: str | None
    since: str


@functools.cache
def _driver_fields() -> tuple[DriverField, ...]:
    fields: list[DriverField] = []
    for entry in load_matrix().nvidiadriver.spec_fields:
        for name in entry.get("field", "").split("/"):
            fields.append(DriverField(name.strip(), entry.get("type", ""),
                                      entry.get("default") or entry.get("default_in_docs"),
                                      entry.get("since", "")))
    return tuple(fields)


def driver_fields(version: str) -> dict[str, DriverField]:
    """NVIDIADriver ``spec`` fields of release ``version`` (per the matrix), by name."""
    have = parse_version(version)
    out: dict[str, DriverField] = {}
    for f in _driver_fields():
        since = parse_version(f.since) if f.since else None
        if have is not None and since is not None and have >= since:
            out[f.name] = f
    return out


def driver_field_type(field: DriverField) -> str | None:
    """The value type a field takes (``boolean``, ``string``, ``list``, ``map``), or None when not plain."""
    text = field.type.strip()
    if text == "bool":
        return "boolean"
    if text.startswith(("string", "enum")):
        return "string"
    if text.startswith("list"):
        return "list"
    if text.startswith(("{", "map", "corev1.", "DriverManagerSpec", "DriverUpgradePolicySpec")) or "{" in text:
        return "map"
    return None


# ----------------------------------------------------------------------------- merging and records


def set_path(tree: dict[str, Any], path: str, value: Any) -> None:
    """Set ``tree[a][b][c] = value`` for ``path`` ``a.b.c``, replacing non-map intermediates with maps."""
    *parents, leaf = path.split(".")
    node = tree
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[leaf] = copy.deepcopy(value)


def get_path(tree: Mapping[str, Any], path: str) -> Any:
    """The value at dotted ``path`` of ``tree``, or None when a step is missing or not a map."""
    node: Any = tree
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def merge_by_key(rendered: list[Any], override: list[Any], key: str) -> list[Any]:
    """``rendered`` with each entry replaced by the override's entry of the same ``key``; new entries appended."""
    by_key = {e[key]: e for e in override if isinstance(e, Mapping) and key in e}
    replaced: set[Any] = set()
    merged: list[Any] = []
    for entry in rendered:
        name = entry.get(key) if isinstance(entry, Mapping) else None
        if name is not None and name in by_key:
            merged.append(copy.deepcopy(by_key[name]))
            replaced.add(name)
        else:
            merged.append(entry)
    merged.extend(copy.deepcopy(e) for e in override
                  if not (isinstance(e, Mapping) and key in e and e[key] in replaced))
    return merged


def apply_overrides(tree: dict[str, Any], overrides: list[ValueOverride]) -> dict[str, Any]:
    """``tree`` with every override set, in spec order (validation refuses repeated or overlapping paths).

    On a :data:`MERGED_BY_NAME` path that gpuspec renders a list for, the override is merged into that list.
    """
    for override in overrides:
        key = MERGED_BY_NAME.get(override.path)
        current = get_path(tree, override.path) if key else None
        if key and isinstance(current, list) and isinstance(override.value, list):
            set_path(tree, override.path, merge_by_key(current, override.value, key))
        else:
            set_path(tree, override.path, override.value)
    return tree


def chart_default(index: ChartIndex | None, path: str) -> Any:
    """The chart's default at ``path`` (None when unknown or unset)."""
    if index is None:
        return None
    info = index.lookup(path)
    return info.default if info.known else None


def _record(cluster: Cluster, target: str, pool: Pool | None, index: int, override: ValueOverride,
            default: Any, default_known: bool) -> dict[str, Any]:
    where = f"pools[{pool.name}].driverOverrides[{index}]" if pool else f"overrides[{index}]"
    return {
        "target": target,
        "pool": pool.name if pool else None,
        "path": override.path,
        "value": copy.deepcopy(override.value),
        "chartDefault": copy.deepcopy(default),
        "defaultKnown": default_known,
        "reason": override.reason,
        "owner": override.owner,
        "ticket": override.ticket,
        "source": {"file": repository_path(cluster.source_file), "path": f"clusters[{cluster.name}].{where}"},
    }


def deviation_records(cluster: Cluster, facts: ReleaseFacts, nvidiadriver_pools: set[str]) -> list[dict[str, Any]]:
    """Every deliberate deviation of ``cluster`` as plain data, cluster values first, then pools in order.

    ``nvidiadriver_pools``: pools that get an NVIDIADriver (their ``driverOverrides`` apply).
    """
    index = chart_index(facts.tag)
    records = [
        _record(cluster, HELM_VALUES, None, i, o, chart_default(index, o.path),
                index is not None and index.lookup(o.path).known)
        for i, o in enumerate(cluster.overrides)
    ]
    fields = driver_fields(facts.version) if any(p.driver_overrides for p in cluster.pools) else {}
    for pool in cluster.pools:
        if pool.name not in nvidiadriver_pools:
            continue
        for i, o in enumerate(pool.driver_overrides):
            field = fields.get(o.path.split(".", 1)[0])
            default = field.default if field is not None and "." not in o.path else None
            records.append(_record(cluster, f"{NVIDIADRIVER}/{pool.name}", pool, i, o, default, default is not None))
    return records
