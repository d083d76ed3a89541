"""Deliberate deviations: overrides merge into the rendered values and NVIDIADriver, with their reasons."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from benchmarks.bench_verify import mini_chart_as
from gpuspec.verify.helm import helm_template

from .fleets import cluster, compile_dir, pool, render_dir, write_fleet

TAG = "v26.7.0"
OVERRIDES = [
    {"path": "daemonsets.priorityClassName", "value": "gpu-operands",
     "reason": "operands must outrank tenant pods", "owner": "gpu-platform", "ticket": "PLAT-7"},
    {"path": "daemonsets.labels", "value": {"acme.example/cost-centre": "gpu"}, "reason": "chargeback"},
    {"path": "operator.resources", "value": {"limits": {"memory": "1Gi"}}, "reason": "operator OOM at 350Mi"},
]


def _values(out: dict[str, bytes], name: str) -> dict[str, Any]:
    data = yaml.safe_load(out[f"clusters/{name}/gpu-operator.values.yaml"])
    assert isinstance(data, dict)
    return data


def test_overrides_merge_into_the_values_and_are_recorded(tmp_path: Path) -> None:
    fleet = write_fleet(tmp_path, [cluster("c1", overrides=OVERRIDES)])
    out = render_dir(fleet)
    values = _values(out, "c1")
    assert values["daemonsets"]["priorityClassName"] == "gpu-operands"
    assert values["daemonsets"]["labels"] == {"acme.example/cost-centre": "gpu"}
    assert values["daemonsets"]["tolerations"]  # managed siblings stay
    assert values["operator"]["resources"] == {"limits": {"memory": "1Gi"}}
    record = yaml.safe_load(out["clusters/c1/deviations.yaml"])
    assert record["cluster"] == "c1" and record["release"] == TAG
    first = record["deviations"][0]
    assert first == {
        "target": "helm-values", "pool": None, "path": "daemonsets.priorityClassName", "value": "gpu-operands",
        "chartDefault": "system-node-critical", "defaultKnown": True, "reason": "operands must outrank tenant pods",
        "owner": "gpu-platform", "ticket": "PLAT-7",
        "source": {"file": f"{fleet.name}/clusters/c1.yaml", "path": "clusters[c1].overrides[0]"},
    }
    assert [d["path"] for d in record["deviations"]] == [o["path"] for o in OVERRIDES]
    assert record["deviations"][2]["chartDefault"] == {
        "limits": {"cpu": "500m", "memory": "350Mi"}, "requests": {"cpu": "200m", "memory": "100Mi"}}
    # the render plan carries the same records as plain data (for the handover documents)
    [plan] = compile_dir(fleet).clusters
    assert plan.deviations == record["deviations"]


def test_no_overrides_no_record(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1")]))
    assert "clusters/c1/deviations.yaml" not in out


def test_driver_overrides_land_in_the_pools_nvidiadriver(tmp_path: Path) -> None:
    # pools c-e share the default NVIDIADriver (rendered by the chart); pools a and b get their own
    pools = [pool("a", driver={"branch": "595"},
                  driverOverrides=[{"path": "priorityClassName", "value": "gpu-drivers", "reason": "outrank"}]),
             pool("b", driver={"branch": "595"}), pool("c", driver={"branch": "580"}),
             pool("d", driver={"branch": "580"}), pool("e", driver={"branch": "580"})]
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=pools)]))
    own = sorted(p for p in out if p.startswith("clusters/c1/nvidiadriver-"))
    assert own == ["clusters/c1/nvidiadriver-a.yaml", "clusters/c1/nvidiadriver-b.yaml"]
    spec_a = yaml.safe_load(out["clusters/c1/nvidiadriver-a.yaml"])["spec"]
    spec_b = yaml.safe_load(out["clusters/c1/nvidiadriver-b.yaml"])["spec"]
    assert spec_a["priorityClassName"] == "gpu-drivers" and "priorityClassName" not in spec_b
    record = yaml.safe_load(out["clusters/c1/deviations.yaml"])["deviations"]
    assert [(d["target"], d["pool"], d["chartDefault"]) for d in record] == [
        ("NVIDIADriver/a", "a", "system-node-critical")]


def test_override_reaches_the_clusterpolicy_through_helm_template(
        tmp_path: Path, tools_bin: Path, upstream: Path) -> None:
    """The mini chart's templates with the real v26.7.0 values.yaml: the override shows in the ClusterPolicy."""
    chart = mini_chart_as(TAG, tmp_path / "chart")
    shutil.copyfile(upstream / "gpu-operator" / TAG / "values.yaml", chart / "values.yaml")
    shutil.rmtree(chart / "charts", ignore_errors=True)
    fleet = write_fleet(tmp_path, [cluster("c1", overrides=OVERRIDES)])
    values_file = tmp_path / "values.yaml"
    values_file.write_bytes(render_dir(fleet)["clusters/c1/gpu-operator.values.yaml"])
    result = helm_template(chart, [values_file], kube_version="1.31", helm=tools_bin / "helm", cache_dir=None)
    assert result.ok, result.error
    [policy] = [m.obj for m in result.manifests if m.kind == "ClusterPolicy"]
    assert policy["spec"]["daemonsets"]["priorityClassName"] == "gpu-operands"
    assert policy["spec"]["daemonsets"]["labels"] == {"acme.example/cost-centre": "gpu"}
    # without the override the chart default is rendered
    plain = write_fleet(tmp_path / "plain", [cluster("c1")])
    values_file.write_bytes(render_dir(plain)["clusters/c1/gpu-operator.values.yaml"])
    result = helm_template(chart, [values_file], kube_version="1.31", helm=tools_bin / "helm", cache_dir=None)
    [policy] = [m.obj for m in result.manifests if m.kind == "ClusterPolicy"]
    assert policy["spec"]["daemonsets"]["priorityClassName"] == "system-node-critical"


def test_deviations_command_lists_every_deviation(fleet_copy: Path) -> None:
    from click.testing import CliRunner

    from gpuspec.cli.main import cli

    policies = str(fleet_copy.parent / "policies")
    text = CliRunner().invoke(cli, ["deviations", str(fleet_copy), "--policies", policies])
    assert text.exit_code == 0, text.output
    assert "train-east: 1 deviation(s)" in text.output and "operator.resources (chart values)" in text.output
    assert "resources (NVIDIADriver of pool t4-batch)" in text.output
    data = CliRunner().invoke(cli, ["deviations", str(fleet_copy), "--policies", policies, "--format", "json"])
    records = __import__("json").loads(data.output)["clusters"]
    assert sorted(records) == ["infer-north", "train-east"]
    [train] = records["train-east"]
    assert (train["path"], train["owner"], train["ticket"]) == ("operator.resources", "gpu-platform", "PLAT-1423")
    assert train["chartDefault"]["limits"]["memory"] == "350Mi" and "OOM" in train["reason"]
    md = CliRunner().invoke(cli, ["deviations", str(fleet_copy), "--policies", policies, "--format", "markdown"])
    assert "| `operator.resources` | chart values |" in md.output
    # a fleet with an error lists nothing and exits 1
    bad = fleet_copy / "clusters" / "train-east.yaml"
    bad.write_text(bad.read_text().replace("path: operator.resources", "path: operator.resourcez"))
    failed = CliRunner().invoke(cli, ["deviations", str(fleet_copy), "--policies", policies])
    assert failed.exit_code == 1 and "GS130" in failed.output
