"""Emit the Argo CD and Flux objects that deliver a cluster's chart and overlay (pure).

Argo CD: two Applications per cluster (chart at sync wave 0, overlay at wave 1).
Flux: a HelmRepository or OCIRepository, a HelmRelease whose values come from a
configMapGenerator over the committed values file, and two Flux Kustomizations
(release, then overlay with ``dependsOn``).
"""

from __future__ import annotations

from typing import Any

from gpuspec.model import resolve
from gpuspec.render.acceptance import ACCEPTANCE_DIR, ACCEPTANCE_NAMESPACE, AcceptanceCheck
from gpuspec.render.context import ClusterContext
from gpuspec.render.overlay import MANAGED_BY, OPERATOR_PSA, PREREQUISITES_DIR, gitops_labels

CHART = "gpu-operator"
RELEASE_NAME = "gpu-operator"
VALUES_FILE = "gpu-operator.values.yaml"
#: Media type of a Helm chart layer in an OCI artifact.
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
#: Folder (inside the cluster's rendered folder) of the objects that need optional CRDs (PrometheusRule).
MONITORING_DIR = "monitoring"


def chart_repository(ctx: ClusterContext) -> str:
    """Where the cluster's chart comes from: its mirror's chart repository, else NGC."""
    return resolve.chart_repository(ctx.mirror)


def _rendered_path(ctx: ClusterContext, *parts: str) -> str:
    root = ctx.fleet.settings.git.path.strip("/")
    return "/".join(p for p in (root, *parts) if p)


# ----------------------------------------------------------------------------- Argo CD


def _destination(ctx: ClusterContext) -> dict[str, str]:
    dest = ctx.cluster.gitops.argocd.destination
    out = {"namespace": ctx.namespace}
    if dest.name:
        out["name"] = dest.name
    else:
        out["server"] = dest.server or "https://kubernetes.default.svc"
    return out


def _sync_policy(**extra: Any) -> dict[str, Any]:
    return {
        "automated": {"prune": True, "selfHeal": True},
        "syncOptions": ["ServerSideApply=true"],
        "retry": {"limit": 5, "backoff": {"duration": "30s", "factor": 2, "maxDuration": "10m"}},
        **extra,
    }


def argocd_applications(ctx: ClusterContext, *, acceptance: bool = False,
                        prerequisites: bool = False, monitoring: bool = False) -> dict[str, dict[str, Any]]:
    """File name → Application: the chart (wave 0), the overlay (wave 1) and the monitoring folder (wave 2).

    ``acceptance``: the overlay Application also syncs the acceptance folder, whose Jobs are PostSync hooks.
    ``prerequisites``: the chart Application also syncs the prerequisites folder (its objects carry sync wave -1,
    so they exist before the chart's pods are created).
    ``monitoring``: a third Application syncs the objects that need the Prometheus Operator's CRDs, so a
    cluster without them fails only that Application.
    """
    argo = ctx.cluster.gitops.argocd
    git = ctx.fleet.settings.git
    repo = chart_repository(ctx)
    chart_url = repo.removeprefix("oci://")
    values_ref = "$values/" + _rendered_path(ctx, "clusters", ctx.name, VALUES_FILE)

    def meta(name: str, wave: str) -> dict[str, Any]:
        return {"name": name, "namespace": argo.namespace, "labels": gitops_labels(ctx),
                "annotations": {"argocd.argoproj.io/sync-wave": wave}}

    chart_policy = _sync_policy(managedNamespaceMetadata={"labels": {**MANAGED_BY, **OPERATOR_PSA}})
    chart_policy["syncOptions"] = ["CreateNamespace=true", "ServerSideApply=true"]
    chart_app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": meta(f"{ctx.name}-gpu-operator", "0"),
        "spec": {
            "project": argo.project,
            "destination": _destination(ctx),
            "sources": [
                {"repoURL": chart_url, "chart": CHART, "targetRevision": ctx.facts.chart_version,
                 "helm": {"releaseName": RELEASE_NAME, "valueFiles": [values_ref]}},
                {"repoURL": git.repo_url, "targetRevision": git.revision, "ref": "values"},
                *([{"repoURL": git.repo_url, "targetRevision": git.revision,
                    "path": _rendered_path(ctx, "clusters", ctx.name, PREREQUISITES_DIR)}] if prerequisites else []),
            ],
            "syncPolicy": chart_policy,
        },
    }
    if ctx.cluster.kubernetes.distribution.value == "openshift":
        chart_app = _olm_application(ctx, meta(f"{ctx.name}-gpu-operator", "0"))
    overlay_app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": meta(f"{ctx.name}-gpu-operator-overlay", "1"),
        "spec": {
            "project": argo.project,
            "destination": _destination(ctx),
            **_overlay_sources(ctx, acceptance),
            "syncPolicy": _sync_policy(),
        },
    }
    apps = {"gpu-operator.application.yaml": chart_app, "overlay.application.yaml": overlay_app}
    if monitoring:
        apps["monitoring.application.yaml"] = {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": meta(f"{ctx.name}-gpu-operator-monitoring", "2"),
            "spec": {
                "project": argo.project,
                "destination": _destination(ctx),
                "source": {"repoURL": git.repo_url, "targetRevision": git.revision,
                           "path": _rendered_path(ctx, "clusters", ctx.name, MONITORING_DIR)},
                "syncPolicy": _sync_policy(),
            },
        }
    return apps


def _olm_application(ctx: ClusterContext, meta: dict[str, Any]) -> dict[str, Any]:
    """OpenShift: the Application of the OLM objects (Namespace, OperatorGroup, pinned Subscription, NFD Operator).

    The overlay Application (wave 1, with the ClusterPolicy) follows; Argo CD's built-in health check of
    operators.coreos.com Subscriptions is what holds it (docs/openshift.md).
    """
    git = ctx.fleet.settings.git
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": meta,
        "spec": {
            "project": ctx.cluster.gitops.argocd.project,
            "destination": _destination(ctx),
            "source": {"repoURL": git.repo_url, "targetRevision": git.revision,
                       "path": _rendered_path(ctx, "clusters", ctx.name, "olm")},
            "syncPolicy": _sync_policy(),
        },
    }


def _overlay_sources(ctx: ClusterContext, acceptance: bool) -> dict[str, Any]:
    git = ctx.fleet.settings.git
    overlay = {"repoURL": git.repo_url, "targetRevision": git.revision,
               "path": _rendered_path(ctx, "clusters", ctx.name)}
    if not acceptance:
        return {"source": overlay}
    checks = {"repoURL": git.repo_url, "targetRevision": git.revision,
              "path": _rendered_path(ctx, "clusters", ctx.name, ACCEPTANCE_DIR)}
    return {"sources": [overlay, checks]}


# ----------------------------------------------------------------------------- Flux


def _source_secrets(ctx: ClusterContext, *, oci: bool) -> dict[str, Any]:
    """The pull-secret, CA and proxy references of the mirror's chart source (Flux source spec fields)."""
    chart = ctx.mirror.chart if ctx.mirror is not None else None
    if chart is None:
        return {}
    refs = {"secretRef": chart.secret_ref, "certSecretRef": chart.cert_secret_ref}
    if oci:
        refs["proxySecretRef"] = chart.proxy_secret_ref
    return {key: {"name": name} for key, name in refs.items() if name}


def flux_release_files(ctx: ClusterContext) -> dict[str, Any]:
    """File name → content of the Flux release folder (source, HelmRelease, kustomization, name-reference config)."""
    flux = ctx.cluster.gitops.flux
    repo = chart_repository(ctx)
    name = f"{ctx.name}-gpu-operator"
    meta = {"name": name, "namespace": flux.namespace, "labels": gitops_labels(ctx)}
    source: dict[str, Any]
    release_spec: dict[str, Any] = {
        "interval": "30m",
        "releaseName": RELEASE_NAME,
        "targetNamespace": ctx.namespace,
        "storageNamespace": ctx.namespace,
        "install": {"createNamespace": True, "crds": "CreateReplace", "remediation": {"retries": 3}},
        "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3}},
        "valuesFrom": [{"kind": "ConfigMap", "name": f"{name}-values", "valuesKey": "values.yaml"}],
    }
    if repo.startswith("oci://"):
        source = {
            "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "metadata": dict(meta),
            "spec": {"interval": "1h", "url": f"{repo}/{CHART}", "ref": {"tag": ctx.facts.chart_version},
                     "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"}},
        }
        release_spec["chartRef"] = {"kind": "OCIRepository", "name": name}
    else:
        source = {
            "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": dict(meta),
            "spec": {"interval": "1h", "url": repo},
        }
        release_spec["chart"] = {"spec": {
            "chart": CHART, "version": ctx.facts.chart_version, "interval": "1h",
            "sourceRef": {"kind": "HelmRepository", "name": name},
        }}
    source["spec"].update(_source_secrets(ctx, oci=repo.startswith("oci://")))
    if flux.kube_config_secret:
        release_spec["kubeConfig"] = {"secretRef": {"name": flux.kube_config_secret}}
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": dict(meta),
        "spec": release_spec,
    }
    values_path = f"../../../../clusters/{ctx.name}/{VALUES_FILE}"
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["helmrelease.yaml", "source.yaml"],
        "configMapGenerator": [{
            "name": f"{name}-values", "namespace": flux.namespace, "files": [f"values.yaml={values_path}"],
        }],
        "configurations": ["kustomizeconfig.yaml"],
    }
    name_reference = {"nameReference": [{
        "kind": "ConfigMap", "version": "v1",
        "fieldSpecs": [{"path": "spec/valuesFrom/name", "kind": "HelmRelease"}],
    }]}
    return {
        "source.yaml": source,
        "helmrelease.yaml": release,
        "kustomization.yaml": kustomization,
        "kustomizeconfig.yaml": name_reference,
    }


def flux_kustomizations(ctx: ClusterContext, checks: list[AcceptanceCheck] | None = None, *,
                        prerequisites: bool = False, monitoring: bool = False) -> list[dict[str, Any]]:
    """The Flux Kustomizations: the prerequisites folder when there is one, the release folder (``dependsOn``
    the prerequisites), then the overlay (``dependsOn`` the release), then the acceptance Jobs (``dependsOn`` the
    overlay, health-checked: a failed Job fails the Kustomization) and, with ``monitoring``, the monitoring folder
    (``dependsOn`` the overlay; only it needs optional CRDs)."""
    flux = ctx.cluster.gitops.flux
    name = f"{ctx.name}-gpu-operator"
    source_ref = {"kind": "GitRepository", "name": flux.source}

    def kustomization(kname: str, path: str, **extra: Any) -> dict[str, Any]:
        return {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": kname, "namespace": flux.namespace, "labels": gitops_labels(ctx)},
            "spec": {"interval": "10m", "path": f"./{path}", "prune": True, "wait": True, "timeout": "15m",
                     "sourceRef": source_ref, **extra},
        }

    overlay_extra: dict[str, Any] = {"dependsOn": [{"name": name}]}
    if flux.kube_config_secret:
        overlay_extra["kubeConfig"] = {"secretRef": {"name": flux.kube_config_secret}}
    release_path = (_rendered_path(ctx, "clusters", ctx.name, "olm")
                    if ctx.cluster.kubernetes.distribution.value == "openshift"
                    else _rendered_path(ctx, "gitops", "flux", ctx.name, "release"))
    docs = [
        kustomization(name, release_path,
                      **({"dependsOn": [{"name": f"{name}-prerequisites"}]} if prerequisites else {})),
        kustomization(f"{name}-overlay", _rendered_path(ctx, "clusters", ctx.name), **overlay_extra),
    ]
    if prerequisites:
        extra: dict[str, Any] = {}
        if flux.kube_config_secret:
            extra["kubeConfig"] = {"secretRef": {"name": flux.kube_config_secret}}
        docs.insert(0, kustomization(f"{name}-prerequisites",
                                     _rendered_path(ctx, "clusters", ctx.name, PREREQUISITES_DIR), **extra))
    if checks:
        accept_extra: dict[str, Any] = {
            "dependsOn": [{"name": f"{name}-overlay"}],
            # Jobs are immutable: a changed Job is replaced, not patched.
            "force": True,
            "healthChecks": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": c.job, "namespace": ACCEPTANCE_NAMESPACE}
                for c in checks
            ],
        }
        if flux.kube_config_secret:
            accept_extra["kubeConfig"] = {"secretRef": {"name": flux.kube_config_secret}}
        accept = kustomization(f"{name}-acceptance", _rendered_path(ctx, "clusters", ctx.name, ACCEPTANCE_DIR),
                               **accept_extra)
        accept["spec"]["wait"] = False  # healthChecks name the Jobs (wait would make Flux ignore them)
        accept["spec"]["timeout"] = f"{max(c.timeout_seconds for c in checks) + 300}s"
        docs.append(accept)
    if monitoring:
        watch: dict[str, Any] = {"dependsOn": [{"name": f"{name}-overlay"}]}
        if flux.kube_config_secret:
            watch["kubeConfig"] = {"secretRef": {"name": flux.kube_config_secret}}
        docs.append(kustomization(f"{name}-monitoring", _rendered_path(ctx, "clusters", ctx.name, MONITORING_DIR),
                                  **watch))
    return docs
