"""The OpenShift ClusterPolicy (and default NVIDIADriver) custom resources are what the chart writes for the values.

The custom resources are computed from the chart's values.yaml defaults and the compiled values through the
chart-intent data (gpuspec.matrix.chartspec).  They are compared, with real ``helm template``, against the project's
mini test chart (which writes a subset of the real chart's fields, from its own values.yaml: it is given the real
chart's values.yaml so both merge the same defaults) and, when ``GPUSPEC_GPU_OPERATOR_CHART`` names a real v26.7.0
chart (built by ``scripts/real-chart`` from a clone of NVIDIA/gpu-operator; never committed), against the real chart
field by field, both ways; and validated against the release's real CRDs in ../shared/upstream.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.matrix.chartintent import chart_intent
from gpuspec.matrix.chartvalues import indexed_releases
from gpuspec.pipeline.render import expected_bytes
from gpuspec.render.filetree import YamlFile
from gpuspec.verify.custom_resource import MISSING, compare, normalized
from gpuspec.verify.schemas import CrdSet
from tests.render.fleets import REPO_ROOT, cluster, compile_dir, pool, write_fleet

MINI_CHART = REPO_ROOT / "tests" / "fixtures" / "charts" / "gpu-operator-mini"
TAG = "v26.7.0"
#: ClusterPolicy fields the mini chart writes even under NVIDIADriver management, which the real chart at v26.7.0
#: leaves out there (`if not .Values.driver.nvidiaDriverCRD.enabled`, templates/clusterpolicy.yaml:153).
MINI_ONLY_UNDER_NVIDIADRIVER = frozenset(f"spec.driver.{k}" for k in (
    "repository", "image", "version", "imagePullPolicy", "imagePullSecrets", "kernelModuleType", "usePrecompiled"))
#: A real GPU Operator chart of TAG (folder or .tgz), e.g. from `scripts/real-chart`.
REAL_CHART_ENV = "GPUSPEC_GPU_OPERATOR_CHART"
#: A folder of real charts of other releases, `gpu-operator-<tag>.tgz` as `scripts/real-chart` names them.
REAL_CHARTS_ENV = "GPUSPEC_GPU_OPERATOR_CHARTS"


def _ocp(*extra_pools: dict[str, Any], operands: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    pools = [pool("a100", product="A100-SXM4-80GB", os={"distribution": "rhcos", "version": "4.19"},
                  driver={"source": "operator", "branch": "580"}), *extra_pools]
    operator: dict[str, Any] = {"version": TAG, "namespace": "nvidia-gpu-operator"}
    if operands is not None:
        operator["operands"] = operands
    return cluster(
        "ocp",
        kubernetes={"version": "1.32", "distribution": "openshift", "openshiftVersion": "4.19", "runtime": "cri-o"},
        operator=operator, pools=pools, **extra)


def _two_drivers() -> dict[str, Any]:
    """Two pools with different driver branches: NVIDIADriver management with the chart's default NVIDIADriver."""
    return _ocp(pool("l40s", product="L40S", os={"distribution": "rhcos", "version": "4.19"},
                     driver={"source": "operator", "branch": "595"}))


def _docs(plan: Any, path: str) -> list[dict[str, Any]]:
    found = plan.clusters[0].files[path]
    assert isinstance(found, YamlFile)
    return [d for d in found.documents if isinstance(d, dict)]


def _rendered(tmp_path: Path, doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The compiled values and the custom resources (kind -> object) of one OpenShift cluster."""
    plan = compile_dir(write_fleet(tmp_path, [doc]))
    values = _docs(plan, "clusters/ocp/gpu-operator.values.yaml")[0]
    objects = {"ClusterPolicy": _docs(plan, "clusters/ocp/clusterpolicy.yaml")[0]}
    if "clusters/ocp/nvidiadriver.default.yaml" in plan.clusters[0].files:
        objects["NVIDIADriver"] = _docs(plan, "clusters/ocp/nvidiadriver.default.yaml")[0]
    return values, objects


def _helm(tools_bin: Path, chart: Path, values: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    values_file = tmp_path / "helm-values.yaml"
    values_file.write_text(yaml.safe_dump(values), encoding="utf-8")
    out = subprocess.run([str(tools_bin / "helm"), "template", "gpu-operator", str(chart), "-n", "nvidia-gpu-operator",
                          "--kube-version", "1.32", "-f", str(values_file)],
                         check=True, capture_output=True, text=True).stdout
    return [d for d in yaml.safe_load_all(out) if isinstance(d, dict)]


def _chart_object(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(o for o in objects
                if o["kind"] == kind and (kind != "NVIDIADriver" or o["metadata"]["name"] == "default"))


@pytest.fixture(scope="module")
def crds(shared_dir: Path) -> CrdSet:
    """The real v26.7.0 CRDs (ClusterPolicy, NVIDIADriver)."""
    return CrdSet.from_paths([shared_dir / "upstream" / "gpu-operator" / TAG / "crds"])


@pytest.fixture(scope="module")
def real_values(shared_dir: Path) -> dict[str, Any]:
    """The real chart's values.yaml of v26.7.0."""
    data = yaml.safe_load((shared_dir / "upstream" / "gpu-operator" / TAG / "values.yaml").read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture
def mini_as_release(tmp_path: Path, shared_dir: Path) -> Path:
    """The mini chart as a v26.7.0 chart with the real chart's values.yaml (so Helm merges the real defaults)."""
    chart = tmp_path / "mini-chart"
    shutil.copytree(MINI_CHART, chart)
    shutil.copy(shared_dir / "upstream" / "gpu-operator" / TAG / "values.yaml", chart / "values.yaml")
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    meta.update(version=TAG, appVersion=TAG)
    (chart / "Chart.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")
    return chart


@pytest.fixture(scope="module")
def real_chart() -> Path:
    """The real GPU Operator chart named by GPUSPEC_GPU_OPERATOR_CHART; the test skips (with how to get one) without."""
    given = os.environ.get(REAL_CHART_ENV, "")
    if not given or not Path(given).exists():
        pytest.skip(f"NO REAL CHART: set {REAL_CHART_ENV} to a GPU Operator {TAG} chart (scripts/real-chart builds "
                    "one from a clone of NVIDIA/gpu-operator) to compare the OpenShift custom resources with it")
    return Path(given)


# ----------------------------------------------------------------------------- what the custom resources carry


def test_clusterpolicy_carries_the_chart_defaults(tmp_path: Path, real_values: dict[str, Any]) -> None:
    """Settings only the chart's values.yaml carries reach the custom resource, as the chart writes them."""
    _, objects = _rendered(tmp_path, _ocp())
    spec = objects["ClusterPolicy"]["spec"]
    upgrade = spec["driver"]["upgradePolicy"]
    defaults = real_values["driver"]["upgradePolicy"]
    assert upgrade["drain"] == {"enable": defaults["drain"]["enable"], "force": defaults["drain"]["force"],
                                "timeoutSeconds": defaults["drain"]["timeoutSeconds"],
                                "deleteEmptyDir": defaults["drain"]["deleteEmptyDir"]}
    # the chart renames gpuPodDeletion to podDeletion
    assert upgrade["podDeletion"]["timeoutSeconds"] == defaults["gpuPodDeletion"]["timeoutSeconds"]
    for key in ("repository", "image", "version"):
        assert spec["dcgm"][key] == real_values["dcgm"][key]
    assert spec["daemonsets"]["priorityClassName"] == real_values["daemonsets"]["priorityClassName"]
    assert spec["daemonsets"]["tolerations"] == real_values["daemonsets"]["tolerations"]
    assert spec["operator"] == {"runtimeClass": real_values["operator"]["runtimeClass"],
                                "use_ocp_driver_toolkit": True}
    assert spec["validator"]["version"] == TAG  # `| default .Chart.AppVersion`
    assert not {"nfd", "node-feature-discovery", "platform"} & set(spec)
    assert "default" not in spec  # a single driver: the ClusterPolicy manages it, no NVIDIADriver
    assert "NVIDIADriver" not in objects


def test_values_gpuspec_sets_win_over_the_defaults(tmp_path: Path, real_values: dict[str, Any]) -> None:
    """The spec's rollout settings reach the custom resource over the chart's defaults."""
    _, objects = _rendered(tmp_path, _ocp(rollout={"autoUpgrade": True, "maxParallelUpgrades": 3,
                                                   "drain": {"enable": True, "timeoutSeconds": 900}}))
    upgrade = objects["ClusterPolicy"]["spec"]["driver"]["upgradePolicy"]
    assert upgrade["maxParallelUpgrades"] == 3
    assert upgrade["drain"]["enable"] is True
    assert upgrade["drain"]["timeoutSeconds"] == 900
    assert upgrade["drain"]["deleteEmptyDir"] == real_values["driver"]["upgradePolicy"]["drain"]["deleteEmptyDir"]


def test_two_drivers_get_the_charts_default_nvidiadriver(tmp_path: Path) -> None:
    """With NVIDIADriver management and deployDefaultCR the chart deploys an NVIDIADriver `default`; OLM does not,
    so the OpenShift output carries it."""
    values, objects = _rendered(tmp_path, _two_drivers())
    assert values["driver"]["nvidiaDriverCRD"] == {"enabled": True, "deployDefaultCR": True}
    driver = objects["NVIDIADriver"]
    assert driver["metadata"]["name"] == "default"
    assert driver["spec"]["default"] is True
    assert driver["spec"]["version"] == values["driver"]["version"]
    assert driver["spec"]["usePrecompiled"] is False  # the operator builds with the Driver Toolkit on RHCOS
    assert objects["ClusterPolicy"]["spec"]["driver"]["useNvidiaDriverCRD"] is True


@pytest.mark.parametrize("doc", [_ocp(), _two_drivers()], ids=["one-driver", "two-drivers"])
def test_custom_resources_validate_against_the_release_crds(doc: dict[str, Any], tmp_path: Path,
                                                            crds: CrdSet) -> None:
    _, objects = _rendered(tmp_path, doc)
    for obj in objects.values():
        assert crds.knows(obj["apiVersion"], obj["kind"])
        assert crds.validate(obj) == [], crds.validate(obj)


@pytest.mark.parametrize("tag", [t for t in indexed_releases() if chart_intent(t) is not None])
def test_every_release_with_chart_data_validates_against_its_crds(tag: str, tmp_path: Path, shared_dir: Path) -> None:
    """No OpenShift field the custom resource carries is unknown to the ClusterPolicy CRD of its release."""
    release_crds = shared_dir / "upstream" / "gpu-operator" / tag / "crds"
    if not release_crds.is_dir():
        pytest.fail(f"no CRDs of {tag} in ../shared/upstream (every release with chart data has them)")
    doc = _ocp()
    doc["operator"]["version"] = tag
    doc["pools"][0]["driver"] = {"source": "operator"}
    _, objects = _rendered(tmp_path, doc)
    crds = CrdSet.from_paths([release_crds])
    assert objects["ClusterPolicy"]["spec"]["operator"]["use_ocp_driver_toolkit"] is True
    for obj in objects.values():
        assert crds.validate(obj) == [], crds.validate(obj)


# ----------------------------------------------------------------------------- against charts, with real helm


@pytest.mark.parametrize("doc", [_ocp(), _two_drivers()], ids=["one-driver", "two-drivers"])
def test_every_field_the_test_chart_writes_is_the_custom_resources(
        doc: dict[str, Any], tmp_path: Path, tools_bin: Path, mini_as_release: Path, crds: CrdSet) -> None:
    """The mini chart (real defaults) writes a subset of the real chart's fields: each equals the custom resource's."""
    values, objects = _rendered(tmp_path, doc)
    chart = _helm(tools_bin, mini_as_release, values, tmp_path)
    for kind, ours in objects.items():
        theirs = normalized(crds.defaulted(_chart_object(chart, kind))["spec"])
        mine = normalized(crds.defaulted(ours)["spec"])
        managed = values["driver"]["nvidiaDriverCRD"]["enabled"]
        written = [d for d in compare({"spec": theirs}, {"spec": mine}) if d.chart is not MISSING
                   and not (managed and kind == "ClusterPolicy" and d.path in MINI_ONLY_UNDER_NVIDIADRIVER)]
        assert written == [], written
        assert len(_leaves(theirs)) > (40 if kind == "ClusterPolicy" else 8)  # the chart wrote fields to compare


def test_a_clusterpolicy_from_the_values_alone_differs_from_the_test_chart(
        tmp_path: Path, tools_bin: Path, mini_as_release: Path, crds: CrdSet) -> None:
    """The comparison above can fail: the values without the chart's defaults miss fields the chart writes."""
    values, _ = _rendered(tmp_path, _ocp())
    chart = _helm(tools_bin, mini_as_release, values, tmp_path)
    alone = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "x"},
             "spec": {k: v for k, v in values.items() if k not in ("nfd", "platform", "operator")}}
    paths = {d.path for d in compare(crds.defaulted(_chart_object(chart, "ClusterPolicy")), crds.defaulted(alone))}
    assert {"spec.dcgm.repository", "spec.daemonsets.priorityClassName", "spec.driver.upgradePolicy.drain",
            "spec.driver.upgradePolicy.podDeletion", "spec.hostPaths"} <= paths


@pytest.mark.parametrize("doc", [_ocp(), _two_drivers(),
                                 _ocp(rollout={"drain": {"enable": True}}, operands={"nfd": False})],
                         ids=["one-driver", "two-drivers", "drain-declared-nfd"])
def test_custom_resources_equal_the_real_chart(doc: dict[str, Any], tmp_path: Path, tools_bin: Path,
                                               real_chart: Path, crds: CrdSet) -> None:
    """Field by field, both ways: the real chart's ClusterPolicy (and default NVIDIADriver) for the same values."""
    values, objects = _rendered(tmp_path, doc)
    chart = _helm(tools_bin, real_chart, values, tmp_path)
    kinds = {o["kind"] for o in chart if o["kind"] == "ClusterPolicy" or
             (o["kind"] == "NVIDIADriver" and o["metadata"]["name"] == "default")}
    assert kinds == set(objects)
    for kind, ours in objects.items():
        assert compare(crds.defaulted(_chart_object(chart, kind)), crds.defaulted(ours)) == []


@pytest.mark.parametrize("tag", [t for t in indexed_releases() if chart_intent(t) is not None])
def test_every_release_with_chart_data_equals_its_real_chart(tag: str, tmp_path: Path, tools_bin: Path,
                                                             shared_dir: Path) -> None:
    """The ClusterPolicy of an OpenShift cluster on each release gpuspec has chart data for equals that release's
    real chart (its default driver; the release's CRDs from ../shared/upstream)."""
    folder = os.environ.get(REAL_CHARTS_ENV, "")
    archive = Path(folder) / f"gpu-operator-{tag}.tgz"
    if not folder or not archive.is_file():
        pytest.skip(f"NO REAL CHART: set {REAL_CHARTS_ENV} to a folder with gpu-operator-{tag}.tgz "
                    f"(scripts/real-chart <clone> {tag} <folder>)")
    doc = _ocp()
    doc["operator"]["version"] = tag
    doc["pools"][0]["driver"] = {"source": "operator"}
    values, objects = _rendered(tmp_path, doc)
    chart = _helm(tools_bin, archive, values, tmp_path)
    crds = CrdSet.from_paths([shared_dir / "upstream" / "gpu-operator" / tag / "crds"])
    for kind, ours in objects.items():
        assert compare(crds.defaulted(_chart_object(chart, kind)), crds.defaulted(ours)) == []


def test_verify_with_the_real_chart_finds_no_difference_and_a_tampered_one(
        tmp_path: Path, tools_bin: Path, real_chart: Path, shared_dir: Path) -> None:
    """`gpuspec verify` with the real chart: no GS950 on the rendered output; a field changed by hand is GS950."""
    from gpuspec.pipeline.verify import VerifyOptions, verify_fleet

    fleet_dir = write_fleet(tmp_path, [_two_drivers()])
    out = tmp_path / "rendered"
    for rel, data in expected_bytes(compile_dir(fleet_dir)).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    upstream = shared_dir / "upstream"
    options = VerifyOptions(fleet_dir=fleet_dir, rendered_dir=out, charts=[real_chart], helm=tools_bin / "helm",
                            cache_dir=None, crd_paths=[upstream / "olm", upstream / "gpu-operator" / TAG / "crds"])
    result = verify_fleet(options)
    assert result.clusters[0].helm_ok
    assert [f.message for f in result.findings if f.rule_id == "GS950"] == []
    policy = out / "clusters" / "ocp" / "clusterpolicy.yaml"
    policy.write_text(policy.read_text().replace("priorityClassName: system-node-critical",
                                                 "priorityClassName: system-cluster-critical"))
    driver = out / "clusters" / "ocp" / "nvidiadriver.default.yaml"
    driver.write_text(driver.read_text().replace("default: true", "default: false"))
    got = [(f.file, f.message) for f in verify_fleet(options).findings if f.rule_id == "GS950"]
    assert [m.split(":")[1].strip().split(" ")[0] for _, m in got] == ["spec.daemonsets.priorityClassName",
                                                                         "spec.default"], got


def _leaves(tree: Any, prefix: str = "") -> list[str]:
    if isinstance(tree, dict):
        return [leaf for k, v in tree.items() for leaf in _leaves(v, f"{prefix}{k}.")]
    return [prefix]



def test_render_refuses_openshift_on_a_release_without_chart_data(tmp_path: Path) -> None:
    """v26.3.0 has no packaged values index: render names GS510, exits 2 and writes nothing; lint reports GS510."""
    doc = _ocp()
    doc["operator"]["version"] = "v26.3.0"
    fleet_dir = write_fleet(tmp_path, [doc])
    out = tmp_path / "rendered"
    gpuspec = str(Path(sys.executable).parent / "gpuspec")
    policies = str(tmp_path / "policies")
    result = subprocess.run([gpuspec, "render", str(fleet_dir), "--policies", policies, "--out", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert "no chart-values data" in result.stderr and "GS510" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    linted = subprocess.run([gpuspec, "lint", str(fleet_dir), "--policies", policies], capture_output=True, text=True)
    assert linted.returncode == 1
    assert "GS510" in linted.stdout
