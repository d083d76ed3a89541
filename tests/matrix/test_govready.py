"""The government-ready sets and the autoscaler facts: data carried over from the sources, nothing invented."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuspec.matrix import autoscaling, component_query, query
from gpuspec.matrix.govready import government_ready
from gpuspec.matrix.load import read_data_file


def test_every_listed_component_is_an_image_of_that_line() -> None:
    data = read_data_file("government-ready")
    assert data["source"]
    for line, entry in data["lines"].items():
        if entry["status"] != "documented":
            assert entry["gap"], line
            continue
        versions = [r.version for r in query.releases() if query.line_of(r.version) == line]
        assert versions, line
        for version in versions:
            images = component_query.component_images(version) or {}
            paths = set(images) | {"node-feature-discovery"}
            missing = (set(entry["components"]) | set(entry["parts_of"])) - paths
            assert not missing, (version, missing)
        assert set(entry["images"]) <= set(entry["components"]), line


def test_lines() -> None:
    assert government_ready("25.3").status == "none"
    old = government_ready("24.9")
    assert old.status == "none" and "25.10" in old.gap
    g25 = government_ready("25.10")
    assert g25.status == "documented"
    assert g25.covers("driver.manager") and g25.covers("dcgmExporter") and not g25.covers("node-feature-discovery")
    assert g25.image("driver") == "nvcr.io/nvidia/driver-stig-fips/gpu-driver-stig-fips:580.95.05-stig-fips"
    assert g25.image("toolkit") is None and g25.images_gap
    g26 = government_ready("26.3")
    assert not {"gds", "ccManager", "gdrcopy"} & g26.components
    assert g26.covers("node-feature-discovery") and g26.images == {}
    assert government_ready("26.7").status == "cannot-verify"


def test_the_26_3_exclusions_are_the_reference_note(shared_dir: Path) -> None:
    reference = (shared_dir / "reference" / "support-matrix.yaml").read_text(encoding="utf-8")
    assert "in 26.3 all matrix components except GDS driver, CC manager and GDRCopy driver" in reference
    assert "government-ready" in reference and "still says components are government-ready" in reference


def test_cluster_autoscaler_facts() -> None:
    assert autoscaling.gpu_label("aws") == "k8s.amazonaws.com/accelerator"
    assert autoscaling.gpu_label("gce") == "cloud.google.com/gke-accelerator"
    # cluster-autoscaler follows the Kubernetes minor; its Azure provider's label changed in 1.32.0
    assert autoscaling.gpu_label("azure", "1.31") == "accelerator"
    assert autoscaling.gpu_label("azure", "1.32") == "kubernetes.azure.com/accelerator"
    assert autoscaling.gpu_label("aws", "1.29") == autoscaling.gpu_label("aws", "1.36")
    assert autoscaling.gpu_label("other") is None
    assert autoscaling.ready_gpu_resource() == "nvidia.com/gpu"
    assert autoscaling.unready_limits() == (3, 45)
    assert autoscaling.startup_taint_prefixes()[0] == "startup-taint.cluster-autoscaler.kubernetes.io/"
    assert autoscaling.operator_removes_taints() is False
    data = yaml.safe_load((Path(autoscaling.__file__).parent / "data" / "autoscaling.yaml").read_text())
    assert len(data["source"]) >= 5


@pytest.mark.parametrize("cloud", ["aws", "gce", "azure", "other"])
def test_every_cloud_of_the_spec_has_an_entry(cloud: str) -> None:
    assert cloud in read_data_file("autoscaling")["cluster_autoscaler"]["gpu_labels"]
