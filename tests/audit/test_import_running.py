"""What `gpuspec import` reads from the exports: release, driver, operands, mirror; distribution and OS."""

from __future__ import annotations

import json
from typing import Any

import pytest
from audit_cli import HERE

from gpuspec.audit.draft import _distribution, os_from_image
from gpuspec.audit.inventory import parse_nodes
from gpuspec.audit.running import read_cluster_policies, read_helm_release, read_helm_values, running_state
from gpuspec.errors import GpuspecError

EXPORTS = HERE / "fixtures" / "brownfield"


def test_cluster_policy_and_helm_give_the_running_configuration() -> None:
    specs, resources = read_cluster_policies((EXPORTS / "clusterpolicies.json").read_text(), "cp.json")
    assert [r.kind for r in resources] == ["ClusterPolicy"]
    values = read_helm_values((EXPORTS / "helm-values.json").read_text(), "values.json")
    state = running_state(specs, values, None)
    assert state.operator_version is not None
    assert (state.operator_version.value, state.operator_version.origin) == (
        "v24.9.2", "ClusterPolicy spec.validator.version")
    assert state.driver_version is not None and state.driver_version.value == "550.127.08"
    # v24.9.2's chart has no driver.kernelModuleType: the proprietary modules of useOpenKernelModules: false
    assert state.kernel_module_type is not None and (state.kernel_module_type.value,
                                                     state.kernel_module_type.origin) == (
        "proprietary", "ClusterPolicy driver.useOpenKernelModules")
    assert state.mig_strategy is not None and state.mig_strategy.value == "single"
    assert {k: r.value for k, r in state.operands.items()} == {
        "dcgmExporter": True, "cdi": False, "gds": False, "gdrcopy": False, "rdma": False,
        "sandboxWorkloads": False, "nfd": True}
    assert state.operands["nfd"].origin == "helm values nfd.enabled"  # not in a ClusterPolicy
    assert {k: r.value for k, r in state.upgrade.items()} == {
        "autoUpgrade": True, "maxParallelUpgrades": 1, "maxUnavailable": "25%"}
    assert state.repositories == {} and state.pull_secrets == []


def test_mirror_repositories_and_pull_secrets_are_read() -> None:
    spec: dict[str, Any] = {"driver": {"repository": "registry.corp.example/nvidia", "version": "570.172.08",
                                       "imagePullSecrets": ["corp-pull"]},
                            "validator": {"repository": "registry.corp.example/nvidia/cloud-native",
                                          "image": "gpu-operator-validator", "version": "v25.3.2"},
                            "toolkit": {"repository": "nvcr.io/nvidia/k8s"}}
    state = running_state([spec], None, None)
    assert state.repositories == {"driver": "registry.corp.example/nvidia",
                                  "validator": "registry.corp.example/nvidia/cloud-native"}
    assert state.pull_secrets == ["corp-pull"]
    assert state.operator_version is not None and state.operator_version.value == "v25.3.2"


def test_helm_list_chart_version_wins_and_yaml_is_read() -> None:
    text = "- name: gpu-operator\n  chart: gpu-operator-v25.10.1\n  app_version: v25.10.1\n"
    release = read_helm_release(text, "list.yaml")
    assert release is not None and release.value == "v25.10.1"
    assert read_helm_release(json.dumps([{"name": "x", "chart": "cert-manager-v1.15.0"}]), "l.json") is None
    with pytest.raises(GpuspecError, match=r"list.yaml:1:[0-9]+: invalid YAML"):
        read_helm_release("[unclosed", "list.yaml")


@pytest.mark.parametrize(("image", "expected"), [
    ("Ubuntu 22.04.5 LTS", ("ubuntu", "22.04")),
    ("Amazon Linux 2", ("amazonlinux", "2")),
    ("Amazon Linux 2023.6.20241010", ("amazonlinux", "2023")),
    ("Red Hat Enterprise Linux 9.4 (Plow)", ("rhel", "9.4")),
    ("Red Hat Enterprise Linux CoreOS 418.94.202410090804-0", ("rhcos", "418.94")),
    ("Bottlerocket OS 1.26.1 (aws-k8s-1.31-nvidia)", None),
])
def test_os_from_image(image: str, expected: tuple[str, str] | None) -> None:
    assert os_from_image(image) == expected


def _node(labels: dict[str, str], provider: str, kubelet: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": "n1", "labels": labels}, "spec": {"providerID": provider},
            "status": {"nodeInfo": {"kubeletVersion": kubelet, "osImage": "Ubuntu 22.04.5 LTS"}}}


@pytest.mark.parametrize(("labels", "provider", "kubelet", "expected"), [
    ({"eks.amazonaws.com/nodegroup": "g"}, "aws:///us-east-1a/i-1", "v1.31.2-eks-94953ac", "eks"),
    ({"cloud.google.com/gke-nodepool": "p"}, "gce://proj/us-central1-a/n1", "v1.31.5-gke.1023000", "gke"),
    ({"kubernetes.azure.com/agentpool": "gpu"}, "azure:///subscriptions/s/x", "v1.31.3", "aks"),
    ({"node.openshift.io/os_id": "rhcos"}, "", "v1.31.6", "openshift"),
    ({}, "rke2://n1", "v1.31.4+rke2r1", "rke2"),
    ({}, "k3s://n1", "v1.31.4+k3s1", "k3s"),
    ({}, "", "v1.31.4", None),
])
def test_distribution(labels: dict[str, str], provider: str, kubelet: str, expected: str | None) -> None:
    nodes = parse_nodes(json.dumps({"kind": "List", "items": [_node(labels, provider, kubelet)]}), "n.json")
    found = _distribution(nodes)
    assert (found[0] if found else None) == expected
