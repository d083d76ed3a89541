"""helm template of the project's mini GPU Operator chart with the real helm, and its cache."""

from __future__ import annotations

import shutil
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.errors import GpuspecError
from gpuspec.verify.helm import chart_digest, chart_metadata, helm_template, normalize_kube_version
from gpuspec.verify.manifests import Manifest
from gpuspec.verify.schemas import CrdSet, validate_object

VALUES = {
    "operator": {"repository": "registry.example.com/nvidia", "version": "v25.10.1"},
    "validator": {"repository": "registry.example.com/nvidia/cloud-native", "version": "v25.10.1"},
    "mig": {"strategy": "mixed"},
    "driver": {
        "repository": "registry.example.com/nvidia",
        "version": "570.124.06",
        "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 2, "maxUnavailable": "25%",
                          "drain": {"enable": True, "timeoutSeconds": 600}},
    },
    "devicePlugin": {"config": {"name": "time-slicing-config", "default": "any"}},
    "migManager": {"config": {"name": "custom-mig-config", "default": "all-disabled"}},
}


def _write_values(directory: Path, values: dict[str, Any], name: str = "values.yaml") -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(values, sort_keys=True))
    return path


def _by_kind(manifests: tuple[Manifest, ...], kind: str) -> dict[str, Any]:
    [found] = [m.obj for m in manifests if m.kind == kind]
    return found


def test_mini_chart_renders_from_values(tmp_path: Path, mini_chart: Path, helm_bin: Path) -> None:
    values = _write_values(tmp_path, VALUES)
    result = helm_template(mini_chart, [values], kube_version="1.31", version="v25.10.1", helm=helm_bin,
                           cache_dir=tmp_path / "cache")
    assert result.ok, result.error
    assert [m.ref() for m in result.manifests] == [
        "CustomResourceDefinition/clusterpolicies.nvidia.com", "Deployment/gpu-operator",
        "ClusterPolicy/cluster-policy",
    ]
    assert result.manifests[0].source == "gpu-operator/crds/nvidia.com_clusterpolicies.yaml"
    deployment = _by_kind(result.manifests, "Deployment")
    assert deployment["metadata"]["namespace"] == "gpu-operator"
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example.com/nvidia/gpu-operator:v25.10.1"
    spec = _by_kind(result.manifests, "ClusterPolicy")["spec"]
    assert spec["mig"] == {"strategy": "mixed"}
    assert (spec["driver"]["repository"], spec["driver"]["image"], spec["driver"]["version"]) == (
        "registry.example.com/nvidia", "driver", "570.124.06")
    assert spec["driver"]["upgradePolicy"]["maxParallelUpgrades"] == 2
    assert spec["driver"]["upgradePolicy"]["drain"]["timeoutSeconds"] == 600
    assert spec["devicePlugin"]["config"] == {"name": "time-slicing-config", "default": "any"}
    assert spec["migManager"]["config"] == {"name": "custom-mig-config", "default": "all-disabled"}
    assert spec["toolkit"]["version"] == "v1.18.0"  # chart default kept


def test_rendered_objects_validate(tmp_path: Path, mini_chart: Path, helm_bin: Path, upstream_dir: Path) -> None:
    """The mini chart's ClusterPolicy is valid against its own CRD and against the real v25.10.1 CRD."""
    values = _write_values(tmp_path, VALUES)
    result = helm_template(mini_chart, [values], kube_version="1.31", helm=helm_bin, cache_dir=None)
    own = CrdSet.from_paths([mini_chart / "crds"])
    real = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v25.10.1" / "crds"])
    for manifest in result.manifests:
        assert validate_object(manifest.obj, crds=own, kube_version="1.31") == [], manifest.ref()
        assert validate_object(manifest.obj, crds=real, kube_version="1.31") == [], manifest.ref()


def test_bad_values_render_but_fail_the_crd(tmp_path: Path, mini_chart: Path, helm_bin: Path) -> None:
    values = _write_values(tmp_path, {**VALUES, "mig": {"strategy": "both"},
                                      "operator": {"defaultRuntime": "podman"}})
    result = helm_template(mini_chart, [values], kube_version="1.31", helm=helm_bin, cache_dir=None)
    assert result.ok
    own = CrdSet.from_paths([mini_chart / "crds"])
    errors = own.validate(_by_kind(result.manifests, "ClusterPolicy"))
    assert [e.path for e in errors] == ["$.spec.mig.strategy", "$.spec.operator.defaultRuntime"]


def test_cache_hit_on_rerun(tmp_path: Path, mini_chart: Path, helm_bin: Path) -> None:
    values = _write_values(tmp_path, VALUES)
    cache = tmp_path / "cache"
    started = time.perf_counter()
    cold = helm_template(mini_chart, [values], kube_version="1.31", helm=helm_bin, cache_dir=cache)
    cold_time = time.perf_counter() - started
    started = time.perf_counter()
    warm = helm_template(mini_chart, [values], kube_version="1.31", helm=helm_bin, cache_dir=cache)
    warm_time = time.perf_counter() - started
    assert cold.ok and not cold.cached
    assert warm.ok and warm.cached
    assert warm.cache_key == cold.cache_key
    assert [m.obj for m in warm.manifests] == [m.obj for m in cold.manifests]
    assert warm_time < cold_time
    assert len(list(cache.glob("*.json"))) == 1
    # Another path with the same content is still a hit: the key is the content, not the file name.
    same = _write_values(tmp_path, VALUES, "copy.yaml")
    assert helm_template(mini_chart, [same], kube_version="1.31", helm=helm_bin, cache_dir=cache).cached


@pytest.mark.parametrize("change", ["values", "kube", "namespace", "chart", "crds"])
def test_cache_miss_when_an_input_changes(tmp_path: Path, mini_chart: Path, helm_bin: Path, change: str) -> None:
    chart = tmp_path / "chart"
    shutil.copytree(mini_chart, chart)
    values = _write_values(tmp_path, VALUES)
    cache = tmp_path / "cache"
    base = helm_template(chart, [values], kube_version="1.31", helm=helm_bin, cache_dir=cache)
    kwargs: dict[str, Any] = {"kube_version": "1.31", "helm": helm_bin, "cache_dir": cache}
    if change == "values":
        values = _write_values(tmp_path, {**VALUES, "mig": {"strategy": "single"}})
    elif change == "kube":
        kwargs["kube_version"] = "1.32"
    elif change == "namespace":
        kwargs["namespace"] = "nvidia-gpu-operator"
    elif change == "chart":
        (chart / "templates" / "operator.yaml").write_text(
            (chart / "templates" / "operator.yaml").read_text().replace("replicas: 1", "replicas: 2"))
    else:
        kwargs["include_crds"] = False
    again = helm_template(chart, [values], **kwargs)
    assert again.ok and not again.cached
    assert again.cache_key != base.cache_key


def test_packaged_chart(tmp_path: Path, mini_chart: Path, helm_bin: Path) -> None:
    archive = tmp_path / "gpu-operator-v25.10.1.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(mini_chart, arcname="gpu-operator")
    assert chart_metadata(archive)["version"] == "v25.10.1"
    result = helm_template(archive, [], kube_version="1.31", version="25.10.1", helm=helm_bin, cache_dir=None)
    assert result.ok, result.error
    assert {m.kind for m in result.manifests} == {"CustomResourceDefinition", "Deployment", "ClusterPolicy"}
    assert chart_digest(archive) != chart_digest(mini_chart)


def test_chart_version_mismatch(mini_chart: Path, helm_bin: Path) -> None:
    result = helm_template(mini_chart, [], kube_version="1.31", version="v25.3.4", helm=helm_bin, cache_dir=None)
    assert not result.ok
    assert "has version 'v25.10.1', expected 'v25.3.4'" in result.error


def test_kube_version_below_chart_minimum(mini_chart: Path, helm_bin: Path, tmp_path: Path) -> None:
    result = helm_template(mini_chart, [], kube_version="1.15", helm=helm_bin, cache_dir=tmp_path / "c")
    assert not result.ok
    assert "incompatible with Kubernetes v1.15" in result.error
    # failures are cached too (same inputs, same answer)
    again = helm_template(mini_chart, [], kube_version="1.15", helm=helm_bin, cache_dir=tmp_path / "c")
    assert again.cached and not again.ok and again.error == result.error


def test_template_error(tmp_path: Path, mini_chart: Path, helm_bin: Path) -> None:
    chart = tmp_path / "chart"
    shutil.copytree(mini_chart, chart)
    (chart / "templates" / "broken.yaml").write_text("{{ .Values.operator.nope.deeper }}\n")
    result = helm_template(chart, [], kube_version="1.31", helm=helm_bin, cache_dir=None)
    assert not result.ok
    assert result.error.startswith("helm template failed:")
    assert "broken.yaml" in result.error


def test_input_errors(tmp_path: Path, mini_chart: Path, helm_bin: Path) -> None:
    with pytest.raises(GpuspecError, match="values file not found"):
        helm_template(mini_chart, [tmp_path / "missing.yaml"], kube_version="1.31", helm=helm_bin)
    with pytest.raises(GpuspecError, match="invalid Kubernetes version"):
        helm_template(mini_chart, [], kube_version="latest", helm=helm_bin)
    with pytest.raises(GpuspecError, match="not a Helm chart"):
        helm_template(tmp_path, [], kube_version="1.31", helm=helm_bin, cache_dir=None)
    assert normalize_kube_version("v1.31.4") == "1.31"
