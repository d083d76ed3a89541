"""Under the GPU stack: OS image, kubelet and runtime parsing, hand-set labels, an export of another cluster."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from audit.audit_cli import run_gpuspec

from gpuspec.audit.host import controller_label, kubelet_minor, os_image_problem, runtime_name

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(("image", "distribution", "version", "problem"), [
    ("Ubuntu 22.04.5 LTS", "ubuntu", "22.04", None),
    ("Ubuntu 24.04.1 LTS", "ubuntu", "22.04", "another version"),
    ("Red Hat Enterprise Linux 9.4 (Plow)", "rhel", "9.4", None),
    ("Red Hat Enterprise Linux 9.6 (Plow)", "rhel", "9.4", "another version"),
    ("Red Hat Enterprise Linux CoreOS 418.94.202410090804-0", "rhel", "9.4", "another distribution"),
    ("Red Hat Enterprise Linux CoreOS 418.94.202410090804-0", "rhcos", "4.18", None),
    ("Amazon Linux 2023.5.20240819", "amazonlinux", "2023", None),
    ("Amazon Linux 2", "amazonlinux", "2023", "another version"),
    ("SUSE Linux Enterprise Server 15 SP5", "sles", "15.5", None),
    ("SUSE Linux Enterprise Server 15 SP6", "sles", "15.5", "another version"),
    ("Rocky Linux 9.4 (Blue Onyx)", "ubuntu", "22.04", "another distribution"),
    ("", "ubuntu", "22.04", None),
])
def test_os_image(image: str, distribution: str, version: str, problem: str | None) -> None:
    assert os_image_problem(image, distribution, version) == problem


def test_kubelet_and_runtime_parsing() -> None:
    assert kubelet_minor("v1.31.4-eks-a737599") == "1.31"
    assert kubelet_minor("v1.30.14+k3s1") == "1.30"
    assert kubelet_minor("unknown") is None
    assert runtime_name("containerd://1.7.22") == "containerd"
    assert runtime_name("cri-o://1.31.0") == "cri-o"
    assert runtime_name("") is None


@pytest.mark.parametrize(("key", "controller"), [
    ("feature.node.kubernetes.io/pci-10de.present", True),
    ("nvidia.com/gpu.product", True),
    ("node.kubernetes.io/instance-type", True),
    ("kubernetes.io/hostname", True),
    ("eks.amazonaws.com/nodegroup", True),
    ("cloud.google.com/gke-nodepool", True),
    ("kubernetes.azure.com/agentpool", True),
    ("karpenter.sh/nodepool", True),
    ("cluster.x-k8s.io/deployment-name", True),
    ("team", False),
    ("acme.example/legacy-driver", False),
    ("notkubernetes.io/x", False),
])
def test_controller_labels(key: str, controller: bool) -> None:
    assert controller_label(key) is controller


def _audit(tmp_path: Path, nodes: dict[str, object]) -> tuple[int, dict[str, object]]:
    shutil.copytree(FIXTURES / "fleet", tmp_path / "fleet")
    (tmp_path / "nodes.json").write_text(json.dumps(nodes), encoding="utf-8")
    result = run_gpuspec("audit", "--cluster", "lab", "--nodes", "nodes.json", "--format", "json", "fleet",
                         cwd=tmp_path)
    return result.code, result.json()


def test_export_of_another_cluster_fails(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "nodes" / "healthy.json").read_text(encoding="utf-8"))
    for item in doc["items"]:
        labels = item["metadata"]["labels"]
        for key in [k for k in labels if k.startswith("acme.example/")]:
            labels["other.example/" + key.split("/", 1)[1]] = labels.pop(key)
    code, report = _audit(tmp_path, doc)
    assert code == 1
    ids = [f["ruleId"] for f in report["findings"]]  # type: ignore[index]
    assert "GS799" in ids and "GS794" not in ids and "GS798" not in ids


def test_empty_export_fails(tmp_path: Path) -> None:
    code, report = _audit(tmp_path, {"apiVersion": "v1", "kind": "List", "items": []})
    assert code == 1
    assert "GS799" in [f["ruleId"] for f in report["findings"]]  # type: ignore[index]


def test_healthy_export_has_no_host_findings(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "nodes" / "healthy.json").read_text(encoding="utf-8"))
    code, report = _audit(tmp_path, doc)
    assert code == 0
    assert not [f for f in report["findings"] if f["ruleId"] in ("GS794", "GS795", "GS796", "GS797", "GS798")]  # type: ignore[index]
