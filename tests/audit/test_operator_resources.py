"""ClusterPolicy and NVIDIADriver status in `gpuspec audit` (GS790-GS793) beyond their rule cases in
tests/rules/fixtures (a missing ClusterPolicy, --clusterpolicies through the CLI, a ready export)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from audit_cli import run_gpuspec
from audit_fixtures import FLEET_DIR, NODES_DIR, healthy, node_list, operator_resources

from gpuspec.audit.check import audit_cluster
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import parse_nodes, parse_operator_resources
from gpuspec.findings import Finding
from gpuspec.loader.fleetload import load_fleet


def audit_with(resources: dict[str, Any], expect_policy: bool = True) -> list[Finding]:
    """Audit the healthy inventory together with an operator-resource export."""
    fleet = load_fleet(FLEET_DIR).fleet
    assert fleet is not None
    cluster = fleet.cluster("lab")
    assert cluster is not None
    nodes = [node_facts(n) for n in parse_nodes(json.dumps(node_list(healthy())), "nodes.json")]
    crs = parse_operator_resources(json.dumps(resources), "cp.json")
    return audit_cluster(fleet, cluster, nodes, crs, expect_policy=expect_policy).findings


def test_ready_resources_give_no_findings() -> None:
    assert audit_with(operator_resources()) == []


def test_ignored_or_missing_clusterpolicy() -> None:
    (ignored,) = audit_with(operator_resources(policy_state="ignored"))
    assert ignored.rule_id == "GS792" and "ignored" in ignored.message
    empty = {"apiVersion": "v1", "kind": "List", "items": []}
    (missing,) = audit_with(empty)
    assert missing.rule_id == "GS792" and "no ClusterPolicy" in missing.message
    assert audit_with(empty, expect_policy=False) == []


def test_clusterpolicies_option_through_cli(tmp_path: Path) -> None:
    exported = tmp_path / "cp.json"
    exported.write_text(json.dumps(operator_resources(policy_state="notReady")))
    args = ("audit", "--cluster", "lab", "--nodes", str(NODES_DIR / "healthy.json"), "--format", "json")
    result = run_gpuspec(*args, "--clusterpolicies", str(exported), "--drivers", str(exported), str(FLEET_DIR))
    assert result.code == 1
    ids = [f["ruleId"] for f in result.json()["findings"]]
    assert [i for i in ids if i.startswith("GS79")] == ["GS790"]  # the same file twice is read once
    # the export is no ClusterPolicy of the spec (a hand-written one, with an NVIDIADriver the spec does not render):
    # the round trip says so, each setting once
    assert "GS785" in ids and len([i for i in ids if i == "GS785"]) == len({
        f["message"] for f in result.json()["findings"] if f["ruleId"] == "GS785"})
