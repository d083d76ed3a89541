"""GKE: the ResourceQuota NVIDIA's GKE page asks for in the operator namespace, applied before the chart's pods."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuspec.tools import find_kustomize
from gpuspec.verify.kustomize import kustomize_build
from gpuspec.verify.schemas import CrdSet, validate_object

from . import fleets
from .fleets import render_dir, write_fleet

PRE = "clusters/g1/prerequisites"


def _gke(tool: str, **gitops: object) -> list[dict[str, object]]:
    return [fleets.cluster(
        "g1", kubernetes={"version": "1.34", "distribution": "gke"}, operator={"version": "v26.7.0"},
        gitops={"tool": tool, **gitops},
        pools=[fleets.pool("a", "L4", 1, os={"distribution": "ubuntu", "version": "22.04",
                                               "kernel": "5.15.0-1070-gke"})],
    )]


def _doc(out: dict[str, bytes], path: str) -> object:
    return yaml.safe_load(out[path])


def test_gke_cluster_gets_the_priority_class_quota_in_the_operator_namespace(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, _gke("argocd")))
    quota = _doc(out, f"{PRE}/operator-quota.yaml")
    assert isinstance(quota, dict)
    assert quota["kind"] == "ResourceQuota" and quota["metadata"]["namespace"] == "gpu-operator"
    assert quota["spec"] == {"hard": {"pods": "100"}, "scopeSelector": {"matchExpressions": [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-node-critical", "system-cluster-critical"]},
    ]}}
    assert quota["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"
    assert _doc(out, f"{PRE}/kustomization.yaml") == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["operator-quota.yaml"]}
    # Argo CD: the chart's Application syncs the folder too (wave -1 inside it: before the chart's pods).
    chart_app = _doc(out, "gitops/argocd/g1/gpu-operator.application.yaml")
    assert isinstance(chart_app, dict)
    assert any(str(s.get("path", "")).endswith(PRE) for s in chart_app["spec"]["sources"])
    # ... and the overlay does not list it (one owner per object).
    overlay = _doc(out, "clusters/g1/kustomization.yaml")
    assert isinstance(overlay, dict) and "operator-quota.yaml" not in overlay["resources"]


def test_with_flux_the_release_waits_for_the_prerequisites_and_the_namespace_moves_there(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, _gke("flux", flux={"kubeConfigSecret": "g1-kubeconfig"})))
    docs = list(yaml.safe_load_all(out["gitops/flux/g1/kustomizations.yaml"]))
    names = [d["metadata"]["name"] for d in docs]
    assert names[:3] == ["g1-gpu-operator-prerequisites", "g1-gpu-operator", "g1-gpu-operator-overlay"]
    assert docs[0]["spec"]["path"].endswith(PRE)
    assert docs[0]["spec"]["kubeConfig"] == {"secretRef": {"name": "g1-kubeconfig"}}
    assert docs[1]["spec"]["dependsOn"] == [{"name": "g1-gpu-operator-prerequisites"}]
    assert _doc(out, f"{PRE}/kustomization.yaml") == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": ["namespace.yaml", "operator-quota.yaml"]}
    assert "clusters/g1/namespace.yaml" not in out


def test_other_platforms_get_no_prerequisites(tmp_path: Path) -> None:
    clusters = [fleets.cluster("u1", operator={"version": "v26.7.0"}, pools=[fleets.pool("a", "L40S", 4)])]
    out = render_dir(write_fleet(tmp_path, clusters))
    assert not [p for p in out if "/prerequisites/" in p]


def test_the_quota_builds_with_kubectl_and_validates_against_the_kubernetes_schema(
    tmp_path: Path, tools_bin: Path,
) -> None:
    out = render_dir(write_fleet(tmp_path / "src", _gke("flux")))
    root = tmp_path / "rendered"
    for rel, data in out.items():
        if rel.startswith(PRE + "/"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
    built = kustomize_build(root / PRE, kustomize=find_kustomize(tools_bin / "kubectl"))
    assert built.ok, built.error
    assert sorted(m.obj["kind"] for m in built.manifests) == ["Namespace", "ResourceQuota"]
    for manifest in built.manifests:
        assert validate_object(manifest.obj, crds=CrdSet(), kube_version="1.34") == []
    broken = {**built.manifests[-1].obj, "spec": {"hard": {"pods": "100"}, "scopeSelector": {"matchExpressions": [
        {"operator": "In", "scopeName": "PriorityClasses", "values": "system-node-critical"}]}}}
    assert validate_object(broken, crds=CrdSet(), kube_version="1.34") != []
