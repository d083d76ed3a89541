"""`gpuspec import`: a 3-pool inventory becomes a commented cluster spec that validates and audits clean."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from audit_cli import run_gpuspec, run_gpuspec_process
from audit_fixtures import FLEET_DIR, NODES_DIR, healthy, node_list
from ruamel.yaml import YAML

from gpuspec.audit.check import audit_cluster
from gpuspec.audit.draft import POOL_LABEL, draft_cluster, dump_yaml
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import parse_nodes
from gpuspec.loader.fleetload import load_fleet
from gpuspec.model.cluster import Cluster
from gpuspec.rules.references import reference_findings


def fleet_with(tmp_path: Path, name: str, text: str) -> Path:
    """A fleet dir holding the test fleet.yaml and one cluster file with ``text``."""
    fleet_dir = tmp_path / "fleet"
    (fleet_dir / "clusters").mkdir(parents=True)
    shutil.copy(FLEET_DIR / "fleet.yaml", fleet_dir / "fleet.yaml")
    (fleet_dir / "clusters" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return fleet_dir


def draft(nodes: list[dict[str, Any]], name: str = "lab2") -> tuple[str, list[str]]:
    """Draft YAML and notes for an inventory."""
    parsed = parse_nodes(json.dumps(node_list(nodes)), "nodes.json")
    doc, notes = draft_cluster(name, parsed, [node_facts(n) for n in parsed], "v26.7.0")
    return dump_yaml(doc), notes


def test_three_pool_inventory_round_trips(tmp_path: Path) -> None:
    out = tmp_path / "lab2.yaml"
    result = run_gpuspec("import", "--nodes", str(NODES_DIR / "healthy.json"), "--name", "lab2", "--out", str(out),
                         "--operator-version", "v26.7.0")
    assert result.code == 0, result.err
    fleet_dir = fleet_with(tmp_path, "lab2", out.read_text(encoding="utf-8"))
    load = load_fleet(fleet_dir)
    assert load.fleet is not None, load.findings
    assert reference_findings(load.fleet) == []
    cluster = load.fleet.cluster("lab2")
    assert cluster is not None
    pools = {p.name: p for p in cluster.pools}
    assert set(pools) == {"h100-sxm5-80gb", "a100-mig", "l40s-shared"}
    h100 = pools["h100-sxm5-80gb"]
    assert h100.node_selector == {"acme.example/gpu-pool": "h100"}
    assert (h100.nodes, h100.gpu.product, h100.gpu.count, h100.driver.version) == (2, "H100-SXM5-80GB", 8, "580.95.05")
    assert [t.key for t in h100.taints] == ["acme.example/gpu"]
    assert pools["l40s-shared"].node_selector == {"acme.example/accelerator": "l40s"}
    assert pools["l40s-shared"].sharing.replicas == 4
    mig = pools["a100-mig"].mig
    assert mig.layout is None and mig.custom is not None
    assert [(g.devices, g.profiles) for g in mig.custom] == [([0, 1, 2, 3], {"1g.10gb": 7}), ([4, 5, 6, 7],
                                                                                           {"3g.40gb": 2})]
    assert (pools["h100-sxm5-80gb"].os.distribution, pools["h100-sxm5-80gb"].os.kernel) == (
        "ubuntu", "5.15.0-143-generic")
    # The draft of an inventory audits clean against that same inventory.
    nodes = [node_facts(n) for n in parse_nodes((NODES_DIR / "healthy.json").read_text(), "nodes.json")]
    assert audit_cluster(load.fleet, cluster, nodes).findings == []


def test_imported_fleet_passes_gpuspec_validate(tmp_path: Path) -> None:
    text, _ = draft(healthy())
    fleet_dir = fleet_with(tmp_path, "lab2", text)
    result = run_gpuspec("validate", "--format", "json", str(fleet_dir))
    assert result.code == 0, result.out
    assert all(f["severity"] != "error" for f in result.json()["findings"])


def test_named_mig_layout_is_kept_and_unexplained_configs_are_flagged() -> None:
    nodes = healthy()
    nodes[4]["metadata"]["labels"]["nvidia.com/mig.config"] = "all-balanced"
    text, _ = draft(nodes)
    assert "layout: all-balanced  # TODO: review" in text
    nodes = healthy()
    nodes[4]["status"]["allocatable"]["nvidia.com/mig-1g.10gb"] = "57"
    nodes[4]["metadata"]["labels"]["nvidia.com/mig-1g.10gb.count"] = "57"  # more than 8 GPUs hold
    text, notes = draft(nodes)
    assert "layout: custom-a100-mig  # TODO: 'custom-a100-mig' is not a named layout" in text
    assert notes == []  # schema-valid; `gpuspec validate` reports the unknown layout name (GS302)


def test_draft_is_commented_round_trip_yaml() -> None:
    text, notes = draft(healthy())
    assert notes == []
    assert text.startswith("# Drafted by `gpuspec import`")
    assert "version: v26.7.0  # chosen with --operator-version" in text
    assert "# 2 node(s): gpu-h100-0, gpu-h100-1" in text
    yaml = YAML(typ="rt")
    doc = yaml.load(text)
    doc["pools"][0]["nodes"] = 5
    from io import StringIO

    buffer = StringIO()
    yaml.dump(doc, buffer)
    edited = buffer.getvalue()
    assert "# TODO: review" in edited and "# 2 node(s): gpu-h100-0, gpu-h100-1" in edited
    assert "nodes: 5" in edited


def test_selector_is_proposed_when_no_label_fits(tmp_path: Path) -> None:
    nodes = healthy()
    for node in nodes:
        labels = node["metadata"]["labels"]
        labels.pop("acme.example/gpu-pool", None)
        labels.pop("acme.example/accelerator", None)
        labels["node.kubernetes.io/instance-type"] = "bare-metal"
    text, notes = draft(nodes)
    assert f"{POOL_LABEL}: h100-sxm5-80gb  # TODO: no existing label selects exactly these nodes" in text
    assert f"kubectl label node gpu-h100-0 gpu-h100-1 {POOL_LABEL}=h100-sxm5-80gb" in text
    assert any(POOL_LABEL in note for note in notes)
    load = load_fleet(fleet_with(tmp_path, "lab2", text))
    assert load.fleet is not None, load.findings


def test_other_driver_is_no_new_pool_and_unknown_products_are_flagged() -> None:
    nodes = healthy()
    nodes[3]["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "580.82.07"
    nodes[5]["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-A10G"
    text, _ = draft(nodes)
    doc = YAML(typ="safe").load(text)
    names = [p["name"] for p in doc["pools"]]
    assert names.count("h100-sxm5-80gb") == 1 and "h100-sxm5-80gb-2" not in names  # a driver outlier is a finding
    assert "product: NVIDIA-A10G  # TODO: GFD product string not in gpuspec's map" in text
    Cluster.model_validate(doc)


def test_gpu_nodes_without_gfd_labels_are_left_out() -> None:
    nodes = healthy()
    for key in [k for k in nodes[5]["metadata"]["labels"] if k.startswith("nvidia.com/gpu.")]:
        del nodes[5]["metadata"]["labels"][key]
    text, notes = draft(nodes)
    assert "Left out (GPU nodes without GFD labels): gpu-l40s-0" in text
    assert any("gpu-l40s-0" in note for note in notes)


def test_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    out = tmp_path / "lab2.yaml"
    out.write_text("keep me\n")
    args = ("import", "--nodes", str(NODES_DIR / "healthy.json"), "--name", "lab2", "--out", str(out))
    refused = run_gpuspec(*args)
    assert refused.code == 2 and "already exists" in refused.err and "--force" in refused.err
    assert out.read_text() == "keep me\n"
    forced = run_gpuspec(*args, "--force")
    assert forced.code == 0 and out.read_text().startswith("# Drafted by")


def test_import_from_stdin_to_stdout() -> None:
    text = (NODES_DIR / "healthy.json").read_text(encoding="utf-8")
    result = run_gpuspec_process("import", "--nodes", "-", "--name", "lab2", stdin=text)
    assert result.code == 0
    assert "kind: Cluster" in result.out


def test_no_gpu_nodes_and_bad_names_exit_2(tmp_path: Path) -> None:
    cpu_only = tmp_path / "cpu.json"
    cpu_only.write_text(json.dumps(node_list(healthy()[:2])))
    none = run_gpuspec("import", "--nodes", str(cpu_only), "--name", "lab2")
    assert none.code == 2 and "nothing to draft" in none.err
    bad = run_gpuspec("import", "--nodes", str(NODES_DIR / "healthy.json"), "--name", "Lab_2")
    assert bad.code == 2 and "DNS-1123" in bad.err
    version = run_gpuspec("import", "--nodes", str(NODES_DIR / "healthy.json"), "--name", "lab2",
                          "--operator-version", "26.7")
    assert version.code == 2 and "--operator-version" in version.err


def test_hand_named_custom_mig_config_is_kept_under_its_own_name(tmp_path: Path) -> None:
    nodes = healthy()
    for node in nodes:
        labels = node["metadata"]["labels"]
        if labels.get("nvidia.com/mig.config") == "custom-a100-mig":
            labels["nvidia.com/mig.config"] = "training-split"
    text, _ = draft(nodes)
    doc = YAML(typ="safe").load(text)
    pool = next(p for p in doc["pools"] if p["mig"]["strategy"] == "mixed")
    assert pool["mig"]["configName"] == "training-split" and "custom" in pool["mig"]
    fleet_dir = fleet_with(tmp_path, "lab2", text)
    load = load_fleet(fleet_dir)
    assert load.fleet is not None, load.findings
    cluster = load.fleet.cluster("lab2")
    assert cluster is not None
    parsed = parse_nodes(json.dumps(node_list(nodes)), "nodes.json")
    findings = audit_cluster(load.fleet, cluster, [node_facts(n) for n in parsed]).findings
    assert [f.rule_id for f in findings if f.rule_id == "GS782"] == []  # adoption relabels no MIG node
    out = tmp_path / "rendered"
    result = run_gpuspec("render", str(fleet_dir), "--out", str(out))
    assert result.code == 0, result.err + result.out
    labels = (out / "clusters" / "lab2" / "node-labels.yaml").read_text(encoding="utf-8")
    assert "nvidia.com/mig.config: training-split" in labels


def test_config_name_needs_custom_and_distinct_names() -> None:
    text, _ = draft(healthy())
    doc = YAML(typ="safe").load(text)
    mig_pool = next(p for p in doc["pools"] if p["mig"]["strategy"] == "mixed")
    twin = json.loads(json.dumps(mig_pool))
    twin["name"], twin["nodeSelector"] = "a100-twin", {"acme.example/gpu-pool": "twin"}
    mig_pool["mig"]["configName"] = twin["mig"]["configName"] = "split"
    doc["pools"].append(twin)
    with pytest.raises(ValueError, match="both name their custom MIG layout 'split'"):
        Cluster.model_validate(doc)
    named = {"strategy": "mixed", "layout": "all-balanced", "configName": "split"}
    with pytest.raises(ValueError, match="configName names a custom layout"):
        Cluster.model_validate({**doc, "pools": [{**mig_pool, "mig": named}]})
