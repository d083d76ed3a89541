"""The example fleet's rendered/ output against the real GPU Operator v26.7.0 values.yaml and CRDs (../shared/upstream).

These are the checks `gpuspec verify` runs that do not need the chart's templates: unknown values keys
(GS903), schema/CRD validation of the overlay (GS908/GS909), and the image checks on NVIDIADriver
resources (GS904/GS905/GS913).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.loader.fleetload import load_fleet
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import operator_version
from gpuspec.verify import checks
from gpuspec.verify.checks import Origin
from gpuspec.verify.rendered import ClusterOutput, read_cluster_output
from gpuspec.verify.schemas import CrdSet
from gpuspec.verify.values_keys import ChartValues, dependency_names

REPO_ROOT = Path(__file__).resolve().parents[2]
RENDERED = REPO_ROOT / "rendered"
TAG = "v26.7.0"
FIXTURE_CRDS = Path(__file__).parent / "fixtures" / "crds"


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    """The example fleet."""
    result = load_fleet(REPO_ROOT / "fleet")
    assert result.fleet is not None, result.findings
    return result.fleet


@pytest.fixture(scope="module")
def release_dir(upstream_dir: Path) -> Path:
    """../shared/upstream/gpu-operator/v26.7.0."""
    path = upstream_dir / "gpu-operator" / TAG
    assert (path / "values.yaml").is_file() and (path / "crds").is_dir()
    return path


@pytest.fixture(scope="module")
def chart_values(release_dir: Path) -> ChartValues:
    """The real v26.7.0 values.yaml with its subchart names (node-feature-discovery) open."""
    chart_yaml = yaml.safe_load((release_dir / "Chart.yaml").read_text())
    return ChartValues.from_file(release_dir / "values.yaml", subcharts=dependency_names(chart_yaml))


@pytest.fixture(scope="module")
def crds(release_dir: Path) -> CrdSet:
    """The real v26.7.0 CRDs (ClusterPolicy, NVIDIADriver, …) plus the test PrometheusRule CRD."""
    return CrdSet.from_paths([FIXTURE_CRDS, release_dir / "crds"])


def _outputs(fleet: Fleet) -> list[ClusterOutput]:
    assert (RENDERED / "clusters").is_dir(), "rendered/ of the example fleet is missing (run gpuspec render)"
    outputs = [read_cluster_output(RENDERED, "rendered", c.name) for c in fleet.clusters]
    for output in outputs:
        assert output.problems == []
    return outputs


def test_example_fleet_is_on_the_upstream_release(fleet: Fleet) -> None:
    assert {operator_version(fleet, c) for c in fleet.clusters} == {TAG}


def test_rendered_values_use_only_keys_the_real_chart_knows(fleet: Fleet, chart_values: ChartValues) -> None:
    for output in _outputs(fleet):
        origin = Origin(output.values_display, output.values)
        assert checks.check_values_keys(output.values_data(), chart_values, origin, TAG) == [], output.name


def test_a_misspelt_key_in_rendered_values_is_found(fleet: Fleet, chart_values: ChartValues) -> None:
    output = _outputs(fleet)[0]
    values: dict[str, Any] = copy.deepcopy(output.values_data())
    values["driver"]["upgradePolicy"]["maxParalelUpgrades"] = 2
    values["dcgmExporter"]["serviceMonitr"] = {"enabled": True}
    findings = checks.check_values_keys(values, chart_values, Origin(output.values_display), TAG)
    assert sorted((f.rule_id, f.path, f.hint) for f in findings) == [
        ("GS903", ("dcgmExporter", "serviceMonitr"), "did you mean 'serviceMonitor'?"),
        ("GS903", ("driver", "upgradePolicy", "maxParalelUpgrades"), "did you mean 'maxParallelUpgrades'?"),
    ]


def _objects(output: ClusterOutput) -> list[tuple[dict[str, Any], Origin]]:
    return [(doc, Origin(f.display, f, i)) for f in output.resources for i, doc in enumerate(f.documents)
            if isinstance(doc, dict) and doc.get("kind")]


def test_rendered_overlays_validate_against_real_crds_and_kubernetes(fleet: Fleet, crds: CrdSet) -> None:
    kinds: set[str] = set()
    for output, cluster in zip(_outputs(fleet), fleet.clusters, strict=True):
        for obj, origin in _objects(output):
            kinds.add(obj["kind"])
            assert checks.check_schema(obj, origin, crds, cluster.kubernetes.version) == [], origin.display
    assert {"NVIDIADriver", "ConfigMap", "Namespace", "ResourceQuota", "PrometheusRule"} <= kinds


def test_broken_nvidiadriver_fails_the_real_crd(fleet: Fleet, crds: CrdSet) -> None:
    output = next(o for o in _outputs(fleet) if o.name == "infer-north")
    obj, origin = next((o, w) for o, w in _objects(output) if o["kind"] == "NVIDIADriver")
    broken = copy.deepcopy(obj)
    broken["spec"]["driverType"] = "cuda"
    broken["spec"]["upgradePolicy"]["drain"]["timeoutSecond"] = 5
    findings = checks.check_schema(broken, origin, crds, "1.33")
    assert {f.rule_id for f in findings} == {"GS909"}
    assert {f.path for f in findings} == {("spec", "driverType"), ("spec", "upgradePolicy", "drain")}
    assert all("[CRD nvidiadrivers.nvidia.com v1alpha1]" in f.message for f in findings)


def test_nvidiadriver_images_are_mirrored_pinned_and_listed(fleet: Fleet) -> None:
    cluster = fleet.cluster("infer-north")
    assert cluster is not None
    mirror = fleet.mirror(cluster.mirror)
    assert mirror is not None
    output = next(o for o in _outputs(fleet) if o.name == "infer-north")
    images = checks.overlay_images(_objects(output))
    assert {img.use.component for img in images} == {"driver", "driver.manager", None}
    # the other images are the acceptance Jobs': CUDA sample, DCGM diagnostics, the team's Triton, all mirrored
    assert {str(img.use.ref) for img in images if img.use.component is None} == {
        "harbor.dc-north.acme.internal/nvcr/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04",
        "harbor.dc-north.acme.internal/nvcr/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04",
        "harbor.dc-north.acme.internal/nvcr/nvidia/tritonserver:25.01-py3"}
    expectations = checks.image_expectations(fleet, cluster, TAG)
    assert expectations.drivers == {"580.173.02", "535.309.01"}
    assert checks.check_mirror(images, mirror) == []
    assert checks.check_versions(images, expectations, TAG) == []
    assert output.images is not None
    assert checks.check_images_listed(images, output.images, Origin(output.images_display)) == []
    # a driver outside the pools' choice and an unmirrored manager are both caught
    objects = _objects(output)
    obj, origin = next((o, w) for o, w in objects if o["kind"] == "NVIDIADriver")
    broken = copy.deepcopy(obj)
    broken["spec"]["version"] = "595.91.07"
    broken["spec"]["manager"]["repository"] = "nvcr.io/nvidia/cloud-native"
    bad = checks.overlay_images([(broken, origin)])
    assert [f.path for f in checks.check_versions(bad, expectations, TAG)] == [("spec", "version")]
    assert [f.path for f in checks.check_mirror(bad, mirror)] == [("spec", "manager", "repository")]
