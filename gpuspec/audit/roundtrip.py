"""The round trip of an adoption: what the spec makes the operator run against what the cluster runs (pure).

The ClusterPolicy and NVIDIADrivers the chart of the pinned release writes from the spec's Helm values
(:mod:`gpuspec.audit.operator_render`) are compared field by field with the exported ones, and every image reference
(NFD's from the Helm values included) with the exported one of the same operand.  Each difference is a finding at the
spec line that causes it, naming the spec field that would keep the running value: GS785 for a setting, GS786 for
an image.  A setting gpuspec renders on purpose whatever the spec says (``psa.enabled``) is reported as a warning;
every other difference is an error of the spec, never something an exception accepts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.audit.operator_render import CLUSTER_POLICY, OperatorObjects
from gpuspec.audit.specdiff import ABSENT, FieldDifference, differences, image_refs
from gpuspec.catalogue import audit_operator as R
from gpuspec.findings import DocPath, Finding, Severity
from gpuspec.kube.crddefaults import defaulted
from gpuspec.matrix.chartintent import chart_intent
from gpuspec.matrix.chartvalues import chart_index
from gpuspec.matrix.component_query import component_images
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy, SharingMode
from gpuspec.model.resolve import operator_version
from gpuspec.render.deviations import MANAGED_DRIVER_FIELDS, managed_by, managed_values_paths
from gpuspec.render.facts import NFD, release_facts

#: A function that finds the spec line of a field in a cluster: its file and document path.
Locator = Callable[[Fleet, Cluster], tuple[str, DocPath]]


def _at(*path: str | int) -> Locator:
    return lambda fleet, cluster: (cluster.source_file, tuple(path))


def _pool(predicate: Callable[[Any], bool], *rest: str) -> Locator:
    def locate(fleet: Fleet, cluster: Cluster) -> tuple[str, DocPath]:
        for index, pool in enumerate(cluster.pools):
            if predicate(pool):
                return cluster.source_file, ("pools", index, *rest)
        return cluster.source_file, ("pools",)
    return locate


def _mirror(key: str) -> Locator:
    def locate(fleet: Fleet, cluster: Cluster) -> tuple[str, DocPath]:
        for index, mirror in enumerate(fleet.settings.mirrors):
            if mirror.name == cluster.mirror:
                return fleet.settings_file, ("mirrors", index, key)
        return cluster.source_file, ("mirror",)
    return locate


_SHARING = _pool(lambda p: p.sharing.mode is not SharingMode.NONE, "sharing")
_MIG = _pool(lambda p: p.mig.strategy is not MigStrategy.NONE, "mig")
_DRIVER = _pool(lambda p: p.driver.source is not DriverSource.HOST, "driver")


@dataclass(frozen=True)
class Explanation:
    """The spec field that keeps a values path's running value, and where it is written."""

    field: str
    locate: Locator
    #: gpuspec renders the value whatever the spec says (reported as a warning).
    gpuspec_own: bool = False


#: Helm values path (or a parent of it) -> the spec field that sets it; the longest match wins.
EXPLAINED: dict[str, Explanation] = {
    "psa.enabled": Explanation("none: gpuspec always sets psa.enabled: true (the operator labels its namespace for "
                               "Pod Security, as gpuspec's rendered namespace is labelled)", _at("operator"), True),
    "cdi": Explanation("operator.operands.cdi", _at("operator", "operands", "cdi")),
    "nfd.enabled": Explanation("operator.operands.nfd", _at("operator", "operands", "nfd")),
    "gds.enabled": Explanation("operator.operands.gds and pools[].devices.gds", _at("operator", "operands", "gds")),
    "gdrcopy.enabled": Explanation("operator.operands.gdrcopy and pools[].devices.gdrcopy",
                                   _at("operator", "operands", "gdrcopy")),
    "sandboxWorkloads.enabled": Explanation("operator.operands.sandboxWorkloads and pools[].devices.sandbox",
                                            _at("operator", "operands", "sandboxWorkloads")),
    "dcgmExporter.enabled": Explanation("operator.operands.dcgmExporter.enabled",
                                        _at("operator", "operands", "dcgmExporter", "enabled")),
    "dcgmExporter.serviceMonitor": Explanation("operator.operands.dcgmExporter.serviceMonitor",
                                               _at("operator", "operands", "dcgmExporter", "serviceMonitor")),
    "daemonsets.tolerations": Explanation("pools[].taints (every pool taint is tolerated)",
                                          _pool(lambda p: bool(p.taints), "taints")),
    "mig.strategy": Explanation("pools[].mig.strategy", _pool(lambda p: p.mig.strategy is not MigStrategy.NONE,
                                                                "mig", "strategy")),
    "migManager.config.name": Explanation("operator.configMaps.mig (with a custom layout: pools[].mig.custom)",
                                          _at("operator", "configMaps", "mig")),
    "migManager.config": Explanation("pools[].mig.layout / pools[].mig.custom", _MIG),
    "devicePlugin.config.name": Explanation("operator.configMaps.devicePlugin (with a sharing pool)",
                                            _at("operator", "configMaps", "devicePlugin")),
    "devicePlugin.config.default": Explanation("operator.configMaps.devicePluginDefault",
                                               _at("operator", "configMaps", "devicePluginDefault")),
    "devicePlugin.config": Explanation("pools[].sharing", _SHARING),
    "driver.enabled": Explanation("pools[].driver.source", _pool(lambda p: True, "driver", "source")),
    "driver.version": Explanation("pools[].driver.version / branch", _pool(
        lambda p: p.driver.source is not DriverSource.HOST, "driver", "version")),
    "driver.usePrecompiled": Explanation("pools[].driver.source", _pool(
        lambda p: p.driver.source is not DriverSource.HOST, "driver", "source")),
    "driver.kernelModuleType": Explanation("pools[].driver.kernelModuleType", _pool(
        lambda p: p.driver.source is not DriverSource.HOST, "driver", "kernelModuleType")),
    "driver.useOpenKernelModules": Explanation("pools[].driver.kernelModuleType", _pool(
        lambda p: p.driver.source is not DriverSource.HOST, "driver", "kernelModuleType")),
    "driver.nvidiaDriverCRD": Explanation("operator.driverManagement", _at("operator", "driverManagement")),
    "driver.upgradePolicy.autoUpgrade": Explanation("rollout.autoUpgrade", _at("rollout", "autoUpgrade")),
    "driver.upgradePolicy.maxParallelUpgrades": Explanation("rollout.maxParallelUpgrades",
                                                            _at("rollout", "maxParallelUpgrades")),
    "driver.upgradePolicy.maxUnavailable": Explanation("rollout.maxUnavailable", _at("rollout", "maxUnavailable")),
    "driver.upgradePolicy.drain": Explanation("rollout.drain", _at("rollout", "drain")),
    "driver.upgradePolicy.gpuPodDeletion": Explanation("rollout.podDeletion", _at("rollout", "podDeletion")),
    "driver.upgradePolicy.podDeletion": Explanation("rollout.podDeletion", _at("rollout", "podDeletion")),
    "driver.upgradePolicy.waitForCompletion": Explanation("rollout.waitForCompletion",
                                                          _at("rollout", "waitForCompletion")),
    "driver.upgradePolicy": Explanation("rollout", _at("rollout")),
    "driver.rdma.enabled": Explanation("operator.operands.rdma and pools[].devices.rdma",
                                       _at("operator", "operands", "rdma")),
    "driver.repoConfig": Explanation("mirrors[].packageRepoConfigMap (the cluster's mirror, fleet.yaml)",
                                     _mirror("packageRepoConfigMap")),
    "driver.certConfig": Explanation("mirrors[].caConfigMap (the cluster's mirror, fleet.yaml)",
                                     _mirror("caConfigMap")),
    "driver.env": Explanation("mirrors[].proxy (the cluster's mirror, fleet.yaml)", _mirror("proxy")),
    "toolkit.env": Explanation("kubernetes.distribution and kubernetes.runtime (the toolkit settings NVIDIA "
                               "documents for them)", _at("kubernetes")),
}

#: Per-pool NVIDIADriver ``spec`` fields -> the pool's spec field (gpuspec's own NVIDIADrivers).
_DRIVER_FIELDS: dict[str, str] = {"version": "driver", "usePrecompiled": "driver", "kernelModuleType": "driver",
                                  "useOpenKernelModules": "driver", "nodeSelector": "nodeSelector",
                                  "tolerations": "taints"}


def _values_path(release: str, kind: str, field_path: str) -> str | None:
    """The Helm values path the chart writes into ``kind``'s ``spec.<field_path>`` (None when unknown)."""
    intent = chart_intent(release) if release else None
    if intent is None:
        return None
    target = f"spec.{field_path}"
    best: tuple[int, str] | None = None
    for source in intent.fields:
        if source.kind != kind:
            continue
        if source.field == target:
            return source.values
        if source.subtree and target.startswith(source.field + "."):
            candidate = (len(source.field), source.values + target[len(source.field):])
            best = max(best, candidate) if best else candidate
    return best[1] if best else None


def explain(values_path: str) -> Explanation | None:
    """The spec field that sets ``values_path`` (the longest entry of :data:`EXPLAINED` at or above it)."""
    parts = values_path.split(".")
    for cut in range(len(parts), 0, -1):
        found = EXPLAINED.get(".".join(parts[:cut]))
        if found is not None:
            return found
    return None


def _stored(side: OperatorObjects, key: tuple[str, str], release: str | None = None) -> dict[str, Any] | None:
    """The spec of ``key`` on one side as the API server stores it: its CRD's defaults filled in (at ``release``,
    default the side's own)."""
    spec = side.specs.get(key)
    if spec is None:
        return None
    stored = defaulted({"spec": spec}, key[0], release or side.release).get("spec")
    return stored if isinstance(stored, dict) else {}


def _show(value: Any) -> str:
    if value is ABSENT:
        return "absent"
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 160 else text[:157] + "..."


def _object_name(key: tuple[str, str]) -> str:
    return key[0] if key == CLUSTER_POLICY else f"{key[0]} {key[1]}"


def _pool_of_driver(cluster: Cluster, name: str) -> int | None:
    for index, pool in enumerate(cluster.pools):
        if name in (pool.name, f"{pool.name}-precompiled"):
            return index
    return None


def _setting_finding(fleet: Fleet, cluster: Cluster, key: tuple[str, str], diff: FieldDifference,
                     rendered: OperatorObjects) -> Finding:
    what = (f"{_object_name(key)} spec.{diff.path}: the cluster runs {_show(diff.running)}, the spec renders "
            f"{_show(diff.rendered)} ({rendered.source})")
    pool_index = _pool_of_driver(cluster, key[1]) if key[0] == "NVIDIADriver" else None
    if pool_index is not None:
        field_name = diff.path.split(".", 1)[0]
        spec_field = MANAGED_DRIVER_FIELDS.get(field_name)
        pool_key = _DRIVER_FIELDS.get(field_name)
        if spec_field is not None:
            path: DocPath = ("pools", pool_index, *([pool_key] if pool_key else ["driver"]))
            return R.OPERATOR_SETTING_DIFFERS.finding(
                f"{what}; the spec field that keeps it: {spec_field}", cluster.source_file, path,
                hint="set that field to the running value, or accept the change as a planned step (not in import)")
        return R.OPERATOR_SETTING_DIFFERS.finding(
            f"{what}; no spec field sets it: a driverOverrides entry of the pool (path: {diff.path}) keeps it",
            cluster.source_file, ("pools", pool_index, "driverOverrides"),
            hint="add the running value as a driverOverrides entry with its reason")
    kind = "NVIDIADriver" if key[0] == "NVIDIADriver" else "ClusterPolicy"
    values_path = _values_path(rendered.release, kind, diff.path) or diff.path
    explanation = explain(values_path)
    if explanation is None:
        at: DocPath = ("overrides",) if cluster.overrides else ()
        return R.OPERATOR_SETTING_DIFFERS.finding(
            f"{what}; no spec field sets chart value {values_path}: an overrides entry (path: {values_path}) "
            "keeps it", cluster.source_file, at,
            hint=f"add `overrides: [{{path: {values_path}, value: <the running value>, reason: ...}}]`")
    file, path = explanation.locate(fleet, cluster)
    severity = Severity.WARNING if explanation.gpuspec_own else None
    return R.OPERATOR_SETTING_DIFFERS.finding(
        f"{what}; the spec field that keeps it: {explanation.field}", file, path,
        hint=None if explanation.gpuspec_own else "set that field to the running value",
        severity=severity)


def _nfd_image(values: Mapping[str, Any], default_tag: str) -> str | None:
    """NFD's image in Helm values; without a tag, the subchart's own (its appVersion, the release's NFD)."""
    sub = values.get(NFD)
    image = sub.get("image") if isinstance(sub, Mapping) else None
    if not isinstance(image, Mapping) or not image.get("repository"):
        return None
    tag = str(image.get("tag") or default_tag)
    return f"{image['repository']}:{tag}" if tag else str(image["repository"])


def _nfd_tag(release: str) -> str:
    """The NFD image tag the release's chart pins ("" when unknown)."""
    images = component_images(release, include_nfd=True) if release else None
    image = images.get(NFD) if images else None
    return str(image.version) if image is not None and image.version else ""


def _nfd_on(values: Mapping[str, Any]) -> bool:
    nfd = values.get("nfd")
    return not (isinstance(nfd, Mapping) and nfd.get("enabled") is False)


def _image_finding(fleet: Fleet, cluster: Cluster, what: str, rendered_ref: str | None, running_ref: str | None,
                   source: str) -> Finding:
    shown = (f"{what}: the cluster runs {running_ref or 'none'}, the spec renders {rendered_ref or 'none'} "
             f"({source})")
    if rendered_ref is None or running_ref is None or _repo(rendered_ref) == _repo(running_ref):
        field = "operator.version (the release pins every operand image)"
        path: DocPath = ("operator", "version")
        if what.startswith("ClusterPolicy spec.driver") or what.startswith("NVIDIADriver"):
            field, path = "pools[].driver.version (the driver image's tag)", ("pools",)
        return R.OPERAND_IMAGE_DIFFERS.finding(f"{shown}; the spec field that keeps it: {field}",
                                               cluster.source_file, path)
    for index, mirror in enumerate(fleet.settings.mirrors):
        if mirror.name == cluster.mirror:
            return R.OPERAND_IMAGE_DIFFERS.finding(
                f"{shown}; the spec field that keeps it: the registries of mirror {mirror.name} (fleet.yaml)",
                fleet.settings_file, ("mirrors", index, "registries"),
                hint="add the upstream registry with the prefix the cluster pulls through")
    return R.OPERAND_IMAGE_DIFFERS.finding(
        f"{shown}; the spec field that keeps it: mirror (a fleet.yaml mirror whose registries the cluster pulls "
        "through)", cluster.source_file, ("mirror",))


def _repo(ref: str) -> str:
    """The repository part of an image reference (without tag or digest)."""
    name = ref.split("@", 1)[0]
    head, _, tail = name.rpartition("/")
    return f"{head}/{tail.split(':', 1)[0]}" if head else tail.split(":", 1)[0]


@dataclass(frozen=True)
class Carried:
    """A running setting only a cluster ``overrides`` entry keeps: its Helm values path, value and origin."""

    path: str
    value: Any
    origin: str


def carriable(fleet: Fleet, cluster: Cluster, rendered: OperatorObjects, running: OperatorObjects) -> list[Carried]:
    """The ClusterPolicy settings the cluster runs that no spec field sets and an ``overrides`` entry can keep: a
    values key of the release's chart that gpuspec neither manages nor renders, with a value (not a field the
    cluster lacks)."""
    mine, theirs = _stored(rendered, CLUSTER_POLICY), _stored(running, CLUSTER_POLICY, rendered.release)
    version = operator_version(fleet, cluster)
    index = chart_index(version) if version else None
    if mine is None or theirs is None or index is None or version is None:
        return []
    managed = managed_values_paths(release_facts(version))
    out: list[Carried] = []
    for diff in differences(mine, theirs):
        values_path = _values_path(rendered.release, "ClusterPolicy", diff.path)
        if values_path is None or diff.running is ABSENT or explain(values_path) is not None:
            continue
        if managed_by(values_path, managed, rendered.values) is not None or not index.lookup(values_path).known:
            continue
        if not any(c.path == values_path for c in out):
            out.append(Carried(values_path, diff.running, f"ClusterPolicy spec.{diff.path}"))
    return out


def round_trip(fleet: Fleet, cluster: Cluster, rendered: OperatorObjects, running: OperatorObjects) -> list[Finding]:
    """GS785 and GS786: every difference between what ``cluster``'s spec makes the operator run and what runs.

    Objects only one side has are compared with an empty spec; NFD's image is compared when both sides' Helm
    values name it (the exported values are optional).
    """
    findings: list[Finding] = []
    for key in sorted({*rendered.specs, *running.specs}):
        mine, theirs = _stored(rendered, key), _stored(running, key, rendered.release)
        if mine is None or theirs is None:
            findings.append(_missing_object(cluster, key, mine is None, rendered.source))
            continue
        for diff in differences(mine, theirs):
            findings.append(_setting_finding(fleet, cluster, key, diff, rendered))
        mine_refs, theirs_refs = image_refs(mine, theirs), image_refs(theirs, mine)
        for block in sorted({*mine_refs, *theirs_refs}):
            if mine_refs.get(block) != theirs_refs.get(block):
                findings.append(_image_finding(fleet, cluster, f"{_object_name(key)} spec.{block}",
                                               mine_refs.get(block), theirs_refs.get(block), rendered.source))
    if running.values and (_nfd_on(rendered.values) or _nfd_on(running.values)):
        tag = _nfd_tag(rendered.release)
        mine_nfd, theirs_nfd = _nfd_image(rendered.values, tag), _nfd_image(running.values, tag)
        if theirs_nfd is not None and mine_nfd != theirs_nfd:
            findings.append(_image_finding(fleet, cluster, f"Helm values {NFD}.image", mine_nfd, theirs_nfd,
                                           "gpuspec's Helm values"))
    return findings


def _missing_object(cluster: Cluster, key: tuple[str, str], rendered_lacks: bool, source: str) -> Finding:
    if key == CLUSTER_POLICY:
        text = ("the cluster runs a ClusterPolicy the spec's chart values do not render" if rendered_lacks
                else "the spec renders a ClusterPolicy the export does not have")
        return R.OPERATOR_SETTING_DIFFERS.finding(f"{text} ({source})", cluster.source_file, ("operator",))
    if rendered_lacks:
        return R.OPERATOR_SETTING_DIFFERS.finding(
            f"the cluster runs NVIDIADriver {key[1]}, the spec renders none of that name ({source}); the spec "
            "fields that decide the NVIDIADrivers: operator.driverManagement and pools[].driver",
            cluster.source_file, ("operator", "driverManagement"))
    return R.OPERATOR_SETTING_DIFFERS.finding(
        f"the spec renders NVIDIADriver {key[1]} ({source}), the cluster runs none of that name; the spec fields "
        "that decide the NVIDIADrivers: operator.driverManagement and pools[].driver",
        cluster.source_file, ("operator", "driverManagement"))
