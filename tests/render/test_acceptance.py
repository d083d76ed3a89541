"""Acceptance checks: per pool a Job asking for exactly what the pool advertises, run by Argo CD / Flux."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from gpuspec.cli.main import cli
from gpuspec.verify.schemas import CrdSet, validate_object

from .fleets import cluster, compile_dir, example_settings, pool, render_dir, write_fleet

SAMPLE = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04"
TAINT = {"key": "acme.example/gpu", "value": "x", "effect": "NoSchedule"}
POOLS = [
    pool("whole", taints=[TAINT]),
    pool("sliced", "L40S", 4, sharing={"mode": "time-slicing", "replicas": 4, "justification": "t"}),
    pool("renamed", "L40S", 4, sharing={"mode": "time-slicing", "replicas": 2, "renameByDefault": True,
                                        "justification": "t"}),
    pool("mig", "A100-SXM4-80GB", mig={"strategy": "mixed", "custom": [
        {"devices": [0, 1, 2, 3], "profiles": {"1g.10gb": 7}}, {"devices": [4, 5, 6, 7], "profiles": {"3g.40gb": 2}}]}),
    pool("off", acceptance={"enabled": False}),
    pool("empty", nodes=0),
]


def _docs(out: dict[str, bytes], name: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(out[f"clusters/{name}/acceptance/acceptance.yaml"]))


def _jobs(out: dict[str, bytes], name: str, check: str = "smoke") -> dict[str, dict[str, Any]]:
    """Pool → its Job of ``check``."""
    return {d["metadata"]["labels"]["gpuspec.io/pool"]: d for d in _docs(out, name)
            if d["kind"] == "Job" and d["metadata"]["labels"]["gpuspec.io/check"] == check}


def _checks(out: dict[str, bytes], name: str) -> dict[str, list[str]]:
    """Pool → the check ids of its Jobs, in file order."""
    found: dict[str, list[str]] = {}
    for d in _docs(out, name):
        if d["kind"] == "Job":
            labels = d["metadata"]["labels"]
            found.setdefault(labels["gpuspec.io/pool"], []).append(labels["gpuspec.io/check"])
    return found


def _requests(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The device limits of each container (CPU and memory left out)."""
    return [{k: v for k, v in c["resources"]["limits"].items() if "/" in k}
            for c in job["spec"]["template"]["spec"]["containers"]]


def test_each_pool_requests_what_it_advertises(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=POOLS)]))
    jobs = _jobs(out, "c1")
    assert sorted(jobs) == ["mig", "renamed", "sliced", "whole"]  # switched off / no nodes: no Job
    assert _requests(jobs["whole"]) == [{"nvidia.com/gpu": 1}]
    assert _requests(jobs["sliced"]) == [{"nvidia.com/gpu": 1}]
    assert _requests(jobs["renamed"]) == [{"nvidia.com/gpu.shared": 1}]
    assert _requests(jobs["mig"]) == [{"nvidia.com/mig-1g.10gb": 1}, {"nvidia.com/mig-3g.40gb": 1}]
    pod = jobs["whole"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"acme.example/gpu-pool": "whole"}
    assert pod["tolerations"] == [{"key": "acme.example/gpu", "operator": "Equal", "value": "x",
                                   "effect": "NoSchedule"}]
    assert "tolerations" not in jobs["sliced"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["automountServiceAccountToken"] is False
    [container] = pod["containers"]
    assert container["image"] == SAMPLE
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["privileged"] is False
    assert {j["metadata"]["namespace"] for j in jobs.values()} == {"gpuspec-acceptance"}
    [namespace] = [d for d in _docs(out, "c1") if d["kind"] == "Namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    kustomization = yaml.safe_load(out["clusters/c1/acceptance/kustomization.yaml"])
    assert kustomization["resources"] == ["acceptance.yaml"]
    # the overlay itself does not list them: GitOps applies them after it
    assert "acceptance" not in str(yaml.safe_load(out["clusters/c1/kustomization.yaml"])["resources"])


def test_jobs_validate_against_the_kubernetes_schema(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=POOLS)]))
    crds = CrdSet.from_paths([])
    docs = _docs(out, "c1")
    assert {d["kind"] for d in docs} == {"Job", "Namespace", "ConfigMap"}  # no NCCL here: no Service
    for doc in docs:
        assert validate_object(doc, crds=crds, kube_version="1.31") == [], doc["metadata"]["name"]
    broken = next(d for d in docs if d["kind"] == "Job")
    broken["spec"]["backoffLimit"] = "once"
    assert validate_object(broken, crds=crds, kube_version="1.31") != []


def test_argocd_runs_them_as_post_sync_hooks_of_the_overlay(tmp_path: Path, upstream: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=POOLS)]))
    job = _jobs(out, "c1")["whole"]
    assert job["metadata"]["annotations"] == {
        "argocd.argoproj.io/hook": "PostSync",
        "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",  # results stay readable
    }
    app = yaml.safe_load(out["gitops/argocd/c1/overlay.application.yaml"])
    assert [s["path"] for s in app["spec"]["sources"]] == ["rendered/clusters/c1", "rendered/clusters/c1/acceptance"]
    crds = CrdSet.from_paths([upstream / "argocd"])
    assert validate_object(app, crds=crds, kube_version="1.31") == []


def test_flux_waits_for_the_jobs_after_the_overlay(tmp_path: Path, upstream: Path) -> None:
    doc = cluster("c1", pools=POOLS, gitops={"tool": "flux"})
    out = render_dir(write_fleet(tmp_path, [doc]))
    job_names = sorted(d["metadata"]["name"] for d in _docs(out, "c1") if d["kind"] == "Job")
    assert all("annotations" not in j["metadata"] for j in _jobs(out, "c1").values())
    kustomizations = list(yaml.safe_load_all(out["gitops/flux/c1/kustomizations.yaml"]))
    accept = next(k for k in kustomizations if k["metadata"]["name"] == "c1-gpu-operator-acceptance")
    spec = accept["spec"]
    assert spec["dependsOn"] == [{"name": "c1-gpu-operator-overlay"}]
    assert spec["path"] == "./rendered/clusters/c1/acceptance"
    assert spec["force"] is True and spec["wait"] is False
    assert sorted(h["name"] for h in spec["healthChecks"]) == job_names
    assert {(h["apiVersion"], h["kind"], h["namespace"]) for h in spec["healthChecks"]} == {
        ("batch/v1", "Job", "gpuspec-acceptance")}
    crds = CrdSet.from_paths([upstream / "flux"])
    for k in kustomizations:
        assert validate_object(k, crds=crds, kube_version="1.31") == [], k["metadata"]["name"]


def test_job_names_follow_the_configuration(tmp_path: Path) -> None:
    first = _jobs(render_dir(write_fleet(tmp_path / "a", [cluster("c1", pools=POOLS)])), "c1")
    again = _jobs(render_dir(write_fleet(tmp_path / "b", [cluster("c1", pools=POOLS)])), "c1")
    changed = _jobs(render_dir(write_fleet(tmp_path / "c", [cluster(
        "c1", pools=POOLS, overrides=[{"path": "daemonsets.priorityClassName", "value": "x", "reason": "r"}])])), "c1")
    names = {p: j["metadata"]["name"] for p, j in first.items()}
    assert names == {p: j["metadata"]["name"] for p, j in again.items()}
    assert all(names[p] != j["metadata"]["name"] for p, j in changed.items())  # a change runs new Jobs


def test_air_gapped_clusters_pull_the_sample_from_the_mirror(tmp_path: Path) -> None:
    settings = example_settings()
    fleet = write_fleet(tmp_path, [cluster("c1", mirror="dc-north", pools=POOLS[:1], kubernetes={"version": "1.33"})],
                        settings=settings)
    out = render_dir(fleet)
    mirrored = "harbor.dc-north.acme.internal/nvcr/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04"
    pod = _jobs(out, "c1")["whole"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == mirrored
    assert pod["imagePullSecrets"] == [{"name": "harbor-dc-north-pull"}]
    assert mirrored in out["clusters/c1/images.txt"].decode().splitlines()
    result = CliRunner().invoke(cli, ["images", str(fleet), "--cluster", "c1"])
    assert result.exit_code == 0, result.output
    assert mirrored in result.output
    # the render plan exposes the checks as plain data (plan, handover documents)
    [plan] = compile_dir(fleet).clusters
    assert plan.acceptance[0] == {
        "pool": "whole", "check": "smoke", "job": _jobs(out, "c1")["whole"]["metadata"]["name"],
        "namespace": "gpuspec-acceptance", "resources": {"nvidia.com/gpu": 1},
        "nodeSelector": {"acme.example/gpu-pool": "whole"}, "timeoutSeconds": 600,
    }
    assert [c["check"] for c in plan.acceptance] == ["smoke", "all-gpus", "dcgm-diag"]
