"""Apply as Argo CD and Flux would (GS920–GS924): Argo CD's project rules, and the example fleet through them.

The Argo CD cases mirror argoproj/argo-cd v3.5.1 ``app_project_types_test.go``-style expectations of
``isDestinationMatched`` / ``IsGroupKindNamePermitted``; the end-to-end tests run the real ``kubectl kustomize``
over the committed example ``rendered/`` tree with the real upstream Argo CD, Flux and Prometheus Operator CRDs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuspec.findings import Finding
from gpuspec.pipeline.verify import VerifyOptions, verify_fleet
from gpuspec.verify.argocd_project import (
    Destination,
    destination_permitted,
    filepath_match,
    glob_match,
    group_kind_permitted,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SYNC_IDS = {"GS920", "GS921", "GS922", "GS923", "GS924"}
IN = "https://kubernetes.default.svc"


# ----------------------------------------------------------------------------- Argo CD's matching


def test_glob_and_deny_patterns() -> None:
    assert glob_match("*", "anything")
    assert glob_match("team-*", "team-a") and not glob_match("team-*", "ops")
    assert glob_match("{a,b}-ns", "b-ns") and not glob_match("{a,b}-ns", "c-ns")
    assert glob_match("!kube-*", "gpu-operator") and not glob_match("!kube-*", "kube-system")
    # filepath.Match: '*' stops at '/', '[^x]' negates.
    assert filepath_match("*", "ClusterRole") and not filepath_match("*", "a/b")
    assert filepath_match("[^N]*", "ClusterRole") and not filepath_match("[^N]*", "Namespace")


def test_destination_deny_entry_wins_only_when_evaluated_before_a_match() -> None:
    spec = {"destinations": [{"server": "*", "namespace": "!kube-system"}, {"server": "*", "namespace": "*"}]}
    assert destination_permitted(spec, Destination(IN, "in-cluster", "gpu-operator"))
    assert not destination_permitted(spec, Destination(IN, "in-cluster", "kube-system"))
    # Argo CD walks the list in order: a match before the deny entry is already recorded, the deny still returns.
    later = {"destinations": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!kube-system"}]}
    assert not destination_permitted(later, Destination(IN, "in-cluster", "kube-system"))


def test_destination_by_name_or_server() -> None:
    spec = {"destinations": [{"name": "train-east", "namespace": "gpu-operator"}]}
    assert destination_permitted(spec, Destination("", "train-east", "gpu-operator"))
    assert not destination_permitted(spec, Destination("", "train-east", "gpuspec-acceptance"))
    assert not destination_permitted(spec, Destination("https://other:6443", "", "gpu-operator"))
    # A server deny entry refuses its server only where its namespace matches (Go: A || (B && C)).
    deny = {"destinations": [{"server": "https://a:6443", "namespace": "*"}, {"server": "!https://a:6443",
                                                                              "namespace": "x"}]}
    assert destination_permitted(deny, Destination("https://a:6443", "", "y"))
    assert not destination_permitted(deny, Destination("https://a:6443", "", "x"))
    assert destination_permitted(deny, Destination("https://b:6443", "", "x"))


def test_resource_lists() -> None:
    # Namespaced kinds: everything unless a whitelist is set; an empty whitelist permits nothing.
    assert group_kind_permitted({}, "", "ConfigMap", "c", True)
    assert not group_kind_permitted({"namespaceResourceWhitelist": []}, "", "ConfigMap", "c", True)
    assert not group_kind_permitted({"namespaceResourceBlacklist": [{"group": "", "kind": "ResourceQuota"}]},
                                    "", "ResourceQuota", "q", True)
    # Cluster-scoped kinds: nothing unless whitelisted; names are matched where an entry has one.
    assert not group_kind_permitted({}, "", "Namespace", "n", False)
    white = {"clusterResourceWhitelist": [{"group": "nvidia.com", "kind": "*"},
                                          {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                           "name": "gpuspec-*"}]}
    assert group_kind_permitted(white, "nvidia.com", "ClusterPolicy", "cluster-policy", False)
    assert group_kind_permitted(white, "rbac.authorization.k8s.io", "ClusterRole", "gpuspec-view", False)
    assert not group_kind_permitted(white, "rbac.authorization.k8s.io", "ClusterRole", "admin", False)
    black = {**white, "clusterResourceBlacklist": [{"group": "nvidia.com", "kind": "NVIDIADriver"}]}
    assert not group_kind_permitted(black, "nvidia.com", "NVIDIADriver", "pool", False)


# ----------------------------------------------------------------------------- the example fleet


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable copy of the example fleet and its committed rendered/ tree (the current folder)."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO_ROOT / "fleet", tmp_path / "fleet")
    shutil.copytree(REPO_ROOT / "rendered", tmp_path / "rendered")
    return tmp_path


def _sync_findings(root: Path, tools_bin: Path, upstream_dir: Path, mini_chart: Path, *,
                   prometheus: bool = True) -> list[Finding]:
    """GS92x findings of verify over ``root`` (run from it, so files read ``rendered/…``).

    Without the release's chart, verify counts every loaded CRD's kind as one the chart may install; the
    Prometheus Operator's CRDs are left out where a test needs them to be optional.
    """
    crds = [upstream_dir / "argocd", upstream_dir / "flux", upstream_dir / "gpu-operator" / "v26.7.0" / "crds"]
    if prometheus:
        crds.append(upstream_dir / "prometheus-operator")
    result = verify_fleet(VerifyOptions(fleet_dir=root / "fleet", rendered_dir=root / "rendered",
                                        charts=[mini_chart], crd_paths=crds, helm=tools_bin / "helm", cache_dir=None))
    return [f for f in result.findings if f.rule_id in SYNC_IDS]


def test_example_app_project_permits_every_namespace_and_kind_of_its_applications(
        example: Path, tools_bin: Path, upstream_dir: Path, mini_chart: Path) -> None:
    # The mini chart is not the example's release (helm checks skipped): the overlay, acceptance and monitoring
    # folders of every Application are built by the real kustomize and checked against the rendered AppProject.
    assert _sync_findings(example, tools_bin, upstream_dir, mini_chart) == []


def test_app_project_without_the_acceptance_namespace_fails_the_overlay(
        example: Path, tools_bin: Path, upstream_dir: Path, mini_chart: Path) -> None:
    project = example / "rendered" / "gitops" / "argocd" / "_bootstrap" / "gpu-platform.appproject.yaml"
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace("    - name: train-east\n      namespace: gpuspec-acceptance\n", ""),
                       encoding="utf-8")
    found = _sync_findings(example, tools_bin, upstream_dir, mini_chart)
    assert [(f.rule_id, f.file) for f in found] == [
        ("GS920", "rendered/clusters/train-east/acceptance/acceptance.yaml")], found
    assert "namespace gpuspec-acceptance is not permitted in project 'gpu-platform'" in found[0].message


def test_general_check_catches_a_namespace_blacklist_no_named_rule_knows(
        example: Path, tools_bin: Path, upstream_dir: Path, mini_chart: Path) -> None:
    # A platform team's project that forbids ResourceQuotas: no rule of gpuspec names this, Argo CD's code does.
    project = example / "rendered" / "gitops" / "argocd" / "_bootstrap" / "gpu-platform.appproject.yaml"
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace("spec:\n", "spec:\n  namespaceResourceBlacklist:\n    - group: ''\n"
                                    "      kind: ResourceQuota\n", 1), encoding="utf-8")
    found = _sync_findings(example, tools_bin, upstream_dir, mini_chart)
    assert {f.rule_id for f in found} == {"GS921"}, found
    assert all("ResourceQuota" in f.message for f in found)


def test_alerts_back_in_the_overlay_fail_beside_the_gpu_configmaps(
        example: Path, tools_bin: Path, upstream_dir: Path, mini_chart: Path) -> None:
    overlay = example / "rendered" / "clusters" / "infer-north"
    shutil.move(overlay / "monitoring" / "alerts.yaml", overlay / "alerts.yaml")
    kustomization = overlay / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text(encoding="utf-8") + "  - alerts.yaml\n", encoding="utf-8")
    (overlay / "monitoring" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n", encoding="utf-8")
    found = _sync_findings(example, tools_bin, upstream_dir, mini_chart, prometheus=False)
    assert [(f.rule_id, f.file) for f in found] == [("GS924", "rendered/clusters/infer-north/alerts.yaml")], found
    assert "ConfigMap gpuspec-device-plugin-config" in found[0].message
