"""Updates a change makes to the objects of a cluster, and which of them the API server refuses.

Both revisions of a cluster are compiled in memory (``gpuspec.render.compile``, no files written); their objects
are paired by API group, kind, namespace and name.  Besides the rendered files, the chart's default NVIDIADriver
(``templates/nvidiadriver.yaml``: name ``default``, ``usePrecompiled`` and ``driverType`` from the values, when
``driver.nvidiaDriverCRD.enabled`` and ``deployDefaultCR``) is modelled from the rendered values, since helm
updates it like any other object.  :func:`gpuspec.kube.immutable.refused_updates` judges each update.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from gpuspec.errors import GpuspecError
from gpuspec.kube.immutable import RefusedUpdate, refused_updates, rules_for_release, split_group
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import operator_version
from gpuspec.render.compile import compile_cluster
from gpuspec.render.filetree import YamlFile
from gpuspec.rollout.records import Change, ChangeKind, Disruption

#: Name of the chart's default NVIDIADriver (templates/nvidiadriver.yaml of GPU Operator v26.7.0).
CHART_DEFAULT_NVIDIADRIVER = "default"

ObjectKey = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class RenderedObject:
    """An object of a cluster's rendered output and the file (relative to rendered/) it is in."""

    key: ObjectKey
    file: str
    obj: Mapping[str, Any]

    def ref(self) -> str:
        """``Kind/name`` (``Kind/namespace/name`` for namespaced objects)."""
        _, kind, namespace, name = self.key
        return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


@dataclass(frozen=True, slots=True)
class RefusedChange:
    """An update of ``old`` to ``new`` the API server refuses (or could not be verified) at ``refusal.path``."""

    old: RenderedObject
    new: RenderedObject
    refusal: RefusedUpdate


def object_key(obj: Mapping[str, Any]) -> ObjectKey | None:
    """(group, kind, namespace, name) of a Kubernetes object, or None for a document that is not one."""
    meta = obj.get("metadata")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(meta, Mapping) or not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    if api_version.startswith("kustomize.config.k8s.io/"):
        return None
    name = meta.get("name")
    if not isinstance(name, str):
        return None
    namespace = meta.get("namespace")
    return (split_group(api_version), kind, namespace if isinstance(namespace, str) else "", name)


def rendered_objects(fleet: Fleet, cluster: Cluster) -> dict[ObjectKey, RenderedObject]:
    """Every object gpuspec renders for ``cluster`` (overlay, acceptance, GitOps) plus the chart's default
    NVIDIADriver; empty when the cluster does not compile (its findings say why)."""
    try:
        plan = compile_cluster(fleet, cluster, "")
    except GpuspecError:
        return {}
    out: dict[ObjectKey, RenderedObject] = {}
    for path, spec in plan.files.items():
        if not isinstance(spec, YamlFile):
            continue
        for doc in spec.documents:
            if isinstance(doc, Mapping):
                key = object_key(doc)
                if key is not None:
                    out.setdefault(key, RenderedObject(key, path, doc))
                if path.endswith("/gpu-operator.values.yaml"):
                    default = _chart_default_nvidiadriver(doc)
                    if default is not None:
                        out[default.key] = RenderedObject(default.key, path, default.obj)  # made by the chart
    return out


def _chart_default_nvidiadriver(values: Mapping[str, Any]) -> RenderedObject | None:
    driver = values.get("driver")
    if not isinstance(driver, Mapping) or driver.get("enabled") is False:
        return None
    crd = driver.get("nvidiaDriverCRD")
    if not isinstance(crd, Mapping) or not crd.get("enabled") or not crd.get("deployDefaultCR"):
        return None
    obj = {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver",
        "metadata": {"name": CHART_DEFAULT_NVIDIADRIVER},
        "spec": {"default": True, "usePrecompiled": bool(driver.get("usePrecompiled", False)),
                 "driverType": crd.get("driverType") or "gpu"},
    }
    key: ObjectKey = ("nvidia.com", "NVIDIADriver", "", CHART_DEFAULT_NVIDIADRIVER)
    return RenderedObject(key, "", obj)


def refused_changes(base: Fleet, old: Cluster, head: Fleet, new: Cluster) -> list[RefusedChange]:
    """The updates from ``old`` (in ``base``) to ``new`` (in ``head``) that the API server refuses or that
    gpuspec could not verify, in object order.  The CRD rules are those of the head's operator release."""
    before, after = rendered_objects(base, old), rendered_objects(head, new)
    rules = rules_for_release(operator_version(head, new))
    out: list[RefusedChange] = []
    for key in sorted(set(before) & set(after)):
        for refusal in refused_updates(before[key].obj, after[key].obj, rules):
            out.append(RefusedChange(before[key], after[key], refusal))
    return out


def replaced_objects(base: Fleet, old: Cluster, head: Fleet, new: Cluster,
                     kind: str) -> list[tuple[RenderedObject, RenderedObject]]:
    """Objects of ``kind`` the change replaces: one removed and one added in the same rendered file (a rename)."""
    before, after = rendered_objects(base, old), rendered_objects(head, new)
    gone = {o.file: o for k, o in before.items() if k[1] == kind and k not in after}
    return [(gone[o.file], o) for k, o in sorted(after.items()) if k[1] == kind and k not in before and o.file in gone]


def clusters_to_compare(base: Fleet, head: Fleet) -> list[str]:
    """Clusters of ``head`` (also in ``base``) whose rendered objects may differ: their spec differs (also where the
    plan's diff has no class for it: priority classes, overrides), or the fleet.yaml parts they render from
    (git, bootstrap; their mirror; their channel)."""
    shared = ("mirrors", "channels", "policy")
    fleet_wide = _dump(base.settings, shared) != _dump(head.settings, shared)
    out = []
    for cluster in head.clusters:
        old = base.cluster(cluster.name)
        if old is None:
            continue
        if (fleet_wide or _dump(old) != _dump(cluster)
                or _dump(base.mirror(cluster.mirror)) != _dump(head.mirror(cluster.mirror))
                or _dump(_channel(base, cluster.operator.channel)) != _dump(_channel(head, cluster.operator.channel))):
            out.append(cluster.name)
    return out


def _channel(fleet: Fleet, name: str | None) -> BaseModel | None:
    return next((c for c in fleet.settings.channels if c.name == name), None) if name else None


def _dump(model: BaseModel | None, exclude: tuple[str, ...] = ()) -> Any:
    return None if model is None else model.model_dump(mode="json", exclude=set(exclude) or None)


def refused_update_changes(base: Fleet, head: Fleet) -> list[Change]:
    """One plan record per update the API server refuses (the sync of that cluster fails), for every cluster a
    change can reach."""
    out: list[Change] = []
    for name in clusters_to_compare(base, head):
        old, new = base.cluster(name), head.cluster(name)
        assert old is not None and new is not None
        for change in refused_changes(base, old, head, new):
            refusal = change.refusal
            if not refusal.verified:
                continue
            field = ".".join(str(p) for p in refusal.path)
            out.append(Change(
                ChangeKind.UPDATE_REFUSED, name, None,
                f"the sync fails: the API server refuses the update of {change.new.ref()} {field} (GS810)",
                _text(refusal.before), _text(refusal.after), Disruption.NONE,
                f"{refusal.message} [{refusal.source}]; nothing of the cluster's sync applies until this is fixed",
                f"Instead: {refusal.instead}.", new.rollout.wave, file=new.source_file,
            ))
    return out


def _text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)[:200]
