"""Unit tests of verify's building blocks: image references, operand discovery, the cache's boundary check."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.verify.cache import stays_inside
from gpuspec.verify.object_images import ImageRef, object_images
from gpuspec.verify.rendered import parse_images_txt


@pytest.mark.parametrize(("ref", "base", "tag", "digest"), [
    ("nvcr.io/nvidia/driver:580.95.05-ubuntu22.04", "nvcr.io/nvidia/driver", "580.95.05-ubuntu22.04", None),
    ("registry:5000/nvidia/gpu-operator", "registry:5000/nvidia/gpu-operator", None, None),
    ("registry:5000/x/y:v1@sha256:abc", "registry:5000/x/y", "v1", "sha256:abc"),
    ("busybox", "busybox", None, None),
])
def test_image_ref_parse(ref: str, base: str, tag: str | None, digest: str | None) -> None:
    parsed = ImageRef.parse(ref)
    assert (parsed.base, parsed.tag, parsed.digest) == (base, tag, digest)
    assert str(parsed) == ref
    assert parsed.name == base.rsplit("/", 1)[-1]


def test_clusterpolicy_operands_skip_disabled_sandbox_and_crd_driver() -> None:
    policy = {
        "apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
        "spec": {
            "driver": {"useNvidiaDriverCRD": True, "repository": "r", "image": "driver", "version": "1",
                       "manager": {"repository": "r/cn", "image": "k8s-driver-manager", "version": "v0.9.1"}},
            "toolkit": {"enabled": True, "repository": "r/k8s", "image": "container-toolkit", "version": "v1"},
            "dcgm": {"enabled": False, "repository": "r", "image": "dcgm", "version": "4"},
            "vfioManager": {"enabled": True, "repository": "r", "image": "cuda", "version": "13"},
            "sandboxWorkloads": {"enabled": False},
            "vgpuManager": {"enabled": False, "image": "vgpu-manager"},
            "operator": {"initContainer": {"repository": "r", "image": "cuda", "version": "sha256:abc"}},
        },
    }
    uses = object_images(policy)
    assert [(u.component, str(u.ref), u.path) for u in uses] == [
        ("driver.manager", "r/cn/k8s-driver-manager:v0.9.1", ("spec", "driver", "manager")),
        ("toolkit", "r/k8s/container-toolkit:v1", ("spec", "toolkit")),
        ("operator.initContainer", "r/cuda@sha256:abc", ("spec", "operator", "initContainer")),
    ]


def test_pod_images_of_workloads() -> None:
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"jobTemplate": {
        "spec": {"template": {"spec": {"initContainers": [{"name": "i", "image": "a:1"}],
                                       "containers": [{"name": "c", "image": "b:2"}]}}}}}}
    assert [(u.obj_ref, str(u.ref), u.path[-3:]) for u in object_images(cronjob)] == [
        ("CronJob/c", "a:1", ("initContainers", 0, "image")), ("CronJob/c", "b:2", ("containers", 0, "image"))]
    assert object_images({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}) == []


def test_images_txt_parsing() -> None:
    assert parse_images_txt("# header\n\na:1\n  b:2  # note\n") == ["a:1", "b:2"]


def test_kustomize_cache_boundary(tmp_path: Path) -> None:
    rendered = tmp_path / "rendered"
    inside = rendered / "gitops" / "x"
    inside.mkdir(parents=True)
    (rendered / "clusters").mkdir()
    kustomization = inside / "kustomization.yaml"
    kustomization.write_text("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                             "configMapGenerator:\n- name: v\n  files:\n  - values.yaml=../../clusters/v.yaml\n")
    assert stays_inside(inside, rendered)
    kustomization.write_text("resources:\n- ../../../outside\n")
    assert not stays_inside(inside, rendered)
    kustomization.write_text("resources:\n- https://github.com/example/repo//deploy?ref=v1\n")
    assert not stays_inside(inside, rendered)
