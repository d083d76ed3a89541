"""Rendered objects validate: custom resources against the real CRDs, built-ins against Kubernetes' schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.render.generator import STAMP_PATH
from gpuspec.verify.schemas import CrdSet, validate_object

from .fleets import UPSTREAM_TAGS, coverage_clusters, load, render_dir, write_fleet

#: kind → the CRD it must be checked against (every one of these must be found and pass).
CHECKED_KINDS = {"Application", "HelmRelease", "HelmRepository", "OCIRepository", "Kustomization",
                 "PrometheusRule", "NVIDIADriver"}
NOT_OBJECTS = ("gpu-operator.values.yaml", "node-labels.yaml", "deviations.yaml", "autoscaling.yaml", "images.txt",
               "kustomizeconfig.yaml")


def _objects(out: dict[str, bytes]) -> list[tuple[str, dict[str, Any]]]:
    objects: list[tuple[str, dict[str, Any]]] = []
    for path, data in sorted(out.items()):
        if path.endswith(NOT_OBJECTS):
            continue
        for doc in yaml.safe_load_all(data):
            if isinstance(doc, dict) and doc.get("apiVersion") != "kustomize.config.k8s.io/v1beta1":
                objects.append((path, doc))
    return objects


def _crds(upstream: Path, tag: str) -> CrdSet:
    return CrdSet.from_paths([upstream / "argocd", upstream / "flux", upstream / "prometheus-operator",
                              upstream / "gpu-operator" / tag / "crds"])


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_every_object_validates(tag: str, tmp_path: Path, upstream: Path) -> None:
    out = render_dir(write_fleet(tmp_path, coverage_clusters(tag)))
    crds = _crds(upstream, tag)
    seen: set[str] = set()
    for path, obj in _objects(out):
        errors = validate_object(obj, crds=crds, kube_version="1.31")
        assert errors == [], f"{path}: " + "; ".join(str(e) for e in errors)
        seen.add(obj["kind"])
    assert seen >= CHECKED_KINDS, CHECKED_KINDS - seen


def test_validation_can_fail(upstream: Path) -> None:
    crds = _crds(upstream, "v26.7.0")
    bad_driver = {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "x"},
                  "spec": {"driverType": "gpu", "image": "driver", "upgradePolicy": {"gpuPodDeletion": {}}}}
    assert validate_object(bad_driver, crds=crds, kube_version="1.31")
    bad_quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hardd": {}}}
    assert validate_object(bad_quota, crds=crds, kube_version="1.31")


def test_committed_example_validates(upstream: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    out = {p.relative_to(repo / "rendered").as_posix(): p.read_bytes()
           for p in (repo / "rendered").rglob("*") if p.is_file() and p.name != STAMP_PATH
           and p.suffix != ".md"}
    crds = _crds(upstream, "v26.7.0")
    kube = {c.name: c.kubernetes.version for c in load(repo / "fleet").clusters}
    for path, obj in _objects(out):
        if "/_bootstrap/" in path:
            continue  # fleet-wide bootstrap objects: tests/render/test_bootstrap.py
        cluster = path.split("/")[2] if path.startswith("gitops/") else path.split("/")[1]
        errors = validate_object(obj, crds=crds, kube_version=kube[cluster])
        assert errors == [], f"{path}: " + "; ".join(str(e) for e in errors)
