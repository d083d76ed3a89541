"""Apply as the GitOps tool would: each Argo CD Application's and Flux Kustomization's objects (pure).

A *unit* is what one GitOps object syncs as a whole: an Argo CD Application (every source: the overlay and
acceptance folders' kustomize builds, the chart's ``helm template`` output) or a Flux Kustomization (the
kustomize build of its ``path``, and for a HelmRelease in it the chart's objects).  One refused object fails
the unit's whole sync, so every check here is about a unit and the objects in it:

* GS920: Argo CD, a namespaced object (or the Application's destination) whose namespace the project's
  ``destinations`` do not permit (``namespace … is not permitted in project``);
* GS921: Argo CD, a kind the project's cluster/namespace resource allow and deny lists refuse;
* GS922: Flux, an object in another namespace than the Kustomization's ``targetNamespace`` (which moves it);
* GS923: Flux, a custom resource whose CRD another Kustomization installs, without ``dependsOn`` on it;
* GS924: an object whose kind no CRD of the sync (or of what it depends on) provides, in the same unit as the
  GPU stack's objects: without the optional CRDs the whole apply fails.

Argo CD's rules: :mod:`gpuspec.verify.argocd_project`.  Flux (fluxcd/kustomize-controller v1.9.4,
555b3090): ``targetNamespace`` "sets or overrides the namespace" of every object (api/v1/kustomization_types.go
l. 154); ``dependsOn`` names Kustomizations (namespace defaults to the dependant's) that must exist and be
Ready before the dependant is applied (internal/controller/kustomization_controller.go l. 245, 568); the
build is applied as one server-side apply set, so one object whose kind the API server does not know fails it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuspec.catalogue import verify as ids
from gpuspec.findings import Finding
from gpuspec.verify.argocd_project import (
    Destination,
    destination_cluster,
    destination_permitted,
    group_kind_permitted,
)
from gpuspec.verify.checks import Origin, make_finding
from gpuspec.verify.scope import crd_kinds, group_of, is_builtin, namespaced

#: (object, where it is written) pairs.
Located = list[tuple[dict[str, Any], Origin]]
CLUSTER_LABEL = "gpuspec.io/cluster"


@dataclass
class SyncInputs:
    """What the apply checks read: built objects per rendered folder, helm output per cluster, GitOps objects."""

    #: Folder relative to the rendered folder (``clusters/a``) → the objects of its kustomize build.
    folders: dict[str, Located] = field(default_factory=dict)
    #: Cluster → the objects of ``helm template`` of its chart.
    helm: dict[str, Located] = field(default_factory=dict)
    #: Every Argo CD / Flux object under ``gitops/``, with the cluster its file belongs to.
    gitops: list[tuple[dict[str, Any], Origin, str | None]] = field(default_factory=list)
    #: Leading path of the rendered folder inside the git repository (fleet.yaml ``git.path``).
    git_path: str = "rendered"
    #: (group, kind) → namespaced, of the CRDs verify loaded (chart, ``--crds``).
    crd_scopes: dict[tuple[str, str], bool] = field(default_factory=dict)


@dataclass
class _Unit:
    tool: str
    name: str
    namespace: str
    doc: dict[str, Any]
    origin: Origin
    cluster: str | None
    objects: Located
    #: (group, kind) of the CRDs this unit's own objects install.
    installs: dict[tuple[str, str], bool]
    #: False when verify has not built the unit's path (another cluster's, outside rendered/): objects unknown.
    known: bool = True


def check_sync(inputs: SyncInputs) -> list[Finding]:
    """GS920–GS924 over every Argo CD Application and Flux Kustomization whose objects verify has."""
    scopes = dict(inputs.crd_scopes)
    for located in [*inputs.folders.values(), *inputs.helm.values()]:
        scopes.update(crd_kinds(obj for obj, _ in located))
    projects = {(_meta(d, "namespace"), _meta(d, "name")): d for d, _, _ in inputs.gitops
                if d.get("kind") == "AppProject" and _group(d) == "argoproj.io"}
    findings: list[Finding] = []
    argo = [_argo_unit(d, o, c, inputs) for d, o, c in inputs.gitops
            if d.get("kind") == "Application" and _group(d) == "argoproj.io"]
    flux = [_flux_unit(d, o, c, inputs) for d, o, c in inputs.gitops
            if d.get("kind") == "Kustomization" and _group(d) == "kustomize.toolkit.fluxcd.io"]
    for unit in (u for u in argo if u is not None):
        project = projects.get((unit.namespace, str(unit.doc.get("spec", {}).get("project") or "")))
        if project is not None:
            findings += _check_project(unit, project, scopes)
    flux_units = [u for u in flux if u is not None]
    for unit in flux_units:
        findings += _check_target_namespace(unit, scopes)
        findings += _check_depends_on(unit, flux_units)
    argo_units = [u for u in argo if u is not None]
    # A cluster whose chart was not templated (no chart of its release, helm failed): which CRDs its chart
    # installs is not known, so every kind of a CRD verify loaded (chart, --crds) may be the chart's.
    unknown = {c for _, _, c in inputs.gitops if c is not None and c not in inputs.helm}
    maybe = set(inputs.crd_scopes)
    for unit in argo_units:
        siblings = [u for u in argo_units if u.cluster == unit.cluster and u is not unit]
        findings += _check_optional_crds(unit, _provided(siblings) | (maybe if unit.cluster in unknown else set()))
    for unit in flux_units:
        deps = _dependencies(unit, flux_units)
        if all(d.known for d in deps):
            findings += _check_optional_crds(unit, _provided(deps) | (maybe if unit.cluster in unknown else set()))
    return findings


# ----------------------------------------------------------------------------- units


def _argo_unit(doc: dict[str, Any], origin: Origin, cluster: str | None, inputs: SyncInputs) -> _Unit | None:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return None
    cluster = _labels(doc).get(CLUSTER_LABEL) or cluster
    raw = spec.get("sources")
    sources: list[Any] = raw if isinstance(raw, list) else [spec.get("source")]
    objects: Located = []
    for source in sources:
        if not isinstance(source, dict):
            continue
        if source.get("chart"):
            if cluster is None or cluster not in inputs.helm:
                return None
            objects += inputs.helm[cluster]
        elif isinstance(source.get("path"), str):
            folder = _folder(source["path"], inputs.git_path)
            if folder not in inputs.folders:
                return None  # not built in this run (another cluster, or a path outside rendered/)
            objects += inputs.folders[folder]
    return _Unit("argocd", _meta(doc, "name"), _meta(doc, "namespace"), doc, origin, cluster, objects,
                 crd_kinds(o for o, _ in objects))


def _flux_unit(doc: dict[str, Any], origin: Origin, cluster: str | None, inputs: SyncInputs) -> _Unit | None:
    spec = doc.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("path"), str):
        return None
    folder = _folder(spec["path"], inputs.git_path)
    cluster = _labels(doc).get(CLUSTER_LABEL) or cluster
    if folder not in inputs.folders:
        # Kept for dependsOn chains; nothing is checked on it.
        return _Unit("flux", _meta(doc, "name"), _meta(doc, "namespace"), doc, origin, cluster, [], {}, known=False)
    objects = list(inputs.folders[folder])
    installs = crd_kinds(o for o, _ in objects)
    if any(o.get("kind") == "HelmRelease" for o, _ in objects) and cluster in inputs.helm:
        # The HelmRelease installs the chart's CRDs (install.crds / upgrade.crds) as part of this unit.
        installs.update(crd_kinds(o for o, _ in inputs.helm[cluster]))
    return _Unit("flux", _meta(doc, "name"), _meta(doc, "namespace"), doc, origin, cluster, objects, installs)


def _folder(path: str, git_path: str) -> str:
    """A source path (``rendered/clusters/a``, ``./rendered/clusters/a``) as a folder of the rendered tree."""
    parts = [p for p in path.strip().split("/") if p not in ("", ".")]
    root = [p for p in git_path.strip("/").split("/") if p]
    if root and parts[:len(root)] == root:
        parts = parts[len(root):]
    return "/".join(parts)


# ----------------------------------------------------------------------------- Argo CD


def _check_project(unit: _Unit, project: dict[str, Any], scopes: Mapping[tuple[str, str], bool]) -> list[Finding]:
    spec = project.get("spec") if isinstance(project.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    if spec.get("permitOnlyProjectScopedClusters"):
        return []  # needs the cluster secrets Argo CD holds
    name = _meta(project, "name")
    dest = unit.doc["spec"].get("destination") if isinstance(unit.doc["spec"].get("destination"), dict) else {}
    server, cluster_name = destination_cluster(dest)
    default_ns = str(dest.get("namespace") or "")
    where = server or cluster_name
    findings: list[Finding] = []
    if default_ns and not destination_permitted(spec, Destination(server, cluster_name, default_ns)):
        findings.append(make_finding(
            ids.ARGOCD_NAMESPACE_NOT_PERMITTED,
            f"Application {unit.name}: its destination {where}/{default_ns} is not permitted in project {name}",
            unit.origin, ("spec", "destination", "namespace"),
            hint=f"add {{{_dest_key(dest)}: {where}, namespace: {default_ns}}} to the AppProject's destinations"))
    refused_ns: set[str] = set()
    refused_kinds: set[tuple[str, str]] = set()
    for obj, origin in unit.objects:
        group, kind = group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", ""))
        scoped = namespaced(group, kind, scopes)
        if scoped is None:
            continue  # unknown kind: GS910 says it has no schema; Argo CD fails with "unable to verify"
        obj_name = _meta(obj, "name")
        if not group_kind_permitted(spec, group, kind, obj_name, scoped) and (group, kind) not in refused_kinds:
            refused_kinds.add((group, kind))
            lists = "namespaceResourceWhitelist/Blacklist" if scoped else "clusterResourceWhitelist/Blacklist"
            findings.append(make_finding(
                ids.ARGOCD_KIND_NOT_PERMITTED,
                f"Application {unit.name} syncs {kind} {obj_name} ({group or 'core'}, "
                f"{'namespaced' if scoped else 'cluster-scoped'}), which project {name} does not permit "
                f"({lists}); Argo CD fails the whole sync", origin, ("kind",),
                hint=f"permit {{group: '{group}', kind: {kind}}} in the AppProject's {lists.split('/')[0]}"))
        if not scoped:
            continue
        namespace = _meta(obj, "namespace") or default_ns
        if namespace in refused_ns or destination_permitted(spec, Destination(server, cluster_name, namespace)):
            continue
        refused_ns.add(namespace)
        findings.append(make_finding(
            ids.ARGOCD_NAMESPACE_NOT_PERMITTED,
            f"Application {unit.name} syncs {kind} {obj_name} into namespace {namespace}, which project {name} "
            f"does not permit as a destination on {where}: Argo CD fails the whole sync (\"namespace {namespace} "
            f"is not permitted in project '{name}'\")", origin,
            ("metadata", "namespace") if _meta(obj, "namespace") else ("metadata",),
            hint=f"add {{{_dest_key(dest)}: {where}, namespace: {namespace}}} to the AppProject's destinations"))
    return findings


def _dest_key(dest: Mapping[str, Any]) -> str:
    return "name" if dest.get("name") else "server"


# ----------------------------------------------------------------------------- Flux


def _check_target_namespace(unit: _Unit, scopes: Mapping[tuple[str, str], bool]) -> list[Finding]:
    target = str(unit.doc["spec"].get("targetNamespace") or "")
    if not target:
        return []
    findings = []
    for obj, origin in unit.objects:
        ns = _meta(obj, "namespace")
        scoped = namespaced(group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")), scopes)
        if ns and ns != target and scoped is not False:
            findings.append(make_finding(
                ids.FLUX_TARGET_NAMESPACE,
                f"Flux Kustomization {unit.name} has targetNamespace {target}: {obj.get('kind')} "
                f"{_meta(obj, 'name')} written for namespace {ns} is applied in {target} instead",
                origin, ("metadata", "namespace"),
                hint=f"deliver namespace {ns}'s objects with their own Kustomization, or drop targetNamespace"))
    return findings


def _dependencies(unit: _Unit, units: Sequence[_Unit]) -> list[_Unit]:
    """The Kustomizations ``unit`` depends on, directly or through others (``dependsOn``)."""
    by_key = {(u.namespace, u.name): u for u in units}
    seen: dict[tuple[str, str], _Unit] = {}
    todo = [unit]
    while todo:
        current = todo.pop()
        for ref in current.doc["spec"].get("dependsOn") or []:
            if not isinstance(ref, dict):
                continue
            key = (str(ref.get("namespace") or current.namespace), str(ref.get("name") or ""))
            dep = by_key.get(key)
            if dep is not None and key not in seen and dep is not unit:
                seen[key] = dep
                todo.append(dep)
    return list(seen.values())


def _check_depends_on(unit: _Unit, units: Sequence[_Unit]) -> list[Finding]:
    deps = {id(u) for u in _dependencies(unit, units)}
    findings = []
    reported: set[tuple[str, str]] = set()
    for obj, origin in unit.objects:
        gk = (group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")))
        if is_builtin(gk[0]) or gk in unit.installs or gk in reported:
            continue
        providers = [u for u in units if u is not unit and gk in u.installs and u.cluster == unit.cluster]
        if providers and not any(id(u) in deps for u in providers) and all(u.known for u in units):
            reported.add(gk)
            names = ", ".join(sorted(u.name for u in providers))
            findings.append(make_finding(
                ids.FLUX_MISSING_DEPENDS_ON,
                f"Flux Kustomization {unit.name} applies {gk[1]} {_meta(obj, 'name')}, whose CRD Kustomization "
                f"{names} installs, but does not depend on it: its first apply fails until the CRD exists",
                origin, ("kind",), hint=f"add dependsOn: [{{name: {providers[0].name}}}] to {unit.name}"))
    return findings


# ----------------------------------------------------------------------------- optional CRDs


def _provided(units: Iterable[_Unit]) -> set[tuple[str, str]]:
    return {gk for u in units for gk in u.installs}


def _check_optional_crds(unit: _Unit, elsewhere: set[tuple[str, str]]) -> list[Finding]:
    """An object whose CRD nothing of this sync installs, beside objects that do not need it."""
    optional: Located = []
    essential: Located = []
    for obj, origin in unit.objects:
        gk = (group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")))
        if is_builtin(gk[0]) or gk in unit.installs or gk in elsewhere or _tool_kind(unit.tool, gk[0]):
            essential.append((obj, origin))
        else:
            optional.append((obj, origin))
    if not optional or not essential:
        return []
    names = ", ".join(f"{o.get('kind')} {_meta(o, 'name')}" for o, _ in _most_essential(essential)[:3])
    findings = []
    for obj, origin in optional:
        what = "Application" if unit.tool == "argocd" else "Flux Kustomization"
        findings.append(make_finding(
            ids.OPTIONAL_CRD_IN_CORE_UNIT,
            f"{what} {unit.name} applies {obj.get('kind')} {_meta(obj, 'name')} "
            f"({obj.get('apiVersion')}), whose CRD nothing in this sync installs, together with {names}"
            f"{' and more' if len(essential) > 3 else ''}: where the CRD is missing the whole apply fails and "
            "those never apply", origin, ("kind",),
            hint="deliver it with its own Application / Kustomization (gpuspec renders alerts in the monitoring/ "
                 "folder) that depends on the GPU stack's"))
    return findings


def _tool_kind(tool: str, group: str) -> bool:
    """Kinds of the GitOps tool itself: its CRDs exist wherever it syncs (Flux's toolkit, Argo CD's own)."""
    return group.endswith(".toolkit.fluxcd.io") if tool == "flux" else group == "argoproj.io"


def _most_essential(located: Located) -> Located:
    """ConfigMaps and NVIDIADrivers (what the ClusterPolicy and the operator read) first."""
    rank = {"ConfigMap": 0, "NVIDIADriver": 0, "ClusterPolicy": 0, "Namespace": 1}
    return sorted(located, key=lambda pair: rank.get(str(pair[0].get("kind")), 2))


# ----------------------------------------------------------------------------- helpers


def _meta(obj: Mapping[str, Any], key: str) -> str:
    meta = obj.get("metadata")
    return str(meta.get(key) or "") if isinstance(meta, Mapping) else ""


def _labels(obj: Mapping[str, Any]) -> dict[str, str]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


def _group(obj: Mapping[str, Any]) -> str:
    return group_of(str(obj.get("apiVersion", "")))
