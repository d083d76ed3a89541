"""Runtime plumbing: toolkit.env per distribution x runtime x release, merged with overrides, through the chart."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.bench_verify import mini_chart_as
from gpuspec.catalogue.matrix import CANNOT_VERIFY_RUNTIME, RUNTIME_SETTING_CONTRADICTED
from gpuspec.catalogue.validate import OVERRIDE_MANAGED_PATH
from gpuspec.pipeline.render import prepare
from gpuspec.pipeline.validate import validate_fleet
from gpuspec.verify.helm import helm_template
from gpuspec.verify.manifests import load_yaml
from gpuspec.verify.values_keys import ChartValues, dependency_names, unknown_values_keys

from .fleets import cluster, pool, render_dir, write_fleet

MICROK8S_SOCKET = "/var/snap/microk8s/common/run/containerd.sock"
MICROK8S_CONFIG = "/var/snap/microk8s/current/args/containerd-template.toml"
RKE2 = [{"name": "CONTAINERD_CONFIG", "value": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"},
        {"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"}]
MICROK8S_25_3 = [{"name": "CONTAINERD_CONFIG", "value": MICROK8S_CONFIG},
                 {"name": "CONTAINERD_SOCKET", "value": MICROK8S_SOCKET}]
MICROK8S_26_7 = [*MICROK8S_25_3,
                 {"name": "RUNTIME_CONFIG_SOURCE", "value": "file=/var/snap/microk8s/current/args/containerd.toml"}]
GKE = [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]

#: (cluster name, release, distribution, runtime, Kubernetes, expected toolkit.env or None when none is rendered)
FLEET: list[tuple[str, str, str, str, str, list[dict[str, str]] | None]] = [
    ("rke2-old", "v24.3.0", "rke2", "containerd", "1.29", RKE2),
    ("rke2-new", "v26.7.0", "rke2", "containerd", "1.33", None),
    ("k3s", "v26.7.0", "k3s", "containerd", "1.33", None),
    ("microk8s-old", "v25.3.4", "microk8s", "containerd", "1.32", MICROK8S_25_3),
    ("microk8s", "v26.7.0", "microk8s", "containerd", "1.33", MICROK8S_26_7),
    ("crio", "v26.7.0", "upstream", "cri-o", "1.33", None),
    ("containerd", "v26.7.0", "upstream", "containerd", "1.33", None),
    ("gke", "v26.7.0", "gke", "containerd", "1.33", GKE),
    ("gke-crio", "v26.7.0", "gke", "cri-o", "1.33", None),
    ("gke-old-k8s", "v26.7.0", "gke", "containerd", "1.32", None),
]


def _doc(name: str, tag: str, dist: str, runtime: str, kube: str, **extra: Any) -> dict[str, Any]:
    return cluster(name, operator={"version": tag}, pools=[pool("gpu", "L40S", 4)],
                   kubernetes={"version": kube, "distribution": dist, "runtime": runtime}, **extra)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("runtime")
    return render_dir(write_fleet(root, [_doc(*row[:5]) for row in FLEET]))


def _values(out: dict[str, bytes], name: str) -> dict[str, Any]:
    data = yaml.safe_load(out[f"clusters/{name}/gpu-operator.values.yaml"])
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("row", FLEET, ids=[r[0] for r in FLEET])
def test_toolkit_env_follows_the_documented_cell(rendered: dict[str, bytes], row: tuple[Any, ...]) -> None:
    name, *_, expected = row
    toolkit = _values(rendered, name)["toolkit"]
    assert toolkit.get("env") == expected
    assert "defaultRuntime" not in _values(rendered, name).get("operator", {})


def test_crio_and_containerd_render_differently_where_the_docs_say_so(rendered: dict[str, bytes]) -> None:
    assert _values(rendered, "gke")["toolkit"]["env"] == GKE
    assert "env" not in _values(rendered, "gke-crio")["toolkit"]


def test_an_env_override_merges_by_name_and_is_a_deviation(tmp_path: Path) -> None:
    extra = {"name": "NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES", "value": "team-a"}
    doc = _doc("m", "v26.7.0", "microk8s", "containerd", "1.33", overrides=[
        {"path": "toolkit.env", "value": [extra], "reason": "team-a management containers", "owner": "gpu"}])
    fleet_dir = write_fleet(tmp_path, [doc])
    out = render_dir(fleet_dir)
    assert _values(out, "m")["toolkit"]["env"] == [*MICROK8S_26_7, extra]
    [record] = yaml.safe_load(out["clusters/m/deviations.yaml"])["deviations"]
    assert record["path"] == "toolkit.env" and record["value"] == [extra] and record["chartDefault"] == []
    ids = {f.rule_id for f in validate_fleet(fleet_dir).findings}
    assert OVERRIDE_MANAGED_PATH.id not in ids and RUNTIME_SETTING_CONTRADICTED.id not in ids


def test_an_override_that_contradicts_a_documented_setting_is_an_error(tmp_path: Path) -> None:
    wrong = {"name": "CONTAINERD_SOCKET", "value": "/run/containerd/containerd.sock"}
    doc = _doc("m", "v26.7.0", "microk8s", "containerd", "1.33", overrides=[
        {"path": "toolkit.env", "value": [wrong], "reason": "copied"}])
    fleet_dir = write_fleet(tmp_path, [doc])
    found = [f for f in validate_fleet(fleet_dir).findings if f.rule_id == RUNTIME_SETTING_CONTRADICTED.id]
    assert [f.path for f in found] == [("overrides", 0, "value", 0, "value")]
    assert MICROK8S_SOCKET in found[0].message
    # the override still wins in the output (a deviation, reported, never silently dropped)
    env = _values(render_dir(fleet_dir), "m")["toolkit"]["env"]
    assert {"name": "CONTAINERD_SOCKET", "value": "/run/containerd/containerd.sock"} in env


def test_cells_without_documented_settings_cannot_be_verified(tmp_path: Path) -> None:
    fleet_dir = write_fleet(tmp_path, [_doc(*row[:5]) for row in FLEET])
    flagged = sorted(f.file.rsplit("/", 1)[-1] for f in validate_fleet(fleet_dir).findings
                     if f.rule_id == CANNOT_VERIFY_RUNTIME.id)
    assert flagged == ["gke-crio.yaml", "k3s.yaml", "rke2-new.yaml"]


@pytest.mark.parametrize("row", [r for r in FLEET if r[5] is not None], ids=[r[0] for r in FLEET if r[5]])
def test_toolkit_env_reaches_the_clusterpolicy_with_the_real_values(
        rendered: dict[str, bytes], row: tuple[Any, ...], tmp_path: Path, tools_bin: Path, upstream: Path) -> None:
    """helm template (the mini chart's templates, the real values.yaml of the release): the ClusterPolicy's toolkit
    carries the env the operator gives the toolkit DaemonSet, and every rendered key is one the real chart knows."""
    name, tag, *_, expected = row
    real = upstream / "gpu-operator" / tag
    chart = mini_chart_as(tag, tmp_path / "chart")
    shutil.copyfile(real / "values.yaml", chart / "values.yaml")
    shutil.rmtree(chart / "charts", ignore_errors=True)
    values_file = tmp_path / "values.yaml"
    values_file.write_bytes(rendered[f"clusters/{name}/gpu-operator.values.yaml"])
    result = helm_template(chart, [values_file], kube_version=row[4], helm=tools_bin / "helm", cache_dir=None)
    assert result.ok, result.error
    [policy] = [m.obj for m in result.manifests if m.kind == "ClusterPolicy"]
    assert policy["spec"]["toolkit"]["env"] == expected
    known = ChartValues.from_file(real / "values.yaml",
                                  subcharts=dependency_names(load_yaml((real / "Chart.yaml").read_text())))
    assert unknown_values_keys(_values(rendered, name), known) == []


def test_the_handover_names_the_runtime_settings(tmp_path: Path) -> None:
    write_fleet(tmp_path, [_doc("microk8s", "v26.7.0", "microk8s", "containerd", "1.33"),
                           _doc("crio", "v26.7.0", "upstream", "cri-o", "1.33")])
    prepared = prepare(tmp_path / "fleet", tmp_path / "policies")
    assert prepared.rendered is not None
    docs = {p: b.decode() for p, b in prepared.rendered.files.items() if p.startswith("handover/")}
    assert f"`CONTAINERD_SOCKET={MICROK8S_SOCKET}`" in docs["handover/microk8s.md"]
    assert "no `toolkit.env`: the operator's defaults for cri-o" in docs["handover/crio.md"]


GKE_HOME = "/home/kubernetes/bin/nvidia"


def _gke_host(name: str, tag: str, kube: str, *pools: dict[str, Any]) -> dict[str, Any]:
    return cluster(name, operator={"version": tag}, pools=list(pools),
                   kubernetes={"version": kube, "distribution": "gke", "runtime": "containerd"})


def _host_pool(name: str, product: str = "L4", **extra: Any) -> dict[str, Any]:
    return pool(name, product, 1, driver={"source": "host"},
                os={"distribution": "ubuntu", "version": "22.04", "kernel": "5.15.0-1070-gke"}, **extra)


def test_gke_driver_installer_paths_when_every_pool_takes_the_host_driver(tmp_path: Path) -> None:
    mig = _host_pool("mig", "A100-SXM4-40GB", mig={"strategy": "single", "layout": "all-1g.5gb"})
    docs = [_gke_host("new", "v26.7.0", "1.33", _host_pool("l4")),
            _gke_host("old", "v24.9.2", "1.30", _host_pool("l4")),
            _gke_host("mig", "v26.7.0", "1.33", mig),
            _gke_host("mixed", "v26.7.0", "1.33", _host_pool("l4"), pool("own", "L4", 1))]
    fleet_dir = write_fleet(tmp_path, docs)
    out = render_dir(fleet_dir)
    new, old = _values(out, "new"), _values(out, "old")
    assert new["hostPaths"] == {"driverInstallDir": GKE_HOME} and new["toolkit"]["installDir"] == GKE_HOME
    assert new["toolkit"]["env"] == GKE and "default" not in new["cdi"]  # cdi.default left the chart in 25.10
    assert old["toolkit"]["installDir"] == GKE_HOME and old["cdi"]["default"] is True and "env" not in old["toolkit"]
    assert _values(out, "mig")["migManager"]["env"] == [{"name": "WITH_REBOOT", "value": "true"}]
    assert "env" not in new.get("migManager", {})
    mixed = _values(out, "mixed")
    assert "hostPaths" not in mixed and "installDir" not in mixed["toolkit"]
    warned = [f for f in validate_fleet(fleet_dir).findings if f.rule_id == CANNOT_VERIFY_RUNTIME.id]
    assert [(f.file.rsplit("/", 1)[-1], f.path) for f in warned] == [("mixed.yaml", ("pools", 0))]


def test_gke_driver_installer_paths_reach_the_clusterpolicy(
        tmp_path: Path, tools_bin: Path, upstream: Path) -> None:
    tag = "v26.7.0"
    real = upstream / "gpu-operator" / tag
    chart = mini_chart_as(tag, tmp_path / "chart")
    shutil.copyfile(real / "values.yaml", chart / "values.yaml")
    shutil.rmtree(chart / "charts", ignore_errors=True)
    out = render_dir(write_fleet(tmp_path, [_gke_host("g", tag, "1.33", _host_pool("l4"))]))
    values_file = tmp_path / "values.yaml"
    values_file.write_bytes(out["clusters/g/gpu-operator.values.yaml"])
    result = helm_template(chart, [values_file], kube_version="1.33", helm=tools_bin / "helm", cache_dir=None)
    assert result.ok, result.error
    [policy] = [m.obj for m in result.manifests if m.kind == "ClusterPolicy"]
    assert policy["spec"]["hostPaths"]["driverInstallDir"] == GKE_HOME
    assert policy["spec"]["toolkit"]["installDir"] == GKE_HOME and policy["spec"]["toolkit"]["env"] == GKE
    assert policy["spec"]["driver"]["enabled"] is False
    known = ChartValues.from_file(real / "values.yaml",
                                  subcharts=dependency_names(load_yaml((real / "Chart.yaml").read_text())))
    assert unknown_values_keys(_values(out, "g"), known) == []
