"""Generate a synthetic, valid fleet of N clusters × M pools for benchmarks.

Usage: python -m benchmarks.fleetgen OUT_DIR --clusters 1000 --pools 10
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
PRODUCTS = ["H100-SXM5-80GB", "A100-SXM4-80GB", "L40S", "L4", "T4"]


def pool(index: int) -> dict[str, object]:
    """One pool of the synthetic fleet; a few pools use MIG or time-slicing."""
    product = PRODUCTS[index % len(PRODUCTS)]
    spec: dict[str, object] = {
        "name": f"pool-{index}",
        "nodeSelector": {"acme.example/gpu-pool": f"pool-{index}", "topology.kubernetes.io/zone": "zone-a"},
        "nodes": 4 + index,
        "gpu": {"product": product, "count": 8 if product.startswith(("H100", "A100")) else 4},
        "os": {"distribution": "ubuntu", "version": "22.04", "kernel": "5.15.0-143-generic"},
        "driver": {"source": "operator"},
        "taints": [{"key": "acme.example/gpu", "value": f"pool-{index}", "effect": "NoSchedule"}],
        "wave": 1 if index == 0 else 2,
    }
    if product == "A100-SXM4-80GB":
        spec["mig"] = {"strategy": "single", "layout": "all-1g.10gb"}
    if product == "L40S":
        spec["sharing"] = {"mode": "time-slicing", "replicas": 4, "justification": "Stateless inference replicas."}
    return spec


def cluster(index: int, pools: int) -> dict[str, object]:
    """One synthetic cluster; every third is air-gapped and uses Flux."""
    air_gapped = index % 3 == 0
    doc: dict[str, object] = {
        "apiVersion": "gpuspec.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": f"cluster-{index:04d}", "labels": {"env": "prod", "region": f"r{index % 7}"}},
        "kubernetes": {"version": "1.34", "distribution": "upstream", "runtime": "containerd"},
        "operator": {"channel": "stable", "namespace": "gpu-operator"},
        "gitops": {"tool": "flux"} if air_gapped else {"tool": "argocd", "argocd": {"project": "gpu-platform"}},
        "rollout": {
            "wave": 1 + index % 3, "canaryPool": "pool-0", "maxParallelUpgrades": 1, "maxUnavailable": "10%",
            "drain": {"enable": True, "timeoutSeconds": 600}, "podDeletion": {"timeoutSeconds": 300},
        },
        "pools": [pool(i) for i in range(pools)],
        "tenants": [{"name": "team-a", "namespaces": ["team-a"], "gpuQuota": 64, "pools": ["pool-0", "pool-1"]}],
    }
    if air_gapped:
        doc["mirror"] = "dc-north"
    return doc


def generate(out: Path, clusters: int, pools: int) -> Path:
    """Write fleet/ (fleet.yaml from the example fleet plus synthetic clusters) and policies/ under ``out``."""
    fleet = out / "fleet"
    if fleet.exists():
        shutil.rmtree(fleet)
    (fleet / "clusters").mkdir(parents=True)
    shutil.copy(REPO / "fleet" / "fleet.yaml", fleet / "fleet.yaml")
    if (out / "policies").exists():
        shutil.rmtree(out / "policies")
    shutil.copytree(REPO / "policies", out / "policies")
    for i in range(clusters):
        doc = cluster(i, pools)
        (fleet / "clusters" / f"cluster-{i:04d}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return fleet


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--pools", type=int, default=10)
    args = parser.parse_args()
    print(generate(args.out, args.clusters, args.pools))


if __name__ == "__main__":
    main()
