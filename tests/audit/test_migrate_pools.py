"""`gpuspec migrate` batches per pool and answers for every node audit flags.

An adopted kubeadm cluster: a 2-node L40S pool configured by hand, a 3-node MIG pool whose third node's MIG
reconfiguration failed, and an H100 pool with a kernel-bumped node, a node whose DCGM exporter is switched off by
label and a node with a host-installed driver.  The procedure never takes more nodes of a pool than its
maxUnavailable (less those already out of service), never a whole pool; every node audit names is migrated or
listed as left out with the reason; each rollback sets every label the procedure touched back as it was.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

from audit.audit_cli import run_gpuspec

FIXTURES = Path(__file__).parent / "fixtures"

CLUSTER = """\
apiVersion: gpuspec.io/v1alpha1
kind: Cluster
metadata:
  name: dc1
kubernetes:
  version: "1.33"
operator:
  version: v26.7.0
gitops:
  tool: argocd
rollout:
  canaryPool: l40s
  maxUnavailable: 25%
  drain:
    enable: true
pools:
  - name: l40s
    nodeSelector:
      acme.example/gpu-pool: l40s
    nodes: 2
    gpu: {product: L40S, count: 4}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
    driver: {version: 580.95.05}
    wave: 1
  - name: a100-mig
    nodeSelector:
      acme.example/gpu-pool: a100-mig
    nodes: 3
    gpu: {product: A100-SXM4-80GB, count: 8}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
    driver: {version: 580.95.05}
    mig:
      strategy: mixed
      custom:
        - devices: [0, 1, 2, 3]
          profiles: {1g.10gb: 7}
        - devices: [4, 5, 6, 7]
          profiles: {3g.40gb: 2}
    wave: 2
  - name: h100
    nodeSelector:
      acme.example/gpu-pool: h100
    nodes: 4
    gpu: {product: H100-SXM5-80GB, count: 8}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
    driver: {version: 580.95.05}
    wave: 2
"""


def _template(name: str) -> dict[str, Any]:
    doc = json.loads((FIXTURES / "nodes" / "healthy.json").read_text(encoding="utf-8"))
    node: dict[str, Any] = copy.deepcopy(next(i for i in doc["items"] if i["metadata"]["name"] == name))
    node["spec"].pop("taints", None)
    return node


def _node(template: str, name: str, pool: str, **labels: str | None) -> dict[str, Any]:
    node = _template(template)
    node["metadata"]["name"] = name
    meta = node["metadata"]["labels"]
    meta.pop("acme.example/accelerator", None)
    meta.update({"kubernetes.io/hostname": name, "acme.example/gpu-pool": pool})
    for key, value in labels.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    return node


def _l40s(name: str, **labels: str | None) -> dict[str, Any]:
    node = _node("gpu-l40s-0", name, "l40s", **labels)
    meta = node["metadata"]["labels"]
    meta["nvidia.com/gpu.product"] = "NVIDIA-L40S"
    for key in ("nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy"):
        meta.pop(key, None)
    node["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    node["status"]["capacity"]["nvidia.com/gpu"] = "4"
    return node


def _export() -> dict[str, Any]:
    items = [
        _l40s("l40s-0", **{"acme.example/rack": "r1"}),
        _l40s("l40s-1", **{"acme.example/rack": "r2"}),
        _node("gpu-a100-0", "a100-0", "a100-mig", **{"acme.example/owner": "vision"}),
        _node("gpu-a100-0", "a100-1", "a100-mig", **{"acme.example/owner": "vision"}),
        _node("gpu-a100-0", "a100-2", "a100-mig", **{"nvidia.com/mig.config.state": "failed"}),
        _node("gpu-h100-0", "h100-0", "h100"),
        _node("gpu-h100-0", "h100-1", "h100", **{"nvidia.com/gpu.deploy.dcgm-exporter": "false"}),
        _node("gpu-h100-0", "h100-2", "h100", **{"nvidia.com/gpu.deploy.driver": "pre-installed"}),
        _node("gpu-h100-0", "h100-3", "h100"),
    ]
    bumped = next(i for i in items if i["metadata"]["name"] == "h100-0")
    bumped["status"]["nodeInfo"]["kernelVersion"] = "5.15.0-151-generic"
    bumped["metadata"]["labels"]["feature.node.kubernetes.io/kernel-version.full"] = "5.15.0-151-generic"
    return {"apiVersion": "v1", "kind": "List", "items": items}


NAMES = ["l40s-0", "l40s-1", "a100-0", "a100-1", "a100-2", "h100-0", "h100-1", "h100-2", "h100-3"]
POOL_OF = {n: n.rsplit("-", 1)[0].replace("a100", "a100-mig") for n in NAMES}


def _repo(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "fleet", tmp_path / "fleet")
    (tmp_path / "fleet" / "clusters" / "dc1.yaml").write_text(CLUSTER, encoding="utf-8")
    (tmp_path / "nodes.json").write_text(json.dumps(_export(), indent=2), encoding="utf-8")
    return tmp_path


def _migrate(root: Path, *extra: str) -> str:
    result = run_gpuspec("migrate", "--cluster", "dc1", "--nodes", "nodes.json", *extra, "fleet", cwd=root)
    assert result.code == 0, result.out + result.err
    return result.out


def _block(out: str, node: str) -> str:
    start = out.index(f"  node {node} (pool")
    end = out.find("\n  node ", start + 1)
    return out[start:end if end != -1 else len(out)]


def test_batches_never_exceed_the_pool_budget_nor_take_a_whole_pool(tmp_path: Path) -> None:
    out = _migrate(_repo(tmp_path))
    assert "pool l40s: at most 1 node(s) at a time (maxUnavailable 25% of 2 GPU node(s) = 1, rounded up)" in out
    assert ("pool a100-mig: no node now (maxUnavailable 25% of 3 GPU node(s) = 1, rounded up; less 1 out of "
            "service (a100-2))") in out
    assert "pool h100: at most 1 node(s) at a time (maxUnavailable 25% of 4 GPU node(s) = 1)" in out
    batches = re.findall(r"^batch \d+ \(pool (\S+)\): (.*)$", out, re.M)
    assert batches == [("l40s", "l40s-0"), ("l40s", "l40s-1"), ("h100", "h100-1"), ("h100", "h100-2")]
    sizes = {"l40s": 2, "a100-mig": 3, "h100": 4}
    for pool, names in batches:
        members = names.split(", ")
        assert all(POOL_OF[n] == pool for n in members)
        assert len(members) < sizes[pool]


def test_every_flagged_node_has_steps_or_a_reason(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = _migrate(root)
    audit = run_gpuspec("audit", "--cluster", "dc1", "--nodes", "nodes.json", "--format", "json", "fleet", cwd=root)
    findings = audit.json()["findings"]
    flagged = {n for n in NAMES for f in findings if re.search(rf"\b{re.escape(n)}\b", f["message"])}
    assert {"h100-0", "h100-1", "h100-2", "a100-2", "l40s-0", "a100-0"} <= flagged, flagged
    batched = {n for line in re.findall(r"^batch \d+ \(pool \S+\): (.*)$", out, re.M) for n in line.split(", ")}
    left = dict(re.findall(r"^  node (\S+) \(pool \S+\): (.*)$", out, re.M))
    assert flagged <= batched | set(left), flagged - batched - set(left)
    assert not batched & set(left)
    assert "it runs kernel 5.15.0-151-generic, the pool declares 5.15.0-143-generic" in left["h100-0"]
    assert "(GS794): fix this first" in left["h100-0"]
    assert "its MIG configuration failed (nvidia.com/mig.config.state=failed) (GS780)" in left["a100-2"]
    for waiting in ("a100-0", "a100-1"):
        assert left[waiting].startswith("waits: pool a100-mig has no room to take a node out")
        assert "migrate it once a100-2 is back in service" in left[waiting]
    assert "h100-3" not in out  # nothing to migrate and nothing audit flags


def test_operand_switches_are_removed_and_every_label_restored(tmp_path: Path) -> None:
    out = _migrate(_repo(tmp_path))
    dcgm = _block(out, "h100-1")
    assert "why: operands switched off by label: nvidia.com/gpu.deploy.dcgm-exporter=false" in dcgm
    assert "kubectl label node h100-1 nvidia.com/gpu.deploy.dcgm-exporter-" in dcgm
    assert ("kubectl cordon h100-1 && kubectl label node h100-1 nvidia.com/gpu.deploy.dcgm-exporter=false "
            "--overwrite && kubectl uncordon h100-1") in dcgm
    host = _block(out, "h100-2")
    assert "kubectl label node h100-2 nvidia.com/gpu.deploy.driver=true --overwrite" in host
    assert ("kubectl cordon h100-2 && kubectl label node h100-2 nvidia.com/gpu.deploy.driver=pre-installed "
            "--overwrite && kubectl uncordon h100-2") in host
    rack = _block(out, "l40s-0")
    assert "kubectl label node l40s-0 acme.example/rack-" in rack
    assert "kubectl label node l40s-0 acme.example/rack=r1 --overwrite" in rack
    # Every rollback restores labels with one --overwrite command: none sets a label without it.
    for rollback in re.findall(r"^       (kubectl cordon .*)$", out, re.M):
        for command in rollback.split(" && "):
            assert not command.startswith("kubectl label") or command.endswith(" --overwrite"), command


def test_markdown_lists_the_left_out_nodes(tmp_path: Path) -> None:
    text = _migrate(_repo(tmp_path), "--format", "markdown")
    assert "### Batch 1 (pool `l40s`): l40s-0" in text
    assert "### Left out (4 node(s)), because:" in text
    assert "- `a100-2` (pool `a100-mig`): its MIG configuration failed" in text
