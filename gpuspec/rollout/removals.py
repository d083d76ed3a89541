"""What a change removes from the cluster: rendered objects that disappear per GitOps unit, and what GC deletes.

Base and head fleets are compiled (pure, no files written) and, per cluster in both, the objects of each GitOps
unit compared by identity (group, kind, namespace, name): the overlay (``clusters/<c>/``), its acceptance and
monitoring folders.  An object missing from head is deleted by the GitOps tool when the unit prunes
(Argo CD ``syncPolicy.automated.prune``, Flux ``spec.prune``) unless the object opts out
(``argocd.argoproj.io/sync-options: Prune=false``, ``kustomize.toolkit.fluxcd.io/prune: disabled``).

Garbage collection then deletes what the removed object owns.  The GPU Operator sets itself as controller owner
of what it creates (NVIDIA/gpu-operator v26.7.0 internal/state/driver.go l. 152 and 435: the NVIDIADriver CR owns
its driver DaemonSets; controllers/object_controls.go: the ClusterPolicy owns every operand object), so the
Kubernetes garbage collector removes those with the CR.  Helm chart objects (ClusterPolicy, a default
NVIDIADriver) are not compared here: the chart decides them (``helm template`` in ``gpuspec verify``).
Acceptance Jobs are left out: they are renamed on every configuration change by design.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.model.fleet import Fleet
from gpuspec.render.compile import compile_cluster
from gpuspec.render.context import DEVICE_PLUGIN_CONFIGMAP, MIG_CONFIGMAP
from gpuspec.render.filetree import ClusterPlan, YamlFile

#: What garbage collection (or the operator) takes with a removed object, by kind.
CONSEQUENCES: dict[str, str] = {
    "NVIDIADriver": "the operator's driver DaemonSet(s) of this NVIDIADriver are garbage-collected with it "
                    "(ownerReference): its nodes lose their driver at once, outside the upgrade policy, and GPU pods "
                    "on them fail",
    "ClusterPolicy": "every operand DaemonSet the ClusterPolicy owns is garbage-collected: driver, toolkit, device "
                     "plugin, DCGM exporter leave every GPU node",
    "ConfigMap": "the ClusterPolicy still names it (device plugin / MIG manager config): those pods fail to start "
                 "on their next restart",
    "ResourceQuota": "the namespace's GPU requests are no longer capped",
    "LimitRange": "containers in the namespace are no longer limited per container",
    "PrometheusRule": "its alerts stop firing",
    "PriorityClass": "pods that name it are refused on creation",
}


@dataclass(frozen=True, slots=True)
class Removal:
    """One rendered object a change removes from a GitOps unit, and whether (and with what) it is deleted."""

    cluster: str
    unit: str
    kind: str
    name: str
    namespace: str
    pruned: bool
    consequence: str

    def to_json(self) -> dict[str, Any]:
        """The removal as JSON-ready data."""
        return {"cluster": self.cluster, "unit": self.unit, "kind": self.kind, "name": self.name,
                "namespace": self.namespace or None, "pruned": self.pruned,
                "garbageCollected": self.consequence if self.pruned else None}

    def describe(self) -> str:
        """One line for the text report."""
        where = f"{self.namespace}/" if self.namespace else ""
        if not self.pruned:
            return f"{self.kind} {where}{self.name}: left in the cluster (no prune for it); delete it by hand"
        tail = f"; {self.consequence}" if self.consequence else ""
        return f"{self.kind} {where}{self.name}: deleted by prune{tail}"


_Key = tuple[str, str, str, str]


def _units(plan: ClusterPlan, fleet: Fleet) -> dict[str, tuple[str, bool, dict[_Key, Mapping[str, Any]]]]:
    """Folder → (unit name, prunes, objects by identity) of one compiled cluster."""
    base = f"clusters/{plan.name}"
    cluster = next(c for c in fleet.clusters if c.name == plan.name)
    tool = cluster.gitops.tool
    suffix = {"": "-overlay", "acceptance": "-overlay" if tool == "argocd" else "-acceptance",
              "monitoring": "-monitoring"}
    prunes = _prunes(plan, tool)
    out: dict[str, tuple[str, bool, dict[_Key, Mapping[str, Any]]]] = {}
    for path, file in plan.files.items():
        if not isinstance(file, YamlFile) or not path.startswith(base + "/"):
            continue
        rel = path[len(base) + 1:]
        folder = rel.rpartition("/")[0]
        if folder not in suffix or rel.endswith(("kustomization.yaml", "gpu-operator.values.yaml",
                                                  "node-labels.yaml", "deviations.yaml", "autoscaling.yaml")):
            continue
        unit = f"{plan.name}-gpu-operator{suffix[folder]}"
        objects = out.setdefault(folder, (unit, prunes.get(unit, False), {}))[2]
        for doc in file.documents:
            if isinstance(doc, Mapping) and "kind" in doc and not (folder == "acceptance" and doc["kind"] == "Job"):
                objects[_key(doc)] = doc
    return out


def _prunes(plan: ClusterPlan, tool: str) -> dict[str, bool]:
    """Unit name → whether the GitOps tool prunes it, from the compiled Applications / Kustomizations."""
    out: dict[str, bool] = {}
    for path, file in plan.files.items():
        if not isinstance(file, YamlFile) or not path.startswith(f"gitops/{tool}/"):
            continue
        for doc in file.documents:
            if not isinstance(doc, Mapping):
                continue
            spec = doc.get("spec") if isinstance(doc.get("spec"), Mapping) else {}
            assert isinstance(spec, Mapping)
            name = str(doc.get("metadata", {}).get("name", ""))
            if doc.get("kind") == "Application":
                automated = (spec.get("syncPolicy") or {}).get("automated") or {}
                out[name] = bool(automated.get("prune"))
            elif doc.get("kind") == "Kustomization" and "toolkit.fluxcd.io" in str(doc.get("apiVersion", "")):
                out[name] = bool(spec.get("prune"))
    return out


def _key(doc: Mapping[str, Any]) -> _Key:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    group = str(doc.get("apiVersion", "")).rpartition("/")[0]
    return group, str(doc.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _configs_named(plan: ClusterPlan) -> set[str]:
    """ConfigMap names the head's Helm values still give the ClusterPolicy (device plugin, MIG manager)."""
    file = plan.files.get(f"clusters/{plan.name}/gpu-operator.values.yaml")
    values = file.documents[0] if isinstance(file, YamlFile) and file.documents else None
    names: set[str] = set()
    if isinstance(values, Mapping):
        for block in ("devicePlugin", "migManager"):
            config = (values.get(block) or {}).get("config") if isinstance(values.get(block), Mapping) else None
            if isinstance(config, Mapping) and config.get("name"):
                names.add(str(config["name"]))
    return names


def _consequence(key: _Key, named: set[str]) -> str:
    if key[1] == "ConfigMap":
        if key[3] in named:
            return CONSEQUENCES["ConfigMap"]
        if key[3] in (DEVICE_PLUGIN_CONFIGMAP, MIG_CONFIGMAP):
            return "the head's ClusterPolicy no longer names it: nothing reads it any more"
        return ""
    return CONSEQUENCES.get(key[1], "")


def _opted_out(doc: Mapping[str, Any]) -> bool:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    if not isinstance(annotations, Mapping):
        return False
    argo = str(annotations.get("argocd.argoproj.io/sync-options", ""))
    return "Prune=false" in argo.split(",") or annotations.get("kustomize.toolkit.fluxcd.io/prune") == "disabled"


def removed_objects(base: Fleet, head: Fleet) -> list[Removal]:
    """Every rendered object of a cluster in both fleets that the head no longer renders, per GitOps unit."""
    removals: list[Removal] = []
    head_names = {c.name for c in head.clusters}
    for old in sorted(base.clusters, key=lambda c: c.name):
        new = head.cluster(old.name)
        if old.name not in head_names or new is None:
            continue
        before = _units(compile_cluster(base, old, ""), base)
        head_plan = compile_cluster(head, new, "")
        after = _units(head_plan, head)
        named = _configs_named(head_plan)
        kept = {key for _, _, objects in after.values() for key in objects}
        for folder in sorted(before):
            unit, prunes, objects = before[folder]
            head_unit = after.get(folder)
            prunes_now = head_unit[1] if head_unit is not None else prunes
            for key in sorted(objects):
                if key in kept:
                    continue  # moved to another unit of the cluster: re-applied there
                doc = objects[key]
                pruned = prunes_now and not _opted_out(doc)
                removals.append(Removal(old.name, unit, key[1], key[3], key[2], pruned, _consequence(key, named)))
    return removals
