"""kubectl kustomize of overlays with the real, pinned kubectl."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.errors import GpuspecError
from gpuspec.tools import KustomizeCommand
from gpuspec.verify.kustomize import kustomize_build
from gpuspec.verify.schemas import CrdSet, validate_object


def _overlay(directory: Path, *, missing_resource: bool = False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    resources = ["namespace.yaml", "quota.yaml", "mig-config.yaml"] + (["absent.yaml"] if missing_resource else [])
    (directory / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: gpu-operator\n"
        "commonLabels:\n  app.kubernetes.io/managed-by: gpuspec\n"
        "resources:\n" + "".join(f"  - {r}\n" for r in resources)
    )
    (directory / "namespace.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gpu-operator\n"
        "  labels:\n    pod-security.kubernetes.io/enforce: privileged\n"
    )
    (directory / "quota.yaml").write_text(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: gpu-quota\n"
        "spec:\n  hard:\n    requests.nvidia.com/gpu: \"8\"\n"
    )
    (directory / "mig-config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: custom-mig-config\n"
        "data:\n  config.yaml: |\n    version: v1\n    mig-configs:\n      all-1g.10gb:\n"
        "        - devices: all\n          mig-enabled: true\n          mig-devices:\n            1g.10gb: 7\n"
    )
    return directory


def test_overlay_builds(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    result = kustomize_build(_overlay(tmp_path / "overlay"), kustomize=kustomize_cmd)
    assert result.ok, result.error
    assert sorted(m.ref() for m in result.manifests) == [
        "ConfigMap/custom-mig-config", "Namespace/gpu-operator", "ResourceQuota/gpu-quota",
    ]
    quota = next(m for m in result.manifests if m.kind == "ResourceQuota")
    assert quota.namespace == "gpu-operator"
    assert quota.obj["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpuspec"}
    assert quota.obj["spec"]["hard"]["requests.nvidia.com/gpu"] == "8"
    for manifest in result.manifests:
        assert validate_object(manifest.obj, crds=CrdSet(), kube_version="1.31") == []


def test_overlay_with_missing_resource_fails(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    result = kustomize_build(_overlay(tmp_path / "overlay", missing_resource=True), kustomize=kustomize_cmd)
    assert not result.ok
    assert "absent.yaml" in result.error
    assert result.manifests == ()


def test_directory_without_kustomization_fails(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    result = kustomize_build(tmp_path, kustomize=kustomize_cmd)
    assert not result.ok
    assert "kustomization" in result.error.lower()


def test_default_discovery_uses_tools_dir(tmp_path: Path, tools_bin: Path) -> None:
    result = kustomize_build(_overlay(tmp_path / "overlay"))
    assert result.ok, result.error
    assert result.argv[:2] == (str(tools_bin / "kubectl"), "kustomize")


def test_not_a_directory(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    with pytest.raises(GpuspecError, match="not a directory"):
        kustomize_build(tmp_path / "nope", kustomize=kustomize_cmd)
