"""Flux air gap: the mirror's chart source carries pull-secret, CA and proxy references, valid against the real
Flux CRDs (../shared/upstream/flux)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.loader.fleetload import load_fleet
from gpuspec.verify.schemas import CrdSet, validate_object

from .fleets import GOLDEN_SETTINGS, cluster, pool, render_dir, write_fleet

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def flux_crds(upstream: Path) -> CrdSet:
    return CrdSet.from_paths([upstream / "flux"])


def settings(**chart: Any) -> dict[str, Any]:
    data = copy.deepcopy(GOLDEN_SETTINGS)
    data["mirrors"][0]["chart"] = chart
    return data


def source(out: dict[str, bytes], name: str) -> dict[str, Any]:
    doc = yaml.safe_load(out[f"gitops/flux/{name}/release/source.yaml"])
    assert isinstance(doc, dict)
    return doc


def airgapped() -> list[dict[str, Any]]:
    return [cluster("lab", mirror="dc-north", gitops={"tool": "flux"},
                    pools=[pool("p", "L4", 4, driver={"source": "precompiled"})])]


def test_committed_example_oci_source_carries_the_references(flux_crds: CrdSet) -> None:
    doc = yaml.safe_load((REPO / "rendered/gitops/flux/infer-north/release/source.yaml").read_text())
    assert doc["kind"] == "OCIRepository"
    assert doc["spec"]["secretRef"] == {"name": "harbor-dc-north-charts"}
    assert doc["spec"]["certSecretRef"] == {"name": "acme-internal-ca"}
    assert doc["spec"]["proxySecretRef"] == {"name": "dc-north-proxy"}
    assert validate_object(doc, crds=flux_crds, kube_version="1.31") == []


def test_helm_repository_source_gets_secret_and_ca(tmp_path: Path, flux_crds: CrdSet) -> None:
    fleet = write_fleet(tmp_path, airgapped(), settings=settings(
        repository="https://charts.dc-north.acme.internal/nvidia", secretRef="chart-basic-auth",
        certSecretRef="acme-internal-ca"))
    doc = source(render_dir(fleet), "lab")
    assert doc["kind"] == "HelmRepository"
    assert doc["spec"]["secretRef"] == {"name": "chart-basic-auth"}
    assert doc["spec"]["certSecretRef"] == {"name": "acme-internal-ca"}
    assert "proxySecretRef" not in doc["spec"]
    assert validate_object(doc, crds=flux_crds, kube_version="1.31") == []
    broken = copy.deepcopy(doc)
    broken["spec"]["proxySecretRef"] = {"name": "x"}  # HelmRepository has no such field: the real CRD says so
    assert validate_object(broken, crds=flux_crds, kube_version="1.31")


def test_sources_without_references_stay_bare(tmp_path: Path) -> None:
    fleet = write_fleet(tmp_path, airgapped(), settings=settings(repository="oci://harbor.example/charts"))
    spec = source(render_dir(fleet), "lab")["spec"]
    assert not {"secretRef", "certSecretRef", "proxySecretRef"} & set(spec)


def test_proxy_reference_on_a_helm_repository_is_a_spec_error(tmp_path: Path) -> None:
    fleet = write_fleet(tmp_path, airgapped(), settings=settings(
        repository="https://charts.example/nvidia", proxySecretRef="proxy"))
    result = load_fleet(fleet)
    assert result.fleet is None
    [finding] = result.findings
    assert finding.file is not None and finding.file.endswith("fleet.yaml")
    assert "proxySecretRef needs an oci:// chart repository" in finding.message
