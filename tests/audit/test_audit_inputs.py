"""Input handling of `gpuspec audit`: stdin, malformed JSON, wrong shapes, missing files, unknown clusters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from audit_cli import run_gpuspec, run_gpuspec_process
from audit_fixtures import FLEET_DIR, NODES_DIR, healthy, node_list

from gpuspec.audit.inventory import parse_nodes, parse_operator_resources
from gpuspec.errors import GpuspecError


def test_nodes_from_stdin() -> None:
    text = (NODES_DIR / "healthy.json").read_text(encoding="utf-8")
    ok = run_gpuspec_process("audit", "--cluster", "lab", "--nodes", "-", str(FLEET_DIR), stdin=text)
    assert ok.code == 0, ok.err
    drift = (NODES_DIR / "drift-idle.json").read_text(encoding="utf-8")
    bad = run_gpuspec("audit", "--cluster", "lab", "--nodes", "-", "--format", "json", str(FLEET_DIR), stdin=drift)
    assert bad.code == 1
    assert "GS760" in {f["ruleId"] for f in bad.json()["findings"]}


def test_malformed_json_exits_2_with_position(tmp_path: Path) -> None:
    broken = tmp_path / "nodes.json"
    broken.write_text('{\n  "kind": "List",\n  "items": [\n    {"metadata": {"name": "a"}}\n'
                      '    {"metadata": {}}\n  ]\n}\n')
    result = run_gpuspec("audit", "--cluster", "lab", "--nodes", str(broken), str(FLEET_DIR))
    assert result.code == 2
    assert f"{broken}:5:5: invalid JSON" in result.err
    assert result.out == ""


def test_malformed_json_on_stdin_names_stdin() -> None:
    result = run_gpuspec("audit", "--cluster", "lab", "--nodes", "-", str(FLEET_DIR), stdin="{\"items\": [}")
    assert result.code == 2
    assert "<stdin>:1:12: invalid JSON" in result.err


@pytest.mark.parametrize(("document", "message"), [
    ({"kind": "List", "items": [{"metadata": {}}]}, "items[0].metadata.name: Field required"),
    ({"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "p"}}]}, "items[0] is a Pod, expected a Node"),
    ({"kind": "List"}, "items: Field required"),
    ([1, 2], "not the output of `kubectl get nodes -o json`"),
    ({"kind": "List", "items": [{"metadata": {"name": "n", "labels": {"a": 1}}}]}, "items[0].metadata.labels.a"),
])
def test_wrong_shape_names_the_file_and_field(document: Any, message: str) -> None:
    with pytest.raises(GpuspecError) as info:
        parse_nodes(json.dumps(document), "nodes.json")
    assert str(info.value).startswith("nodes.json: ")
    assert message in str(info.value)


def test_duplicate_node_names_are_rejected() -> None:
    nodes = healthy()
    nodes.append(json.loads(json.dumps(nodes[0])))
    with pytest.raises(GpuspecError, match="appears more than once"):
        parse_nodes(json.dumps(node_list(nodes)), "nodes.json")


def test_single_node_object_is_accepted() -> None:
    (node,) = parse_nodes(json.dumps(healthy()[2]), "node.json")
    assert node.name == "gpu-h100-0"


def test_operator_resources_reject_other_kinds() -> None:
    with pytest.raises(GpuspecError, match=r"items\[0\] is a Deployment"):
        parse_operator_resources(json.dumps({"kind": "List", "items": [{"kind": "Deployment", "metadata": {
            "name": "x"}}]}), "cp.json")


def test_shape_error_through_cli(tmp_path: Path) -> None:
    wrong = tmp_path / "pods.json"
    wrong.write_text(json.dumps({"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "p"}}]}))
    result = run_gpuspec("audit", "--cluster", "lab", "--nodes", str(wrong), str(FLEET_DIR))
    assert result.code == 2
    assert f"{wrong}: items[0] is a Pod" in result.err


def test_missing_file_unknown_cluster_and_two_stdins_exit_2() -> None:
    missing = run_gpuspec("audit", "--cluster", "lab", "--nodes", "nope.json", str(FLEET_DIR))
    assert missing.code == 2 and "nope.json: no such file" in missing.err
    unknown = run_gpuspec("audit", "--cluster", "mars", "--nodes", str(NODES_DIR / "healthy.json"), str(FLEET_DIR))
    assert unknown.code == 2 and "cluster 'mars'" in unknown.err and "lab" in unknown.err
    two = run_gpuspec("audit", "--cluster", "lab", "--nodes", "-", "--clusterpolicies", "-", str(FLEET_DIR), stdin="")
    assert two.code == 2 and "only one input" in two.err


def test_unloadable_fleet_exits_2(tmp_path: Path) -> None:
    (tmp_path / "clusters").mkdir()
    (tmp_path / "fleet.yaml").write_text("apiVersion: gpuspec.io/v1alpha1\nkind: Fleet\n")
    result = run_gpuspec("audit", "--cluster", "lab", "--nodes", str(NODES_DIR / "healthy.json"), str(tmp_path))
    assert result.code == 2
    assert "gpuspec validate" in result.err
