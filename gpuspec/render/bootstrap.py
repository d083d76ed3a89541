"""Bootstrap objects a fleet repository applies once, rendered when fleet.yaml asks (``bootstrap:``) (pure).

Argo CD: per AppProject the clusters name (except Argo CD's own ``default``), an AppProject that allows only
the fleet repository and the clusters' chart repositories as sources, only the rendered destinations with
the operator, tenant and acceptance namespaces, and only the cluster-scoped kinds gpuspec and the GPU Operator chart
create; and one parent Application (app of apps) that syncs ``<rendered>/gitops/argocd``.
Flux: the GitRepository every rendered Flux Kustomization names (``gitops.flux.source``).
Files go under ``gitops/<tool>/_bootstrap/`` (``_`` cannot start a cluster name).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass
from typing import Any

from gpuspec.model import resolve
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.render.acceptance import ACCEPTANCE_NAMESPACE
from gpuspec.render.overlay import MANAGED_BY

BOOTSTRAP_DIR = "_bootstrap"
PARENT_APPLICATION = "gpuspec-fleet"
#: Cluster-scoped kinds the rendered overlays and the GPU Operator chart (CRDs, ClusterPolicy, NVIDIADriver,
#: NFD rules, RuntimeClasses, RBAC, PriorityClasses, namespaces) create.
CLUSTER_KINDS: tuple[tuple[str, str], ...] = (
    ("", "Namespace"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("node.k8s.io", "RuntimeClass"),
    ("nvidia.com", "ClusterPolicy"),
    ("nvidia.com", "NVIDIADriver"),
    ("nfd.k8s-sigs.io", "NodeFeatureRule"),
    ("security.openshift.io", "SecurityContextConstraints"),
)
_COMMIT = re.compile(r"[0-9a-f]{40}\Z")


def _rendered(fleet: Fleet, *parts: str) -> str:
    root = fleet.settings.git.path.strip("/")
    return "/".join(p for p in (root, *parts) if p)


def _destination(cluster: Cluster) -> dict[str, str]:
    dest = cluster.gitops.argocd.destination
    return {"name": dest.name} if dest.name else {"server": dest.server or "https://kubernetes.default.svc"}


def _namespaces(cluster: Cluster) -> list[str]:
    # Every namespace the cluster's Applications put objects in: the operator's (chart, overlay, monitoring),
    # the tenants' and the acceptance Jobs' (the overlay Application's second source). Argo CD refuses a
    # whole sync when one object's namespace is not a project destination (controller/sync.go,
    # validateSyncPermissions, v3.5.1); `gpuspec verify` checks every rendered object against the project.
    names = {cluster.operator.namespace, ACCEPTANCE_NAMESPACE}
    for tenant in cluster.tenants:
        names.update(tenant.namespaces)
    return sorted(names)


@dataclass(frozen=True, slots=True)
class BootstrapEntry:
    """What the bootstrap objects take from one cluster (see :func:`bootstrap_entry`)."""

    tool: str
    #: Argo CD: the cluster's AppProject and Argo CD namespace, its chart repository (a project source) and
    #: the project destinations it needs (each as its (key, value) pairs).
    project: str
    argo_namespace: str
    chart_source: str
    destinations: tuple[tuple[tuple[str, str], ...], ...]
    #: Flux: the namespace and name of the GitRepository its Kustomizations name.
    flux_source: tuple[str, str]


def bootstrap_entry(fleet: Fleet, cluster: Cluster) -> BootstrapEntry:
    """The part of ``cluster`` the bootstrap objects of ``fleet`` show."""
    argo, flux = cluster.gitops.argocd, cluster.gitops.flux
    destinations = tuple(tuple({**_destination(cluster), "namespace": namespace}.items())
                         for namespace in _namespaces(cluster))
    return BootstrapEntry(cluster.gitops.tool, argo.project, argo.namespace,
                          resolve.chart_repository(fleet.mirror(cluster.mirror)).removeprefix("oci://"),
                          destinations, (flux.namespace, flux.source))


def app_project(fleet: Fleet, project: str, members: Sequence[BootstrapEntry]) -> dict[str, Any]:
    """The AppProject ``project``: sources, destinations and cluster-scoped kinds of its clusters only."""
    sources = {fleet.settings.git.repo_url, *(m.chart_source for m in members)}
    unique = {tuple(sorted(d)): dict(d) for m in members for d in m.destinations}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": {"name": project, "namespace": members[0].argo_namespace, "labels": dict(MANAGED_BY)},
        "spec": {
            "description": f"GPU Operator fleet {fleet.settings.metadata.name}: only what gpuspec renders",
            "sourceRepos": sorted(sources),
            "destinations": [unique[k] for k in sorted(unique)],
            "clusterResourceWhitelist": [{"group": g, "kind": k} for g, k in CLUSTER_KINDS],
        },
    }


def parent_application(fleet: Fleet, argo_namespace: str) -> dict[str, Any]:
    """The app of apps: syncs every rendered Argo CD Application (and this bootstrap folder) from git."""
    git = fleet.settings.git
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": PARENT_APPLICATION, "namespace": argo_namespace, "labels": dict(MANAGED_BY)},
        "spec": {
            "project": "default",
            "destination": {"server": "https://kubernetes.default.svc", "namespace": argo_namespace},
            "source": {"repoURL": git.repo_url, "targetRevision": git.revision,
                       "path": _rendered(fleet, "gitops", "argocd"), "directory": {"recurse": True}},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
        },
    }


def git_repository(fleet: Fleet, name: str, namespace: str) -> dict[str, Any]:
    """The Flux GitRepository ``name`` the rendered Kustomizations take their files from."""
    git = fleet.settings.git
    ref = {"commit": git.revision} if _COMMIT.match(git.revision) else {"branch": git.revision}
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "spec": {"interval": "1m", "url": git.repo_url, "ref": ref},
    }


def fleet_entries(fleet: Fleet) -> list[BootstrapEntry]:
    """The :func:`bootstrap_entry` of every cluster of ``fleet``, in the fleet's order (none when fleet.yaml asks
    for no bootstrap object)."""
    wanted = fleet.settings.bootstrap
    return [bootstrap_entry(fleet, c) for c in fleet.clusters] if wanted.argocd or wanted.flux else []


def entries_digest(shared_digest: str, entries: Iterable[BootstrapEntry]) -> str:
    """The input digest of the bootstrap objects: the inputs every cluster shares (``shared_digest``) and what
    they take from each cluster, so that an edit which leaves every entry as it was leaves them as they were."""
    digest = hashlib.sha256(shared_digest.encode())
    for entry in entries:
        digest.update(json.dumps(astuple(entry)).encode() + b"\n")
    return digest.hexdigest()


def bootstrap_files(fleet: Fleet, entries: Iterable[BootstrapEntry] | None = None) -> dict[str, dict[str, Any]]:
    """Output path → object of every bootstrap object fleet.yaml asks for (none unless ``bootstrap`` says so).

    ``entries``: the :func:`bootstrap_entry` of every cluster, in the fleet's order (default: of
    ``fleet.clusters``), for a fleet whose clusters are not all held at once.
    """
    wanted = fleet.settings.bootstrap
    files: dict[str, dict[str, Any]] = {}
    entries = list(entries) if entries is not None else fleet_entries(fleet)
    argo = [e for e in entries if e.tool == "argocd"]
    if wanted.argocd and argo:
        projects: dict[str, list[BootstrapEntry]] = {}
        for entry in argo:
            projects.setdefault(entry.project, []).append(entry)
        for project, members in sorted(projects.items()):
            if project != "default":
                files[f"gitops/argocd/{BOOTSTRAP_DIR}/{project}.appproject.yaml"] = app_project(fleet, project, members)
        files[f"gitops/argocd/{BOOTSTRAP_DIR}/{PARENT_APPLICATION}.application.yaml"] = parent_application(
            fleet, argo[0].argo_namespace)
    if wanted.flux:
        for namespace, name in sorted({e.flux_source for e in entries if e.tool == "flux"}):
            files[f"gitops/flux/{BOOTSTRAP_DIR}/{namespace}.{name}.gitrepository.yaml"] = git_repository(
                fleet, name, namespace)
    return files
