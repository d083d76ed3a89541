"""The container toolkit stays off where the node image brings it (``pools[].toolkit.source: host``).

On EKS with the EKS-optimized accelerated (NVIDIA) AMI the node image carries the NVIDIA driver and the NVIDIA
Container Toolkit: NVIDIA's install for pre-installed drivers and toolkit sets ``driver.enabled=false`` and
``toolkit.enabled=false``.  When every pool says so, the render does the same: no toolkit DaemonSet, no toolkit
image to mirror, no toolkit environment.  When only some pools do, the toolkit runs and those pools' nodes carry
``nvidia.com/gpu.deploy.container-toolkit=false`` (node-labels.yaml), and audit does not expect the operator's
toolkit there.  Checked against the real chart's CRDs with helm when the chart is at hand (see
tests/verify/test_adopted_chart_reads.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.audit.check import audit_cluster
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import parse_nodes
from gpuspec.render.chart_reads import unread_paths

from .fleets import cluster, load, pool, render_dir, write_fleet

AMI = {"driver": {"source": "host"}, "toolkit": {"source": "host"},
       "os": {"distribution": "amazonlinux", "version": "2023"}}


def _eks(*pools: dict[str, Any], tag: str = "v26.7.0") -> dict[str, Any]:
    return cluster("eks", kubernetes={"version": "1.31", "distribution": "eks"}, operator={"version": tag},
                   pools=list(pools))


def _out(tmp_path: Path, doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    files = render_dir(write_fleet(tmp_path, [doc]))
    values = yaml.safe_load(files["clusters/eks/gpu-operator.values.yaml"])
    labels = yaml.safe_load(files["clusters/eks/node-labels.yaml"])
    return values, labels, files["clusters/eks/images.txt"].decode()


@pytest.mark.parametrize("tag", ["v24.9.2", "v26.7.0"])
def test_every_pool_on_the_nvidia_ami_turns_the_toolkit_off(tmp_path: Path, tag: str) -> None:
    values, labels, images = _out(tmp_path, _eks(pool("p5", **AMI), pool("g6", "L40S", 4, **AMI), tag=tag))
    assert values["toolkit"]["enabled"] is False
    assert "env" not in values["toolkit"]
    assert values["driver"]["enabled"] is False
    assert "container-toolkit" not in images
    assert all("nvidia.com/gpu.deploy.container-toolkit" not in p["labels"] for p in labels["pools"].values())
    assert unread_paths(values, tag) == []


def test_the_toolkit_runs_when_a_pool_needs_it_and_stays_off_the_ami_nodes(tmp_path: Path) -> None:
    values, labels, images = _out(tmp_path, _eks(pool("p5", **AMI), pool("ubuntu", "L40S", 4)))
    assert values["toolkit"]["enabled"] is True
    assert "container-toolkit" in images
    assert labels["pools"]["p5"]["labels"]["nvidia.com/gpu.deploy.container-toolkit"] == "false"
    assert "nvidia.com/gpu.deploy.container-toolkit" not in labels["pools"]["ubuntu"]["labels"]


def test_a_host_driver_alone_keeps_the_operator_toolkit(tmp_path: Path) -> None:
    values, _, images = _out(tmp_path, _eks(pool("p5", driver={"source": "host"})))
    assert values["toolkit"]["enabled"] is True and values["driver"]["enabled"] is False
    assert "container-toolkit" in images


def test_audit_expects_no_operator_toolkit_where_the_image_brings_it(tmp_path: Path) -> None:
    fleet = load(write_fleet(tmp_path, [_eks(pool("p5", count=8, **AMI))]))
    spec = fleet.cluster("eks")
    assert spec is not None
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ip-10-0-1-1", "labels": {
        "acme.example/gpu-pool": "p5", "nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.deploy.container-toolkit": "false",
        "nvidia.com/gpu.deploy.driver": "pre-installed"}},
        "status": {"allocatable": {"nvidia.com/gpu": "8"}, "conditions": [{"type": "Ready", "status": "True"}],
                   "nodeInfo": {}}}
    nodes = [node_facts(n) for n in parse_nodes(json.dumps({"items": [node]}), "nodes.json")]
    result = audit_cluster(fleet, spec, nodes)
    assert not [f for f in result.findings if "container-toolkit" in f.message], result.findings
