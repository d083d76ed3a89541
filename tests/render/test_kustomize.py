"""Every rendered overlay and Flux folder builds with the real `kubectl kustomize`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.render.writer import write_output

from .fleets import GOLDEN_SETTINGS, coverage_clusters, render_dir, write_fleet


def _build(kubectl: str, directory: Path, *extra: str) -> list[dict[str, Any]]:
    proc = subprocess.run([kubectl, "kustomize", *extra, str(directory)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, f"kustomize build {directory} failed:\n{proc.stderr}"
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kustomize")
    out = root / "rendered"
    write_output(out, render_dir(write_fleet(root, coverage_clusters("v26.7.0"), settings=GOLDEN_SETTINGS)))
    return out


def test_cluster_overlays_build(rendered: Path, kubectl: str) -> None:
    for overlay in sorted((rendered / "clusters").iterdir()):
        listed = yaml.safe_load((overlay / "kustomization.yaml").read_text())["resources"]
        objects = _build(kubectl, overlay)
        expected = sum(
            len([d for d in yaml.safe_load_all((overlay / name).read_text()) if d]) for name in listed
        )
        assert len(objects) == expected, overlay.name
        kinds = {o["kind"] for o in objects}
        assert "Role" in kinds and "ClusterRoleBinding" in kinds


def test_flux_folders_build(rendered: Path, kubectl: str) -> None:
    for cluster in sorted((rendered / "gitops" / "flux").iterdir()):
        top = _build(kubectl, cluster)
        assert [o["kind"] for o in top] == ["Kustomization"] * 4
        # release → overlay → acceptance Jobs and monitoring (optional CRDs), each waiting for the one before it
        depends = {o["metadata"]["name"]: o["spec"].get("dependsOn") for o in top}
        release_name = f"{cluster.name}-gpu-operator"
        assert depends == {release_name: None, f"{release_name}-overlay": [{"name": release_name}],
                           f"{release_name}-acceptance": [{"name": f"{release_name}-overlay"}],
                           f"{release_name}-monitoring": [{"name": f"{release_name}-overlay"}]}
        # Flux's kustomize-controller builds with load restrictions off (files anywhere in the source).
        release = _build(kubectl, cluster / "release", "--load-restrictor", "LoadRestrictionsNone")
        by_kind = {o["kind"]: o for o in release}
        values_map = by_kind["ConfigMap"]
        helm_release = by_kind["HelmRelease"]
        assert helm_release["spec"]["valuesFrom"][0]["name"] == values_map["metadata"]["name"]  # hash suffix followed
        values = yaml.safe_load(values_map["data"]["values.yaml"])
        assert values == yaml.safe_load((rendered / "clusters" / cluster.name / "gpu-operator.values.yaml").read_text())


def test_committed_example_overlays_build(kubectl: str) -> None:
    repo = Path(__file__).resolve().parents[2]
    overlays = sorted((repo / "rendered" / "clusters").iterdir())
    assert overlays, "rendered/ of the example fleet is missing"
    for overlay in overlays:
        assert _build(kubectl, overlay)
