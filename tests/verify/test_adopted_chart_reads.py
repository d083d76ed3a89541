"""Render only what the pinned chart reads: an adopted, air-gapped kubeadm cluster on v24.9.2 with GDS off.

At v24.9.2 ``templates/clusterpolicy.yaml`` writes ``gds.repository``/``image``/``version`` only inside
``if .Values.gds.enabled``: mirror-rewritten values of an operand that is off mean nothing there, and `verify` with the
real chart refused them (GS930).  The render now leaves out every value the chart-intent data of the release says no
template writes or reads (the judgement of verify's GS930/GS931), keeps what an `overrides` entry sets, and gives the
operator's init container (read at v23.9 to v26.3, never in values.yaml) the mirror's pull secrets.

The real-chart test needs NVIDIA's chart of the release: ``GPUSPEC_GPU_OPERATOR_CHARTS`` names a folder of
``gpu-operator-<tag>.tgz`` as ``scripts/real-chart`` builds them from a clone of NVIDIA/gpu-operator; without it, it
skips (the others still judge the values against the chart-intent data, which verify uses too).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from audit.audit_cli import run_gpuspec
from plan.helpers import GIT_ENV

from gpuspec.render.chart_reads import drop_unread, unread_paths

TAG = "v24.9.2"
REAL_CHARTS_ENV = "GPUSPEC_GPU_OPERATOR_CHARTS"

FLEET = """\
apiVersion: gpuspec.io/v1alpha1
kind: Fleet
metadata:
  name: dc1
git:
  repoURL: https://git.example.internal/gpu-fleet.git
mirrors:
  - name: dc1
    registries:
      nvcr.io: harbor.dc1.example.internal/nvcr
      registry.k8s.io: harbor.dc1.example.internal/k8s
    chart:
      repository: oci://harbor.dc1.example.internal/charts/nvidia
{secrets}    packageRepoConfigMap: acme-apt-mirror
"""

CLUSTER = """\
apiVersion: gpuspec.io/v1alpha1
kind: Cluster
metadata:
  name: dc1-infer
kubernetes:
  version: "1.31"
  distribution: upstream
operator:
  version: v24.9.2
mirror: dc1
gitops:
  tool: argocd
rollout:
  canaryPool: l40s
  maxUnavailable: 25%
  drain:
    enable: true
  podDeletion:
    timeoutSeconds: 300
pools:
  - name: l40s
    nodeSelector:
      example.com/pool: l40s
    nodes: 2
    gpu: {product: L40S, count: 4}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
    driver: {version: 550.127.08}
    wave: 1
  - name: a100
    nodeSelector:
      example.com/pool: a100
    nodes: 3
    gpu: {product: A100-SXM4-80GB, count: 8}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
    driver: {version: 550.127.08}
    mig: {strategy: mixed, layout: all-balanced}
    wave: 2
"""

PACK = """\
apiVersion: gpuspec.io/v1alpha1
kind: PolicyPack
metadata:
  name: default
exceptions:
  - rules: [GS202]
    cluster: dc1-infer
    owner: dc1-ops@example.com
    reason: adopted at v24.9.2; the upgrade to v25.10 is planned
    expires: 2099-01-01
"""


def _repo(root: Path, *, secrets: bool = True, cluster: str = CLUSTER) -> Path:
    (root / "fleet" / "clusters").mkdir(parents=True)
    (root / "policies").mkdir()
    (root / "fleet" / "fleet.yaml").write_text(
        FLEET.format(secrets="    pullSecrets: [harbor-pull]\n" if secrets else ""), encoding="utf-8")
    (root / "fleet" / "clusters" / "dc1-infer.yaml").write_text(cluster, encoding="utf-8")
    (root / "policies" / "default.yaml").write_text(PACK, encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env={**os.environ, **GIT_ENV}, check=True)
    return root


def _values(root: Path) -> dict[str, Any]:
    result = run_gpuspec("render", cwd=root)
    assert result.code == 0, result.out + result.err
    path = root / "rendered" / "clusters" / "dc1-infer" / "gpu-operator.values.yaml"
    values: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return values


def test_an_operand_that_is_off_gets_no_image_values(tmp_path: Path) -> None:
    values = _values(_repo(tmp_path))
    assert values["gds"] == {"enabled": False}
    # Operands the v24.9.2 ClusterPolicy writes whatever their switch keep their mirror images.
    assert values["migManager"]["repository"] == "harbor.dc1.example.internal/nvcr/nvidia/cloud-native"
    assert values["driver"]["repoConfig"] == {"configMapName": "acme-apt-mirror"}
    # The init container's image comes from the mirror: it gets the mirror's pull secrets (read, never in values.yaml).
    assert values["operator"]["initContainer"]["imagePullSecrets"] == ["harbor-pull"]
    assert unread_paths(values, TAG) == []


def test_an_operand_that_is_on_keeps_its_images(tmp_path: Path) -> None:
    cluster = CLUSTER.replace("    driver: {version: 550.127.08}\n    wave: 1\n",
                              "    driver: {version: 550.127.08, kernelModuleType: open}\n    wave: 1\n"
                              "    devices: {gds: true}\n", 1)
    cluster = cluster.replace("operator:\n  version: v24.9.2\n",
                              "operator:\n  version: v24.9.2\n  operands:\n    gds: true\n")
    values = _values(_repo(tmp_path, cluster=cluster))
    assert values["gds"]["enabled"] is True
    assert values["gds"]["repository"] == "harbor.dc1.example.internal/nvcr/nvidia/cloud-native"
    assert values["gds"]["image"] == "nvidia-fs" and values["gds"]["version"]
    assert unread_paths(values, TAG) == []


def test_what_an_override_sets_is_kept(tmp_path: Path) -> None:
    cluster = CLUSTER + """\
overrides:
  - path: gds.env
    value: [{name: NVFS_MAX_PEER_DEVS, value: "4"}]
    reason: kept as the running cluster sets it
"""
    values = _values(_repo(tmp_path, cluster=cluster))
    assert values["gds"] == {"enabled": False, "env": [{"name": "NVFS_MAX_PEER_DEVS", "value": "4"}]}
    assert unread_paths(values, TAG) == ["gds.env"]  # verify says so to whoever wrote the override


def test_drop_unread_removes_leaves_and_the_maps_they_empty() -> None:
    values: dict[str, Any] = {"gds": {"enabled": False, "repository": "r", "image": "i", "version": "v",
                                      "imagePullSecrets": ["s"]},
                              "operator": {"initContainer": {"imagePullSecrets": ["s"]}}}
    assert drop_unread(values, TAG) == ["gds.image", "gds.imagePullSecrets", "gds.repository", "gds.version"]
    assert values == {"gds": {"enabled": False}, "operator": {"initContainer": {"imagePullSecrets": ["s"]}}}
    later: dict[str, Any] = {"operator": {"initContainer": {"imagePullSecrets": ["s"]}, "repository": "r"}}
    assert drop_unread(later, "v26.7.0") == ["operator.initContainer.imagePullSecrets"]
    assert later == {"operator": {"repository": "r"}}
    assert drop_unread({"anything": {"at": "all"}}, "v0.0.1") == []  # no chart data: nothing judged


def _real_chart() -> Path:
    folder = os.environ.get(REAL_CHARTS_ENV, "")
    chart = Path(folder) / f"gpu-operator-{TAG}.tgz" if folder else None
    if chart is None or not chart.is_file():
        pytest.skip(f"NO REAL CHART: set {REAL_CHARTS_ENV} to a folder holding gpu-operator-{TAG}.tgz "
                    "(scripts/real-chart builds it from a clone of NVIDIA/gpu-operator)")
    return chart


def _errors(root: Path, chart: Path) -> list[str]:
    assert run_gpuspec("render", cwd=root).code == 0
    result = run_gpuspec("verify", "--no-cache", "--chart", str(chart), "--cluster", "dc1-infer", cwd=root)
    return [line for line in result.out.splitlines() if " error GS" in line]


def test_verify_at_the_running_tag_is_clean_with_the_real_chart(tmp_path: Path) -> None:
    chart = _real_chart()
    assert _errors(_repo(tmp_path / "anonymous", secrets=False), chart) == []
    # With pull secrets, the chart's own NFD subchart (v0.16.6) is what remains: its post-delete prune Job takes no
    # imagePullSecrets at this tag (it does from v25.10), so no value can give it the mirror's secret.
    errors = _errors(_repo(tmp_path / "secrets"), chart)
    assert len(errors) == 1 and "GS915 Job/gpu-operator-node-feature-discovery-prune" in errors[0], errors
