"""Build small fleets for render tests: the example fleet.yaml plus cluster documents made here."""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from gpuspec.loader.fleetload import load_fleet
from gpuspec.model.fleet import Fleet
from gpuspec.pipeline.render import expected_bytes
from gpuspec.render.compile import compile_fleet
from gpuspec.render.facts import release_facts
from gpuspec.render.filetree import RenderPlan
from gpuspec.render.inputs import read_input_digests

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FLEET = REPO_ROOT / "fleet"
EXAMPLE_POLICIES = REPO_ROOT / "policies"
#: GPU Operator releases whose real values.yaml and CRDs are in ../shared/upstream.
UPSTREAM_TAGS = ["v23.9.2", "v24.3.0", "v24.6.2", "v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0"]


def pool(name: str, product: str = "H100-SXM5-80GB", count: int = 8, **extra: Any) -> dict[str, Any]:
    """A pool document with sensible defaults; ``extra`` keys replace or add top-level fields."""
    doc: dict[str, Any] = {
        "name": name,
        "nodeSelector": {"acme.example/gpu-pool": name},
        "nodes": 2,
        "gpu": {"product": product, "count": count},
        "os": {"distribution": "ubuntu", "version": "22.04", "kernel": "5.15.0-143-generic"},
    }
    doc.update(copy.deepcopy(extra))
    return doc


def cluster(name: str, **extra: Any) -> dict[str, Any]:
    """A cluster document (online, Argo CD, one pool) with ``extra`` top-level fields replaced or added."""
    doc: dict[str, Any] = {
        "apiVersion": "gpuspec.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "kubernetes": {"version": "1.31"},
        "operator": {"version": "v26.7.0"},
        "gitops": {"tool": "argocd"},
        "pools": [pool("gpu")],
    }
    doc.update(copy.deepcopy(extra))
    return doc


TEST_POLICY = """apiVersion: gpuspec.io/v1alpha1
kind: PolicyPack
metadata:
  name: default
rules: {}
"""


def write_fleet(root: Path, clusters: list[dict[str, Any]], *, settings: dict[str, Any] | None = None) -> Path:
    """Write fleet/ (example fleet.yaml unless ``settings``) and policies/ under ``root``; return fleet/."""
    fleet_dir = root / "fleet"
    (fleet_dir / "clusters").mkdir(parents=True, exist_ok=True)
    if settings is None:
        shutil.copy(EXAMPLE_FLEET / "fleet.yaml", fleet_dir / "fleet.yaml")
    else:
        (fleet_dir / "fleet.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    if not (root / "policies").exists():
        # A fixed pack of the tests' own, so golden headers (input digests) do not follow the example policies.
        (root / "policies").mkdir()
        (root / "policies" / "default.yaml").write_text(TEST_POLICY)
    for doc in clusters:
        (fleet_dir / "clusters" / f"{doc['metadata']['name']}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return fleet_dir


def example_settings() -> dict[str, Any]:
    """The example fleet.yaml as data (to modify)."""
    data = yaml.safe_load((EXAMPLE_FLEET / "fleet.yaml").read_text())
    assert isinstance(data, dict)
    return data


def load(fleet_dir: Path) -> Fleet:
    """The typed fleet of ``fleet_dir`` (schema-valid, not checked against the matrix)."""
    result = load_fleet(fleet_dir)
    assert result.fleet is not None, result.findings
    return result.fleet


def compile_dir(fleet_dir: Path) -> RenderPlan:
    """Compile ``fleet_dir`` without the validate stage (for fleets built to exercise the renderer)."""
    return compile_fleet(load(fleet_dir), read_input_digests(fleet_dir, fleet_dir.parent / "policies"))


def render_dir(fleet_dir: Path) -> dict[str, bytes]:
    """The output bytes of ``fleet_dir`` (no validate stage)."""
    return expected_bytes(compile_dir(fleet_dir))


def two_driver_versions(tag: str) -> tuple[str, str]:
    """Two different full driver versions listed for release ``tag``."""
    facts = release_facts(tag)
    versions = [facts.driver_default] + [d.version for d in facts.drivers if d.version != facts.driver_default]
    assert len(versions) >= 2, tag
    return versions[0], versions[1]


def coverage_clusters(tag: str) -> list[dict[str, Any]]:
    """Clusters that together exercise every renderer branch at release ``tag``."""
    first, second = two_driver_versions(tag)
    everything = cluster(
        "everything",
        operator={"version": tag, "operands": {"rdma": True, "gds": True, "gdrcopy": True,
                                                "sandboxWorkloads": True}},
        rollout={"canaryPool": "mig", "maxUnavailable": "10%", "autoUpgrade": True,
                 "drain": {"enable": True, "timeoutSeconds": 600, "deleteEmptyDir": True},
                 "podDeletion": {"force": True},
                 "waitForCompletion": {"podSelector": "app=training", "timeoutSeconds": 60}},
        pools=[
            pool("mig", "A100-SXM4-80GB", mig={"strategy": "mixed", "custom": [
                {"devices": [0, 1, 2, 3], "profiles": {"1g.10gb": 7}}, {"devices": "all", "profiles": {"3g.40gb": 2}},
            ]}, devices={"rdma": True, "gds": True, "gdrcopy": True},
                 driver={"kernelModuleType": "open"},
                 taints=[{"key": "acme.example/gpu", "value": "mig", "effect": "NoSchedule"}]),
            pool("shared", "L40S", 4, sharing={"mode": "time-slicing", "replicas": 4, "justification": "test"},
                 driver={"kernelModuleType": "open"}, devices={"sandbox": True},
                 taints=[{"key": "acme.example/dedicated", "effect": "NoExecute"}]),
        ],
        tenants=[{"name": "t", "namespaces": ["t-a"], "gpuQuota": 8, "migQuota": {"mig-1g.10gb": 14},
                  "pools": ["mig", "shared"], "priorityClass": "p"}],
        priorityClasses=[{"name": "p", "value": 1000, "description": "test class"}],
    )
    airgap = cluster(
        "airgap",
        operator={"version": tag},
        mirror="dc-north",
        gitops={"tool": "flux", "flux": {"source": "fleet", "kubeConfigSecret": "airgap-kubeconfig"}},
        pools=[
            pool("old", "T4", 4, driver={"version": second}),
            pool("new", "L40S", 4, driver={"version": first}),
            pool("pre", "L40S", 4, driver={"source": "precompiled", "branch": first.split(".")[0]}),
            pool("mps", "L4", 4, driver={"version": first},
                 sharing={"mode": "mps", "replicas": 2, "justification": "test"}),
            pool("host", "L4", 4, driver={"source": "host"}),
        ],
    )
    host = cluster("host-only", operator={"version": tag, "operands": {"nfd": False, "cdi": False,
                                                                      "dcgmExporter": {"enabled": False},
                                                                      "alerts": False}},
                   pools=[pool("h", driver={"source": "host"}, mig={"strategy": "single", "layout": "all-1g.10gb"})])
    argo_airgap = cluster("argo-airgap", operator={"version": tag}, mirror="dc-north",
                          gitops={"tool": "argocd", "argocd": {"destination": {"server": "https://10.0.0.1:6443"}}})
    flux_online = cluster("flux-online", operator={"version": tag}, gitops={"tool": "flux"},
                          pools=[pool("p", "L4", 4, driver={"source": "precompiled"})])
    return [everything, airgap, host, argo_airgap, flux_online]


#: fleet.yaml of the golden fleets (fixed here so edits of the example fleet do not move the goldens).
GOLDEN_SETTINGS: dict[str, Any] = {
    "apiVersion": "gpuspec.io/v1alpha1",
    "kind": "Fleet",
    "metadata": {"name": "golden"},
    "git": {"repoURL": "https://git.example.com/gpu-fleet.git", "revision": "main", "path": "rendered"},
    "mirrors": [{
        "name": "dc-north",
        "registries": {"nvcr.io": "harbor.dc-north.acme.internal/nvcr",
                       "registry.k8s.io": "harbor.dc-north.acme.internal/k8s"},
        "chart": {"repository": "oci://harbor.dc-north.acme.internal/charts/nvidia"},
        "pullSecrets": ["harbor-dc-north-pull"],
        "packageRepoConfigMap": "ubuntu-jammy-mirror",
        "caConfigMap": "acme-internal-ca",
        "proxy": {"https": "http://proxy.dc-north.acme.internal:3128", "noProxy": ".acme.internal"},
    }],
    "channels": [{"name": "stable", "operator": "v26.7.0", "driver": {"branch": "580"}}],
}


def replace_failing_at(call: int) -> Callable[[str | Path, str | Path], None]:
    """``os.replace`` that fails with an I/O error on its ``call``-th call (a run killed or failing at that
    point of a write), and replaces as usual otherwise."""
    real = os.replace
    calls = [0]

    def replace(a: str | Path, b: str | Path) -> None:
        calls[0] += 1
        if calls[0] == call:
            raise OSError(5, "I/O error")
        real(a, b)

    return replace


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (POSIX path relative to it) with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
