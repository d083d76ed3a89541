"""`gpuspec audit` on the committed node fixtures: each drift class is found, a healthy inventory is clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from audit_cli import run_gpuspec
from audit_fixtures import DRIFTS, FLEET_DIR, NODES_DIR, TESTS_DIR, drifted, healthy, node_list, render_all

from gpuspec.audit.check import AuditResult, audit_cluster, summary_table
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import parse_nodes
from gpuspec.catalogue import CATALOGUE as AUDIT_RULES
from gpuspec.loader.fleetload import load_fleet
from gpuspec.loader.positions import locate_findings
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import AutoscalerKind, AutoscalingSpec
from gpuspec.report.registry import REPORTERS

CLUSTER_FILE = FLEET_DIR / "clusters" / "lab.yaml"


def _fleet() -> tuple[Fleet, Cluster]:
    fleet = load_fleet(FLEET_DIR).fleet
    assert fleet is not None
    cluster = fleet.cluster("lab")
    assert cluster is not None
    return fleet, cluster


def audit(nodes: list[dict[str, Any]]) -> AuditResult:
    """Audit an inventory against cluster lab of the test fleet."""
    fleet, cluster = _fleet()
    parsed = parse_nodes(json.dumps(node_list(nodes)), "nodes.json")
    return audit_cluster(fleet, cluster, [node_facts(n) for n in parsed])


def test_fixture_files_are_current() -> None:
    """The committed JSON fixtures equal the generator's output (regenerate: python tests/audit/audit_fixtures.py)."""
    for rel, text in render_all().items():
        assert (TESTS_DIR / rel).read_text(encoding="utf-8") == text, rel
    assert sorted(p.name for p in NODES_DIR.iterdir()) == sorted(Path(r).name for r in render_all() if "/nodes/" in r)


def test_healthy_inventory_has_no_findings() -> None:
    result = audit(healthy())
    assert result.findings == []
    assert [(p.pool, p.declared, p.matched, p.ready) for p in result.pools] == [
        ("h100", 2, 2, 2), ("a100-mig", 1, 1, 1), ("l40s", 1, 1, 1)]
    assert result.gpu_nodes == 4 and result.unmatched == 0


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_drift_class_is_detected(drift: str) -> None:
    expected = DRIFTS[drift][1]
    result = audit(drifted(drift))
    assert {f.rule_id for f in result.findings} == expected
    for finding in result.findings:
        assert finding.rule_id in AUDIT_RULES
        assert finding.severity is AUDIT_RULES[finding.rule_id].severity
        assert finding.file == str(CLUSTER_FILE) or Path(finding.file or "").resolve() == CLUSTER_FILE.resolve()


def test_healthy_fixture_through_cli_prints_summary() -> None:
    result = run_gpuspec("audit", "--cluster", "lab", "--nodes", str(NODES_DIR / "healthy.json"), str(FLEET_DIR))
    assert result.code == 0, result.out + result.err
    assert "audit: no problems found" in result.out
    lines = result.out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("POOL"))
    assert "ADVERTISED/EXPECTED" in lines[header]
    assert lines[header + 1].split()[:6] == ["h100", "2", "2", "2", "16", "16"]
    assert "28/28 mig-1g.10gb, 8/8 mig-3g.40gb" in lines[header + 2]
    assert "16/16 gpu" in lines[header + 3]


def test_findings_point_at_the_pool_lines() -> None:
    text = CLUSTER_FILE.read_text(encoding="utf-8").splitlines()
    located = locate_findings(audit(drifted("product-mismatch")).findings)
    (finding,) = located
    assert finding.line is not None
    assert text[finding.line - 1].strip() == "product: H100-SXM5-80GB"
    assert finding.spec_path == "clusters[lab].pools[h100].gpu.product"
    assert "gpu-h100-1" in finding.message and "NVIDIA-A100-SXM4-80GB" in finding.message


def test_messages_name_the_nodes() -> None:
    result = audit(drifted("idle"))
    idle = next(f for f in result.findings if f.rule_id == "GS760")
    assert "gpu-h100-0" in idle.message and "gpu-h100-1" not in idle.message
    drift = next(f for f in audit(drifted("driver-drift")).findings if f.rule_id == "GS770")
    assert "580.82.07 on gpu-h100-1" in drift.message and "580.95.05 on gpu-h100-0" in drift.message


def test_summary_table_counts_idle_node_as_not_ready() -> None:
    _, cluster = _fleet()
    result = audit(drifted("idle"))
    table = summary_table(cluster, result)
    row = next(line for line in table.splitlines() if line.startswith("h100"))
    assert row.split()[:4] == ["h100", "2", "2", "1"]
    assert "8/16 gpu" in row


def test_long_node_lists_are_bounded() -> None:
    nodes = healthy()
    for index in range(12):
        extra = json.loads(json.dumps(nodes[2]))
        extra["metadata"]["name"] = f"stray-{index:02d}"
        extra["metadata"]["labels"]["acme.example/gpu-pool"] = "unknown"
        nodes.append(extra)
    (finding,) = audit(nodes).findings
    assert finding.rule_id == "GS750"
    assert "12 nodes" in finding.message and "and 4 more" in finding.message


def test_idle_gpu_node_outside_every_pool_is_the_idle_case() -> None:
    nodes = healthy()
    nodes[2]["metadata"]["labels"]["acme.example/gpu-pool"] = "unknown"
    nodes[2]["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    result = audit(nodes)
    idle = [f for f in result.findings if f.rule_id == "GS760"]
    assert len(idle) == 1 and "outside every pool" in idle[0].message and idle[0].severity.value == "error"
    assert "GS750" in {f.rule_id for f in result.findings}
    nodes[2]["status"]["allocatable"]["nvidia.com/gpu"] = "8"  # advertising again: only the no-pool warning
    assert "GS760" not in {f.rule_id for f in audit(nodes).findings}


def test_node_in_pool_without_gpus_is_reported() -> None:
    nodes = healthy()
    nodes[0]["metadata"]["labels"]["acme.example/gpu-pool"] = "h100"  # a CPU node labelled into the H100 pool
    result = audit(nodes)
    assert {f.rule_id for f in result.findings} == {"GS760", "GS753", "GS755"}
    assert any("cpu-0" in f.message and "no NVIDIA GPU at all" in f.message for f in result.findings)


def test_warnings_only_exit_zero_unless_fail_on_warning() -> None:
    args = ("audit", "--cluster", "lab", "--nodes", str(NODES_DIR / "drift-taint-missing.json"), str(FLEET_DIR))
    assert run_gpuspec(*args).code == 0
    assert run_gpuspec(*args, "--fail-on", "warning").code == 1


@pytest.mark.parametrize("output_format", sorted(REPORTERS))
def test_every_reporter_renders_audit_findings(output_format: str) -> None:
    result = run_gpuspec("audit", "--cluster", "lab", "--nodes", str(NODES_DIR / "drift-idle.json"),
                         "--format", output_format, str(FLEET_DIR))
    assert result.code == 1, result.err
    assert "GS760" in result.out


def _autoscaled(low: int, high: int) -> tuple[Fleet, Cluster]:
    fleet, cluster = _fleet()
    pool = cluster.pool("h100")
    assert pool is not None
    pool.autoscaling = AutoscalingSpec(autoscaler=AutoscalerKind.CLUSTER_AUTOSCALER, min=low, max=high, cloud="aws")
    return fleet, cluster


def test_autoscaled_pool_is_judged_against_its_bounds() -> None:
    """A node still being prepared (not ready) is no shortfall while the pool stays at or above its minimum."""
    fleet, cluster = _autoscaled(1, 4)
    parsed = parse_nodes(json.dumps(node_list(drifted("not-ready"))), "nodes.json")
    ids = {f.rule_id for f in audit_cluster(fleet, cluster, [node_facts(n) for n in parsed]).findings}
    assert "GS752" not in ids and "GS754" in ids
    fleet, cluster = _autoscaled(2, 4)
    findings = audit_cluster(fleet, cluster, [node_facts(n) for n in parsed]).findings
    short = next(f for f in findings if f.rule_id == "GS752")
    assert "autoscales between 2 and 4 nodes" in short.message
    assert short.path == ("pools", 0, "autoscaling", "min")
    fleet, cluster = _autoscaled(0, 1)
    parsed = parse_nodes(json.dumps(node_list(healthy())), "nodes.json")
    over = next(f for f in audit_cluster(fleet, cluster, [node_facts(n) for n in parsed]).findings
                if f.rule_id == "GS753")
    assert "autoscales between 0 and 1 nodes but its nodeSelector matches 2" in over.message
