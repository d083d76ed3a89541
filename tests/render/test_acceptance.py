"""Acceptance checks: per pool a Job asking for exactly what the pool advertises, run by Argo CD / Flux."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
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


# ----------------------------------------------------------------------------- the checks of issue 25

RDMA = pool("rdma", nodes=4, devices={"rdma": True},
            acceptance={"nccl": {"minBusBandwidthGbps": 180.5, "resources": {"rdma/rdma_shared_device_a": 1}}})
RDMA_CLUSTER = {"operator": {"version": "v26.7.0", "operands": {"rdma": True}}}


def _all(out: dict[str, bytes], name: str, kind: str) -> list[dict[str, Any]]:
    return [d for d in _docs(out, name) if d["kind"] == kind]


def test_each_pool_gets_the_checks_of_what_it_advertises(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=[*POOLS, RDMA], **RDMA_CLUSTER)]))
    assert _checks(out, "c1") == {
        "whole": ["smoke", "all-gpus", "dcgm-diag"],  # no RDMA: no all-reduce
        "sliced": ["smoke", "shared"],
        "renamed": ["smoke", "shared"],
        "mig": ["smoke", "mig"],
        "rdma": ["smoke", "all-gpus", "nccl", "dcgm-diag"],
    }
    for job in _all(out, "c1", "Job"):
        labels = job["metadata"]["labels"]
        assert labels["gpuspec.io/acceptance"] == "true"
        assert job["spec"]["template"]["metadata"]["labels"]["gpuspec.io/check"] == labels["gpuspec.io/check"]
        assert job["metadata"]["name"].startswith(f"acceptance-{labels['gpuspec.io/pool']}-")
        assert len(job["metadata"]["name"]) <= 58
        pod = job["spec"]["template"]["spec"]
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            # no BestEffort pod: CPU and memory requested and limited
            assert set(c["resources"]["requests"]) == {"cpu", "memory"}, job["metadata"]["name"]
            assert {"cpu", "memory"} <= set(c["resources"]["limits"])
            assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
            assert c["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_all_gpus_and_dcgm_use_every_gpu_of_a_sample_of_nodes(tmp_path: Path) -> None:
    pools = [pool("big", nodes=10, acceptance={"sampleNodes": 3, "dcgmDiag": {"level": 2}}), pool("one", nodes=1)]
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=pools, acceptance={"sampleNodes": 4})]))
    big, one = _jobs(out, "c1", "all-gpus")["big"], _jobs(out, "c1", "all-gpus")["one"]
    assert (big["spec"]["completions"], big["spec"]["parallelism"], big["spec"]["completionMode"]) == (3, 3, "Indexed")
    assert one["spec"]["completions"] == 1  # the cluster's sample of 4, capped at the pool's one node
    assert _requests(big) == [{"nvidia.com/gpu": 8}]  # the node's whole advertised resource
    affinity = big["spec"]["template"]["spec"]["affinity"]
    [term] = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"] == {"gpuspec.io/job": big["metadata"]["name"]}
    assert big["spec"]["template"]["metadata"]["labels"]["gpuspec.io/job"] == big["metadata"]["name"]
    dcgm = _jobs(out, "c1", "dcgm-diag")["big"]
    [container] = dcgm["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"  # the pinned release's
    assert container["command"][-1].endswith("\ndcgmi diag -r 2\n")
    assert _requests(dcgm) == [{"nvidia.com/gpu": 8}] and dcgm["spec"]["completions"] == 3
    assert dcgm["spec"]["activeDeadlineSeconds"] == 1200  # level 2 takes minutes
    images = out["clusters/c1/images.txt"].decode().splitlines()
    assert "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04" in images


def test_the_all_gpus_command_fails_when_one_gpu_fails(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=[pool("p", count=4)])]))
    [container] = _jobs(out, "c1", "all-gpus")["p"]["spec"]["template"]["spec"]["containers"]
    shell, flag, script = container["command"]
    fake = tmp_path / "sample"
    ran = tmp_path / "ran"
    fake.write_text(f'#!/bin/sh\necho "$CUDA_VISIBLE_DEVICES" >> {ran}\n[ "$CUDA_VISIBLE_DEVICES" != "$BROKEN" ]\n')
    fake.chmod(0o755)
    script = script.replace("/cuda-samples/sample", str(fake))
    assert subprocess.run([shell, flag, script], env={"BROKEN": "none"}, capture_output=True).returncode == 0
    assert ran.read_text().split() == ["0", "1", "2", "3"]  # each of the node's 4 GPUs in turn
    assert subprocess.run([shell, flag, script], env={"BROKEN": "2"}, capture_output=True).returncode != 0


def test_mig_and_shared_pools_test_what_they_advertise(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=POOLS)]))
    mig = _jobs(out, "c1", "mig")["mig"]
    # the layout's full count per node: 4 GPUs x 7 1g.10gb, 4 GPUs x 2 3g.40gb
    assert _requests(mig) == [{"nvidia.com/mig-1g.10gb": 28}, {"nvidia.com/mig-3g.40gb": 8}]
    assert mig["spec"]["completions"] == 2 and "podAntiAffinity" in mig["spec"]["template"]["spec"]["affinity"]
    shared = _jobs(out, "c1", "shared")
    # every replica of one node's 4 GPUs at once, all on that node
    assert shared["sliced"]["spec"]["parallelism"] == shared["sliced"]["spec"]["completions"] == 16
    assert shared["renamed"]["spec"]["completions"] == 8
    assert _requests(shared["renamed"]) == [{"nvidia.com/gpu.shared": 1}]
    affinity = shared["sliced"]["spec"]["template"]["spec"]["affinity"]
    assert affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == (
        "kubernetes.io/hostname")


def test_nccl_runs_across_nodes_without_mpi(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=[RDMA], **RDMA_CLUSTER)]))
    job = _jobs(out, "c1", "nccl")["rdma"]
    [service] = _all(out, "c1", "Service")
    script = next(d for d in _all(out, "c1", "ConfigMap") if d["metadata"]["name"] == "acceptance-rdma-nccl")
    name = job["metadata"]["name"]
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    assert service["spec"]["selector"] == {"gpuspec.io/pool": "rdma", "gpuspec.io/check": "nccl"}
    pod = job["spec"]["template"]["spec"]
    assert pod["subdomain"] == service["metadata"]["name"]
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == 2  # the default sample
    assert job["metadata"]["annotations"]["gpuspec.io/min-busbw-gbps"] == "180.5"
    assert job["spec"]["activeDeadlineSeconds"] == 1800  # a first pull of the PyTorch image takes minutes
    [container] = pod["containers"]
    assert container["image"] == "nvcr.io/nvidia/pytorch:25.01-py3"
    command = container["command"]
    assert command[:4] == ["torchrun", "--nnodes=2", "--nproc-per-node=8", "--node-rank=$(JOB_COMPLETION_INDEX)"]
    assert f"--master-addr={name}-0.acceptance-rdma-nccl" in command
    assert {"name": "GPUSPEC_MIN_BUSBW_GBPS", "value": "180.5"} in container["env"]
    assert _requests(job) == [{"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1}]
    assert container["terminationMessagePath"] == "/dev/termination-log"
    source = script["data"]["allreduce.py"]
    compile(source, "allreduce.py", "exec")  # valid Python
    assert '"busbw_gbps"' in source and "2 * (world - 1) / world" in source
    assert "nvcr.io/nvidia/pytorch:25.01-py3" in out["clusters/c1/images.txt"].decode().splitlines()
    # too few nodes, or no RDMA and not asked for: no all-reduce
    small = render_dir(write_fleet(tmp_path / "s", [cluster("c1", pools=[pool("rdma", nodes=1, devices={"rdma": True})],
                                                            **RDMA_CLUSTER)]))
    assert "nccl" not in _checks(small, "c1")["rdma"]
    asked = render_dir(write_fleet(tmp_path / "a", [cluster("c1", pools=[pool("p", acceptance={"nccl": {
        "enabled": True, "nodes": 3, "image": "nvcr.io/nvidia/pytorch:24.12-py3"}}, nodes=5)])]))
    job = _jobs(asked, "c1", "nccl")["p"]
    assert job["spec"]["completions"] == 3 and "gpuspec.io/min-busbw-gbps" not in job["metadata"]["annotations"]
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "nvcr.io/nvidia/pytorch:24.12-py3"


WORKLOADS = [
    {"name": "train", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "command": ["python", "-c", "import torch"],
     "gpus": 2, "replicas": 3, "resources": {"cpu": "4", "memory": "16Gi", "memoryLimit": "32Gi"},
     "deadlineSeconds": 900},
    {"name": "serve", "image": "nvcr.io/nvidia/tritonserver:25.01-py3", "args": ["--model-repository=/tmp"],
     "ready": {"path": "/v2/health/ready", "port": 8000}, "readinessBudgetSeconds": 300},
]


def test_the_teams_workloads_accept_the_pool(tmp_path: Path) -> None:
    pools = [pool("whole", acceptance={"workloads": WORKLOADS, "readinessBudgetSeconds": 120})]
    fleet = write_fleet(tmp_path, [cluster("c1", mirror="dc-north", pools=pools, kubernetes={"version": "1.33"})],
                        settings=example_settings())
    out = render_dir(fleet)
    assert _checks(out, "c1")["whole"][-2:] == ["workload-train", "workload-serve"]
    train = _jobs(out, "c1", "workload-train")["whole"]
    assert train["spec"]["completions"] == train["spec"]["parallelism"] == 3
    assert train["spec"]["activeDeadlineSeconds"] == 900
    assert train["metadata"]["annotations"]["gpuspec.io/readiness-budget-seconds"] == "120"  # the pool's
    [main] = train["spec"]["template"]["spec"]["containers"]
    assert main["image"] == "harbor.dc-north.acme.internal/nvcr/nvidia/pytorch:25.01-py3"
    assert main["command"] == ["python", "-c", "import torch"]
    assert main["resources"] == {"requests": {"cpu": "4", "memory": "16Gi"},
                                 "limits": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": 2}}
    serve = _jobs(out, "c1", "workload-serve")["whole"]
    assert serve["metadata"]["annotations"]["gpuspec.io/readiness-budget-seconds"] == "300"  # its own
    pod = serve["spec"]["template"]["spec"]
    [sidecar] = pod["initContainers"]
    assert sidecar["restartPolicy"] == "Always"
    assert sidecar["startupProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": 8000}
    assert sidecar["startupProbe"]["failureThreshold"] * sidecar["startupProbe"]["periodSeconds"] == 1800
    [done] = pod["containers"]
    assert done["securityContext"]["runAsUser"] == 65534
    images = out["clusters/c1/images.txt"].decode().splitlines()
    assert {"harbor.dc-north.acme.internal/nvcr/nvidia/pytorch:25.01-py3",
            "harbor.dc-north.acme.internal/nvcr/nvidia/tritonserver:25.01-py3"} <= set(images)
    assert pod["imagePullSecrets"] == [{"name": "harbor-dc-north-pull"}]
    crds = CrdSet.from_paths([])
    for doc in _docs(out, "c1"):
        assert validate_object(doc, crds=crds, kube_version="1.33") == [], doc["metadata"]["name"]


def test_every_object_of_every_check_validates(tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=[*POOLS, RDMA], **RDMA_CLUSTER)]))
    crds = CrdSet.from_paths([])
    docs = _docs(out, "c1")
    assert {d["kind"] for d in docs} == {"Job", "Namespace", "ConfigMap", "Service"}
    for doc in docs:
        assert validate_object(doc, crds=crds, kube_version="1.31") == [], doc["metadata"]["name"]


def test_a_changed_check_setting_renames_its_jobs(tmp_path: Path) -> None:
    first = render_dir(write_fleet(tmp_path / "a", [cluster("c1", pools=POOLS[:1])]))
    second = render_dir(write_fleet(tmp_path / "b", [cluster("c1", pools=POOLS[:1], acceptance={"sampleNodes": 1})]))
    for check in ("all-gpus", "dcgm-diag"):
        assert _jobs(first, "c1", check)["whole"]["metadata"]["name"] != _jobs(second, "c1", check)["whole"][
            "metadata"]["name"]


def test_a_shared_mig_pool_runs_every_replica_of_its_instances(tmp_path: Path) -> None:
    shared_mig = pool("smig", "A100-SXM4-80GB", mig={"strategy": "single", "custom": [
        {"devices": "all", "profiles": {"1g.10gb": 7}}]},
        sharing={"mode": "time-slicing", "replicas": 2, "justification": "t"})
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=[shared_mig])]))
    assert _checks(out, "c1")["smig"] == ["smoke", "shared"]  # no mig check: shared devices are what it offers
    assert _jobs(out, "c1", "shared")["smig"]["spec"]["completions"] == 8 * 7 * 2


def test_a_changed_image_pin_renames_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.render import acceptance_plan

    fleet = write_fleet(tmp_path, [cluster("c1", pools=[RDMA], **RDMA_CLUSTER)])
    before = _jobs(render_dir(fleet), "c1", "nccl")["rdma"]["metadata"]["name"]
    monkeypatch.setattr(acceptance_plan, "nccl_image", lambda: "nvcr.io/nvidia/pytorch:25.02-py3")
    import gpuspec.render.acceptance as acceptance

    monkeypatch.setattr(acceptance, "nccl_image", lambda: "nvcr.io/nvidia/pytorch:25.02-py3")
    after = _jobs(render_dir(fleet), "c1", "nccl")["rdma"]
    assert after["spec"]["template"]["spec"]["containers"][0]["image"] == "nvcr.io/nvidia/pytorch:25.02-py3"
    assert after["metadata"]["name"] != before  # same spec, new content: a new Job
    assert after["spec"]["template"]["metadata"]["labels"]["gpuspec.io/job"] == after["metadata"]["name"]


def test_a_vm_pool_gets_no_job_it_could_never_schedule(tmp_path: Path) -> None:
    """A sandbox (VM passthrough) pool runs no container device plugin, so nothing advertises nvidia.com/gpu there."""
    out = render_dir(write_fleet(tmp_path, [cluster(
        "c1", operator={"version": "v26.7.0", "operands": {"sandboxWorkloads": True}},
        pools=[pool("vm", devices={"sandbox": True}), pool("containers")])]))
    assert set(_checks(out, "c1")) == {"containers"}


def _plain_json(data: Any, where: str = "") -> list[str]:
    """Where ``data`` holds anything but the exact types a JSON round trip returns (dict with str keys, list, str,
    int, float, bool, None): a tuple, an enum member or another subclass is written otherwise by the YAML writer."""
    kind = type(data)
    if kind is dict:
        return [f"{where}: key {k!r}" for k in data if type(k) is not str] + [
            p for k, v in data.items() for p in _plain_json(v, f"{where}.{k}")]
    if kind is list:
        return [p for i, v in enumerate(data) for p in _plain_json(v, f"{where}[{i}]")]
    return [] if kind in (str, int, float, bool, type(None)) else [f"{where}: {kind.__name__}"]


def test_the_objects_of_every_check_are_built_as_plain_data_with_their_name(tmp_path: Path) -> None:
    """The checks' objects are built directly with the Job's name (no JSON round trip copies them): every kind of
    check writes only plain JSON types, holds its own name where the name goes, and shares no container with the
    spec's models or with another check."""
    import json

    from gpuspec.render.acceptance import _PLACEHOLDER, acceptance_checks
    from gpuspec.render.compile import compile_cluster
    from gpuspec.render.context import cluster_context

    from .fleets import load

    pools = [*POOLS, RDMA, pool("work", acceptance={"workloads": WORKLOADS, "eviction": {"enabled": True}},
                                nodes=3)]
    fleet = load(write_fleet(tmp_path, [cluster("c1", pools=pools, mirror="dc-north", **RDMA_CLUSTER)],
                             settings=example_settings()))
    [c1] = fleet.clusters
    plan = compile_cluster(fleet, c1, "")
    checks = acceptance_checks(cluster_context(fleet, c1), {p: f.documents for p, f in plan.files.items()
                                                           if "/acceptance/" not in p and hasattr(f, "documents")})
    assert {c.check for c in checks} >= {"smoke", "all-gpus", "nccl", "dcgm-diag", "mig", "shared", "eviction",
                                         "workload-train", "workload-serve"}
    seen: dict[int, str] = {}
    for check in checks:
        for doc in check.documents:
            assert _plain_json(doc) == [], check.job
            text = json.dumps(doc)
            assert _PLACEHOLDER not in text and json.loads(text) == doc
            stack: list[Any] = [doc]
            while stack:  # no container is shared with another check's objects (each is its own copy)
                item = stack.pop()
                if isinstance(item, dict | list):
                    assert seen.setdefault(id(item), check.job) == check.job, check.job
                    stack.extend(item.values() if isinstance(item, dict) else item)
        job = check.documents[-1]
        assert job["metadata"]["name"] == check.job
        assert job["spec"]["template"]["metadata"]["labels"]["gpuspec.io/job"] == check.job
    for p in c1.pools:  # no object reaches into the models: the spec is as it was read
        assert all(id(v) not in seen for v in (p.node_selector, p.acceptance.workloads))
