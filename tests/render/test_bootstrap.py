"""Bootstrap objects on request: Argo CD AppProject (only the rendered sources, destinations and namespaces) and
app of apps, Flux GitRepository; valid against the real Argo CD and Flux CRDs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.verify.schemas import CrdSet, validate_object

from .fleets import GOLDEN_SETTINGS, cluster, pool, render_dir, write_fleet

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def crds(upstream: Path) -> CrdSet:
    return CrdSet.from_paths([upstream / "argocd", upstream / "flux"])


def fleet_settings(**bootstrap: bool) -> dict[str, Any]:
    data = copy.deepcopy(GOLDEN_SETTINGS)
    data["bootstrap"] = bootstrap
    return data


def clusters() -> list[dict[str, Any]]:
    small = [pool("p", "L4", 4, driver={"source": "precompiled"})]
    return [
        cluster("a", pools=small, gitops={"tool": "argocd", "argocd": {"project": "gpu", "destination": {"name": "a"}}},
                tenants=[{"name": "t", "namespaces": ["team-t"], "pools": ["p"]}]),
        cluster("b", pools=small, mirror="dc-north",
                gitops={"tool": "argocd", "argocd": {"project": "gpu", "destination": {"server": "https://b:6443"}}}),
        cluster("c", pools=small, gitops={"tool": "argocd"}),  # project default: no AppProject of ours
        cluster("d", pools=small, gitops={"tool": "flux", "flux": {"source": "fleet-repo"}}),
    ]


def docs(out: dict[str, bytes], prefix: str) -> dict[str, Any]:
    return {path: yaml.safe_load(data) for path, data in out.items() if path.startswith(prefix)}


def test_committed_example_bootstrap_validates(crds: CrdSet) -> None:
    files = sorted((REPO / "rendered" / "gitops").glob("*/_bootstrap/*.yaml"))
    kinds = sorted(yaml.safe_load(p.read_text())["kind"] for p in files)
    assert kinds == ["AppProject", "Application", "GitRepository"]
    for path in files:
        assert validate_object(yaml.safe_load(path.read_text()), crds=crds, kube_version="1.31") == [], path


def test_app_project_allows_only_what_is_rendered(tmp_path: Path, crds: CrdSet) -> None:
    out = render_dir(write_fleet(tmp_path, clusters(), settings=fleet_settings(argocd=True, flux=True)))
    argo = docs(out, "gitops/argocd/_bootstrap/")
    assert sorted(argo) == ["gitops/argocd/_bootstrap/gpu.appproject.yaml",
                            "gitops/argocd/_bootstrap/gpuspec-fleet.application.yaml"]
    project = argo["gitops/argocd/_bootstrap/gpu.appproject.yaml"]
    assert project["spec"]["destinations"] == [
        {"name": "a", "namespace": "gpu-operator"}, {"name": "a", "namespace": "gpuspec-acceptance"},
        {"name": "a", "namespace": "team-t"},
        {"namespace": "gpu-operator", "server": "https://b:6443"},
        {"namespace": "gpuspec-acceptance", "server": "https://b:6443"},
    ]
    assert project["spec"]["sourceRepos"] == sorted([
        GOLDEN_SETTINGS["git"]["repoURL"], "https://helm.ngc.nvidia.com/nvidia",
        "harbor.dc-north.acme.internal/charts/nvidia"])
    parent = argo["gitops/argocd/_bootstrap/gpuspec-fleet.application.yaml"]
    assert parent["spec"]["source"]["path"] == "rendered/gitops/argocd"
    assert parent["spec"]["source"]["directory"] == {"recurse": True}
    flux = docs(out, "gitops/flux/_bootstrap/")
    [repo] = flux.values()
    assert repo["metadata"]["name"] == "fleet-repo" and repo["spec"]["ref"] == {"branch": "main"}
    for doc in (*argo.values(), *flux.values()):
        assert validate_object(doc, crds=crds, kube_version="1.31") == []
    chart_apps = [yaml.safe_load(d) for p, d in out.items() if p.endswith("gpu-operator.application.yaml")]
    for app in chart_apps:
        if app["spec"]["project"] == "gpu":
            assert {s["repoURL"] for s in app["spec"]["sources"]} <= set(project["spec"]["sourceRepos"])
            dest = {k: v for k, v in app["spec"]["destination"].items()}
            assert dest in project["spec"]["destinations"]


def test_no_bootstrap_unless_asked(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, clusters(), settings=fleet_settings()))
    assert not [p for p in out if "_bootstrap" in p]


def test_flux_source_pins_a_commit_revision(tmp_path: Path) -> None:
    settings = fleet_settings(flux=True)
    settings["git"]["revision"] = "0123456789abcdef0123456789abcdef01234567"
    out = render_dir(write_fleet(tmp_path, clusters(), settings=settings))
    [repo] = docs(out, "gitops/flux/_bootstrap/").values()
    assert repo["spec"]["ref"] == {"commit": "0123456789abcdef0123456789abcdef01234567"}
