"""autoscaling.yaml: what each autoscaled pool's autoscaler needs so it waits for the GPU Operator."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpuspec.audit.expect import expected_resources
from gpuspec.render.autoscaling import node_resources
from gpuspec.render.filetree import YamlFile
from tests.render.fleets import EXAMPLE_FLEET, REPO_ROOT, cluster, compile_dir, load, pool, render_dir, write_fleet
from tests.render.test_yamllint import problems

KUBECTL = REPO_ROOT / ".tools" / "bin" / "kubectl"
MIG = {"strategy": "mixed", "custom": [{"devices": [0, 1, 2, 3], "profiles": {"1g.10gb": 7}},
                                       {"devices": [4, 5, 6, 7], "profiles": {"3g.40gb": 2}}]}


def _autoscaling(tmp_path: Path, *pools: dict[str, Any]) -> dict[str, Any] | None:
    plan = compile_dir(write_fleet(tmp_path, [cluster("c", pools=list(pools))])).clusters[0]
    found = plan.files.get("clusters/c/autoscaling.yaml")
    if found is None:
        return None
    assert isinstance(found, YamlFile)
    doc: dict[str, Any] = found.documents[0]
    return doc


def test_node_resources_agree_with_what_audit_expects(tmp_path: Path) -> None:
    fleet = load(EXAMPLE_FLEET)
    pools = [p for c in fleet.clusters for p in c.pools]
    fleet_dir = write_fleet(tmp_path, [cluster("m", pools=[
        pool("mixed", product="A100-SXM4-80GB", mig=MIG),
        pool("single", product="A100-SXM4-80GB", mig={"strategy": "single", "layout": "all-1g.10gb"}),
        pool("ts", sharing={"mode": "time-slicing", "replicas": 4, "renameByDefault": True,
                            "justification": "inference"}),
    ])])
    pools += load(fleet_dir).clusters[0].pools
    for p in pools:
        assert node_resources(p) == expected_resources(p).counts, p.name


def test_no_autoscaled_pool_no_file(tmp_path: Path) -> None:
    assert _autoscaling(tmp_path, pool("gpu")) is None


def test_cluster_autoscaler_on_aws_gets_label_taint_and_resource_tags(tmp_path: Path) -> None:
    doc = _autoscaling(tmp_path, pool("h100", taints=[{"key": "acme.example/gpu", "value": "h100",
                                                      "effect": "NoSchedule"}],
                                      autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "aws",
                                                   "min": 0, "max": 4}, nodes=2))
    assert doc is not None and doc["operatorRemovesTaints"] is False
    entry = doc["pools"]["h100"]
    assert entry["gpuLabel"] == "k8s.amazonaws.com/accelerator"
    assert entry["autoScalingGroupTags"] == {"prefix": "k8s.io/cluster-autoscaler/node-template/", "tags": {
        "label/acme.example/gpu-pool": "h100",
        "label/k8s.amazonaws.com/accelerator": "h100-sxm5-80gb",
        "taint/acme.example/gpu": "h100:NoSchedule",
        "resources/nvidia.com/gpu": "8",
    }}
    assert doc["clusterAutoscalerFlags"] == ["--gpu-total=h100-sxm5-80gb:0:32"]


def test_a_mixed_mig_pool_on_aws_gets_no_gpu_label_and_zero_full_gpus(tmp_path: Path) -> None:
    """With the label and no allocatable nvidia.com/gpu, cluster-autoscaler counts its nodes unready for good; the
    template would take nvidia.com/gpu from the instance type unless a tag says 0."""
    doc = _autoscaling(tmp_path, pool("a100", product="A100-SXM4-80GB", mig=MIG,
                                      autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "aws",
                                                   "min": 0, "max": 4}, nodes=2))
    assert doc is not None
    entry = doc["pools"]["a100"]
    assert entry["gpuLabel"] is None
    assert entry["autoScalingGroupTags"]["tags"] == {
        "label/acme.example/gpu-pool": "a100",
        "label/nvidia.com/mig.config": "custom-a100",
        "resources/nvidia.com/gpu": "0",
        "resources/nvidia.com/mig-1g.10gb": "28",
        "resources/nvidia.com/mig-3g.40gb": "8",
    }
    assert "must not set the GPU label" in entry["readinessGate"]
    assert "clusterAutoscalerFlags" not in doc  # nodes without the label count no GPU in --gpu-total


def test_gpu_total_counts_what_the_nodes_advertise_as_nvidia_com_gpu(tmp_path: Path) -> None:
    """GetNodeGpuTarget reads the node's allocatable nvidia.com/gpu: time-slicing replicas and single-strategy MIG
    instances count, physical GPUs do not."""
    auto = {"autoscaler": "cluster-autoscaler", "cloud": "aws", "min": 1, "max": 4}
    doc = _autoscaling(tmp_path,
                       pool("ts", sharing={"mode": "time-slicing", "replicas": 4, "justification": "t"},
                            autoscaling=auto, nodes=2),
                       pool("single", product="A100-SXM4-80GB", mig={"strategy": "single", "layout": "all-1g.10gb"},
                            autoscaling=auto, nodes=2))
    assert doc is not None
    assert doc["clusterAutoscalerFlags"] == ["--gpu-total=a100-sxm4-80gb:56:224", "--gpu-total=h100-sxm5-80gb:32:128"]
    assert doc["pools"]["ts"]["autoScalingGroupTags"]["tags"]["resources/nvidia.com/gpu"] == "32"


@pytest.mark.parametrize(("kubernetes", "label"), [("1.31", "accelerator"),
                                                   ("1.32", "kubernetes.azure.com/accelerator")])
def test_azure_label_follows_the_cluster_autoscaler_release(tmp_path: Path, kubernetes: str, label: str) -> None:
    """AKS sets the label (cluster-autoscaler's Azure template writes it as "nvidia"); the scale set's tags carry
    the pool's labels, taints and resources with "/" written "_"."""
    plan = compile_dir(write_fleet(tmp_path, [cluster("c", kubernetes={"version": kubernetes}, pools=[
        pool("a100", product="A100-SXM4-80GB", mig=MIG, taints=[{"key": "acme.example/gpu_x", "effect": "NoSchedule"}],
             autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "azure", "min": 0, "max": 2}),
        pool("h100", autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "azure", "min": 1, "max": 2}),
    ])])).clusters[0]
    found = plan.files["clusters/c/autoscaling.yaml"]
    assert isinstance(found, YamlFile)
    doc = found.documents[0]
    whole, mixed = doc["pools"]["h100"], doc["pools"]["a100"]
    assert whole["gpuLabel"] == mixed["gpuLabel"] == label
    assert label not in whole["nodeGroupTemplate"]["labels"]
    assert doc["clusterAutoscalerFlags"] == ["--gpu-total=nvidia:8:16"]
    assert mixed["scaleSetTags"] == {"prefix": "k8s.io_cluster-autoscaler_node-template_", "tags": {
        "label_acme.example_gpu-pool": "a100",
        "label_nvidia.com_mig.config": "custom-a100",
        "taint_acme.example_gpu~2x": ":NoSchedule",
        "resources_nvidia.com_gpu": "0",
        "resources_nvidia.com_mig-1g.10gb": "28",
        "resources_nvidia.com_mig-3g.40gb": "8",
    }}
    assert "GS248" in mixed["readinessGate"]


def test_gke_sets_its_own_label_and_no_gpu_total(tmp_path: Path) -> None:
    doc = _autoscaling(tmp_path, pool("gpu", autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "gce",
                                                          "min": 1, "max": 4}))
    assert doc is not None
    entry = doc["pools"]["gpu"]
    assert entry["gpuLabel"] == "cloud.google.com/gke-accelerator"
    assert "cloud.google.com/gke-accelerator" not in entry["nodeGroupTemplate"]["labels"]
    assert "GKE sets" in entry["readinessGate"] and "autoScalingGroupTags" not in entry
    assert "clusterAutoscalerFlags" not in doc


def test_karpenter_gets_nodepool_fields_and_only_startup_taints_someone_removes(tmp_path: Path) -> None:
    doc = _autoscaling(tmp_path, pool("gpu", taints=[{"key": "acme.example/gpu", "effect": "NoSchedule"}],
                                      autoscaling={"autoscaler": "karpenter", "min": 0, "max": 5, "startupTaints": [
                                          {"key": "acme.example/not-ready", "removedBy": "node-readiness-controller"},
                                          {"key": "acme.example/stranded"}]}))
    assert doc is not None
    entry = doc["pools"]["gpu"]
    assert entry["nodePoolLimits"] == {"nvidia.com/gpu": "40"}
    spec = entry["nodePoolTemplate"]["spec"]
    assert spec["taints"] == [{"key": "acme.example/gpu", "effect": "NoSchedule"}]
    assert spec["startupTaints"] == [{"key": "acme.example/not-ready", "effect": "NoSchedule"}]
    assert "registered" in entry["readinessGate"] and "node-readiness-controller" in entry["readinessGate"]


def test_karpenter_gets_a_node_overlay_for_what_no_instance_type_offers(tmp_path: Path) -> None:
    doc = _autoscaling(tmp_path, pool("a100", product="A100-SXM4-80GB", mig=MIG,
                                      autoscaling={"autoscaler": "karpenter", "min": 0, "max": 3,
                                                   "nodeOverlay": True}))
    assert doc is not None
    entry = doc["pools"]["a100"]
    assert entry["nodeOverlay"] == {
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "gpuspec-c-a100"},
        "spec": {"requirements": [{"key": "acme.example/gpu-pool", "operator": "In", "values": ["a100"]}],
                 "capacity": {"nvidia.com/mig-1g.10gb": "28", "nvidia.com/mig-3g.40gb": "8"}}}
    assert "v1.7.0" in entry["nodeOverlayNeeds"] and "NodeOverlay=true" in entry["nodeOverlayNeeds"]
    # the overlay's selector labels are the NodePool template's, so it matches the pool's instance types
    assert entry["nodePoolTemplate"]["metadata"]["labels"]["acme.example/gpu-pool"] == "a100"
    # limits on what the nodes advertise: nvidia.com/gpu would not bound nodes that advertise none
    assert entry["nodePoolLimits"] == {"nvidia.com/mig-1g.10gb": "84", "nvidia.com/mig-3g.40gb": "24"}
    assert "nvidia.com/mig-1g.10gb" in entry["readinessGate"]


def test_karpenter_gets_no_overlay_for_whole_gpus(tmp_path: Path) -> None:
    doc = _autoscaling(tmp_path, pool("gpu", autoscaling={"autoscaler": "karpenter", "min": 0, "max": 5}))
    assert doc is not None and "nodeOverlay" not in doc["pools"]["gpu"]


def test_no_startup_taint_without_a_remover_is_rendered(tmp_path: Path) -> None:
    doc = _autoscaling(tmp_path, pool("gpu", autoscaling={"autoscaler": "karpenter", "min": 0, "max": 5,
                                                          "startupTaints": [{"key": "acme.example/stranded"}]}))
    assert doc is not None
    assert "startupTaints" not in doc["pools"]["gpu"]["nodePoolTemplate"]["spec"]


@pytest.mark.skipif(not KUBECTL.exists(), reason="kubectl not installed (scripts/install-tools)")
def test_the_data_file_is_not_applied() -> None:
    """kustomize builds the example cluster's overlay without autoscaling.yaml (it is data, like node-labels)."""
    folder = REPO_ROOT / "rendered" / "clusters" / "train-east"
    assert (folder / "autoscaling.yaml").is_file()
    result = subprocess.run([str(KUBECTL), "kustomize", str(folder)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "autoScalingGroupTags" not in result.stdout and "readinessGate" not in result.stdout


def test_every_autoscaler_and_cloud_passes_default_yamllint(tmp_path: Path) -> None:
    """Long label keys, tag names and gate texts stay within yamllint's 80 columns."""
    long = "pool-with-a-name-of-thirty-chars"
    out = render_dir(write_fleet(tmp_path, [cluster("c", kubernetes={"version": "1.33"}, pools=[
        pool(f"az-{long}", product="A100-SXM4-80GB", mig=MIG,
             taints=[{"key": "acme.example/gpu_dedicated", "value": "a100", "effect": "NoSchedule"}],
             autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "azure", "min": 0, "max": 2}),
        pool("gce", product="A100-SXM4-80GB", mig=MIG,
             autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "gce", "min": 1, "max": 2}),
        pool("aws", product="A100-SXM4-80GB", mig=MIG,
             autoscaling={"autoscaler": "cluster-autoscaler", "cloud": "aws", "min": 0, "max": 3}),
        pool(f"k-{long}", product="A100-SXM4-80GB", mig=MIG,
             autoscaling={"autoscaler": "karpenter", "min": 0, "max": 3, "nodeOverlay": True}),
        pool("ts", sharing={"mode": "time-slicing", "replicas": 4, "justification": "t"},
             autoscaling={"autoscaler": "karpenter", "min": 0, "max": 3, "nodeOverlay": True}),
    ])]))
    assert problems({"autoscaling.yaml": out["clusters/c/autoscaling.yaml"]}) == []
