"""`gpuspec migrate` on a realistic brownfield export: EKS nodegroups, a host-installed driver, hand labels,
a node without operator labels and an unmanaged (hybrid) pool."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from audit.audit_cli import run_gpuspec

FIXTURES = Path(__file__).parent / "fixtures"

TRAIN = """\
apiVersion: gpuspec.io/v1alpha1
kind: Cluster
metadata:
  name: train
kubernetes:
  version: "1.33"
operator:
  version: v26.7.0
gitops:
  tool: argocd
rollout:
  maxUnavailable: 40%
  drain:
    enable: true
    force: true
    timeoutSeconds: 600
    deleteEmptyDir: true
    podSelector: app!=critical
pools:
  - name: h100
    nodeSelector:
      eks.amazonaws.com/nodegroup: gpu-h100
    nodes: 5
    gpu:
      product: H100-SXM5-80GB
      count: 8
    os:
      distribution: ubuntu
      version: "22.04"
    driver:
      version: 580.95.05
    taints:
      - key: nvidia.com/gpu
        value: "true"
        effect: NoSchedule
  - name: legacy
    nodeSelector:
      eks.amazonaws.com/nodegroup: gpu-legacy
    nodes: 2
    managed: false
    gpu:
      product: H100-SXM5-80GB
      count: 8
    os:
      distribution: ubuntu
      version: "22.04"
    driver:
      source: host
"""


def _h100_template() -> dict[str, Any]:
    doc = json.loads((FIXTURES / "nodes" / "healthy.json").read_text(encoding="utf-8"))
    node: dict[str, Any] = next(i for i in doc["items"] if i["metadata"]["name"] == "gpu-h100-0")
    del node["metadata"]["labels"]["acme.example/gpu-pool"]
    node["spec"]["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    return node


def _node(name: str, nodegroup: str, **labels: str | None) -> dict[str, Any]:
    node = copy.deepcopy(_h100_template())
    node["metadata"]["name"] = name
    meta = node["metadata"]["labels"]
    meta["kubernetes.io/hostname"] = name
    meta["eks.amazonaws.com/nodegroup"] = nodegroup
    meta["eks.amazonaws.com/capacityType"] = "ON_DEMAND"
    for key, value in labels.items():
        key = key.replace("__", "/").replace("_", "-").replace("-dot-", ".")
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    return node


def _without_deploy_labels(node: dict[str, Any]) -> dict[str, Any]:
    labels = node["metadata"]["labels"]
    for key in [k for k in labels if k.startswith("nvidia.com/gpu.deploy.")]:
        del labels[key]
    return node


def _export() -> dict[str, Any]:
    preinstalled = _node("ip-10-0-1-11", "gpu-h100", team="research")
    preinstalled["metadata"]["labels"]["nvidia.com/gpu.deploy.driver"] = "pre-installed"
    bare = _without_deploy_labels(_node("ip-10-0-1-12", "gpu-h100"))
    hand = _node("ip-10-0-1-13", "gpu-h100")
    hand["metadata"]["labels"]["acme.example/driver"] = "535"
    legacy = _without_deploy_labels(_node("ip-10-0-2-21", "gpu-legacy"))
    legacy["metadata"]["labels"]["nvidia.com/gpu.deploy.operands"] = "false"
    legacy_too = copy.deepcopy(legacy)
    legacy_too["metadata"]["name"] = legacy_too["metadata"]["labels"]["kubernetes.io/hostname"] = "ip-10-0-2-22"
    items = [preinstalled, bare, hand, _node("ip-10-0-1-14", "gpu-h100"), _node("ip-10-0-1-15", "gpu-h100"), legacy,
             legacy_too]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _repo(tmp_path: Path, export: dict[str, Any]) -> Path:
    shutil.copytree(FIXTURES / "fleet", tmp_path / "fleet")
    (tmp_path / "fleet" / "clusters" / "train.yaml").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "nodes.json").write_text(json.dumps(export, indent=2), encoding="utf-8")
    return tmp_path


def test_migrate_batches_order_and_rollback(tmp_path: Path) -> None:
    root = _repo(tmp_path, _export())
    result = run_gpuspec("migrate", "--cluster", "train", "--nodes", "nodes.json", "fleet", cwd=root)
    assert result.code == 0, result.err
    out = result.out
    # Per pool: 40% of h100's 5 GPU nodes is 2; 40% of legacy's 2 is 0.8, rounded up to 1 (never both).
    assert "pool h100: at most 2 node(s) at a time (maxUnavailable 40% of 5 GPU node(s) = 2)" in out
    assert "pool legacy: at most 1 node(s) at a time (maxUnavailable 40% of 2 GPU node(s) = 1, rounded up)" in out
    batches = re.findall(r"^batch \d+ (.*)$", out, re.M)
    assert batches == ["(pool h100): ip-10-0-1-11, ip-10-0-1-12", "(pool h100): ip-10-0-1-13",
                       "(pool legacy): ip-10-0-2-21", "(pool legacy): ip-10-0-2-22"]
    assert "ip-10-0-1-14" not in out and "ip-10-0-1-15" not in out  # already owned by the operator and the spec
    first = out[out.index("node ip-10-0-1-11"):out.index("node ip-10-0-1-12")]
    order = ["kubectl cordon ip-10-0-1-11",
             "kubectl drain ip-10-0-1-11 --ignore-daemonsets --timeout=600s --delete-emptydir-data --force "
             "--pod-selector='app!=critical'",
             "kubectl get node ip-10-0-1-11 -o jsonpath='{.metadata.labels}' > "
             "gpuspec-migrate-ip-10-0-1-11.labels.json",
             "kubectl label node ip-10-0-1-11 team-",
             "[HOST STEP: run on the node]",
             "sudo apt-get purge -y '^nvidia-.*' '^libnvidia-.*'",
             "sudo reboot",
             "kubectl label node ip-10-0-1-11 nvidia.com/gpu.deploy.driver=true --overwrite",
             "kubectl -n gpu-operator wait pod -l app=nvidia-operator-validator --field-selector "
             "spec.nodeName=ip-10-0-1-11 --for=condition=Ready",
             "kubectl run gpuspec-migrate-ip-10-0-1-11",
             '"limits":{"nvidia.com/gpu":1}',
             "kubectl uncordon ip-10-0-1-11"]
    positions = [first.index(text) for text in order]
    assert positions == sorted(positions)
    # One label command restores every label the procedure touched, as it was, over what the procedure set.
    assert ("kubectl cordon ip-10-0-1-11 && kubectl label node ip-10-0-1-11 team=research "
            "nvidia.com/gpu.deploy.driver=pre-installed --overwrite && kubectl uncordon ip-10-0-1-11") in first
    hand = out[out.index("node ip-10-0-1-13"):out.index("node ip-10-0-2-21")]
    assert "kubectl label node ip-10-0-1-13 acme.example/driver-" in hand
    assert "HOST STEP" not in hand  # the operator already installs its driver there
    assert ("kubectl cordon ip-10-0-1-13 && kubectl label node ip-10-0-1-13 acme.example/driver=535 --overwrite && "
            "kubectl uncordon ip-10-0-1-13") in hand
    legacy = out[out.index("node ip-10-0-2-21"):out.index("node ip-10-0-2-22")]
    assert "managed: false" in legacy
    assert "HOST STEP" not in legacy and "nvidia-operator-validator" not in legacy  # the operator stays away


def test_migrate_markdown(tmp_path: Path) -> None:
    root = _repo(tmp_path, _export())
    result = run_gpuspec("migrate", "--cluster", "train", "--nodes", "nodes.json", "--format", "markdown",
                         "--output", "migrate.md", "fleet", cwd=root)
    assert result.code == 0, result.err
    text = (root / "migrate.md").read_text(encoding="utf-8")
    assert text.startswith("## Node-by-node migration: cluster `train`")
    assert "### Batch 1 (pool `h100`): ip-10-0-1-11, ip-10-0-1-12" in text
    assert "- pool h100: at most 2 node(s) at a time" in text
    assert "**host step, on the node itself**" in text


def test_migrate_unknown_cluster(tmp_path: Path) -> None:
    root = _repo(tmp_path, _export())
    result = run_gpuspec("migrate", "--cluster", "nope", "--nodes", "nodes.json", "fleet", cwd=root)
    assert result.code == 2
    assert "cluster 'nope' is not in fleet" in result.err


def test_migrate_export_of_another_cluster(tmp_path: Path) -> None:
    export = json.loads((FIXTURES / "nodes" / "healthy.json").read_text(encoding="utf-8"))
    root = _repo(tmp_path, export)
    result = run_gpuspec("migrate", "--cluster", "train", "--nodes", "nodes.json", "fleet", cwd=root)
    assert result.code == 1
    assert "GS799" in result.err and result.out == ""


def test_migrate_bad_json(tmp_path: Path) -> None:
    root = _repo(tmp_path, _export())
    (root / "nodes.json").write_text("{\n  \"items\": [\n", encoding="utf-8")
    result = run_gpuspec("migrate", "--cluster", "train", "--nodes", "nodes.json", "fleet", cwd=root)
    assert result.code == 2
    assert "nodes.json:3:" in result.err


def test_host_driver_pool_keeps_its_driver(tmp_path: Path) -> None:
    """A managed pool that declares driver.source host: a pre-installed driver is the spec, not a migration."""
    root = _repo(tmp_path, _export())
    train = root / "fleet" / "clusters" / "train.yaml"
    train.write_text(TRAIN.replace("      version: 580.95.05\n", "      source: host\n", 1), encoding="utf-8")
    result = run_gpuspec("migrate", "--cluster", "train", "--nodes", "nodes.json", "fleet", cwd=root)
    assert result.code == 0, result.err
    first = result.out[result.out.index("node ip-10-0-1-11"):result.out.index("node ip-10-0-1-12")]
    assert "why: hand-set labels: team=research" in first  # not the pre-installed driver
    assert "HOST STEP" not in result.out
    # no operator labels at all: its GPUs come from a device plugin outside the operator
    assert "ip-10-0-1-12 (pool h100)\n    why: advertises GPUs without the operator's device plugin" in result.out


@pytest.mark.parametrize(("kubernetes", "os_spec", "os_image", "wanted", "absent"), [
    ('version: "1.33"', 'distribution: amazonlinux\n      version: "2"', "Amazon Linux 2",
     "sudo yum remove -y 'nvidia-*' 'kmod-nvidia*' 'libnvidia-*'", "dnf"),
    ('version: "1.33"', 'distribution: amazonlinux\n      version: "2023"', "Amazon Linux 2023.8.20250808",
     "sudo dnf remove -y 'nvidia-*' 'kmod-nvidia*' 'libnvidia-*'", "yum"),
    ('version: "1.33"\n  distribution: eks', 'distribution: ubuntu\n      version: "22.04"', None,
     "# eks: set the node group's AMI type to one without the NVIDIA driver", "apt-get purge"),
])
def test_host_driver_removal_follows_the_os_and_the_node_group_image(tmp_path: Path, kubernetes: str, os_spec: str,
                                                                       os_image: str | None, wanted: str,
                                                                       absent: str) -> None:
    """The package manager of the OS version removes the host driver; on a cloud node group a package removal
    would last only until the node is replaced, so the step is the node group's image instead."""
    export = _export()
    if os_image is not None:  # the nodes run the OS the spec declares (another OS is left out: GS795)
        for item in export["items"]:
            item["status"]["nodeInfo"]["osImage"] = os_image
    root = _repo(tmp_path, export)
    spec = root / "fleet" / "clusters" / "train.yaml"
    text = spec.read_text(encoding="utf-8").replace('version: "1.33"', kubernetes, 1)
    text = text.replace('distribution: ubuntu\n      version: "22.04"', os_spec, 1)
    spec.write_text(text, encoding="utf-8")
    result = run_gpuspec("migrate", "--cluster", "train", "--nodes", "nodes.json", "fleet", cwd=root)
    assert result.code == 0, result.out + result.err
    first = result.out[result.out.index("node ip-10-0-1-11"):result.out.index("node ip-10-0-1-12")]
    assert wanted in first and absent not in first
    assert "kubectl label node ip-10-0-1-11 nvidia.com/gpu.deploy.driver=true --overwrite" in first
