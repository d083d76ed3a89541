"""Exports of the gate and acceptance-report tests, as kubectl prints them on a real cluster.

Nodes come from the audit fixtures (labels NFD, GFD and the GPU Operator set); here they are moved through a
driver upgrade of the canary pool h100 (580.95.05 → 580.173.02): before, during (upgrade-state labels of the
upgrade controller, one node upgrade-failed) and after.  Jobs and Pods are what `kubectl get jobs,pods -n
gpuspec-acceptance -o json` shows for Jobs that completed, failed, hit their deadline or still run (Kubernetes
1.33: SuccessCriteriaMet / FailureTarget conditions before Complete / Failed, both job-name labels on pods).
"""

from __future__ import annotations

import copy
import json
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.audit.audit_fixtures import driver_labels, healthy, node_list

FLEET_DIR = Path(__file__).parent / "fixtures" / "fleet"
#: The driver the canary pool moves to, and the one every node runs before.
NEW_DRIVER = ("580", "173", "02")
OLD_DRIVER = ("580", "95", "05")
H100_NODES = ("gpu-h100-0", "gpu-h100-1")
#: Nodes of each pool of cluster lab in the fixtures.
POOL_NODES = {"h100": list(H100_NODES), "a100-mig": ["gpu-a100-0"], "l40s": ["gpu-l40s-0"]}

Obj = dict[str, Any]
T0 = datetime(2026, 8, 20, 4, 0, 0, tzinfo=UTC)


def ts(seconds: float) -> str:
    """The RFC 3339 time ``seconds`` after the fixtures' reference time."""
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- nodes through a driver upgrade -------------------------------------------------------------------------

def _node(nodes: list[Obj], name: str) -> Obj:
    return next(n for n in nodes if n["metadata"]["name"] == name)


def _cordon(node: Obj) -> None:
    node["spec"]["unschedulable"] = True
    node["spec"].setdefault("taints", []).append(
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": ts(-600)})


def before_upgrade() -> list[Obj]:
    """Every node on 580.95.05, upgrade-done from the last upgrade: the spec (580.173.02 on h100) is merged, not run."""
    return healthy()


def during_upgrade() -> list[Obj]:
    """maxParallelUpgrades 1: gpu-h100-0 is drained for the new driver, gpu-h100-1 waits for its turn."""
    nodes = healthy()
    first = _node(nodes, "gpu-h100-0")
    first["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = "drain-required"
    _cordon(first)
    _node(nodes, "gpu-h100-1")["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = "upgrade-required"
    return nodes


def upgrade_failed() -> list[Obj]:
    """gpu-h100-0 runs the new driver; on gpu-h100-1 the driver pod crash-looped: upgrade-failed, left cordoned."""
    nodes = after_upgrade()
    failed = _node(nodes, "gpu-h100-1")
    failed["metadata"]["labels"].update(driver_labels(*OLD_DRIVER))
    failed["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = "upgrade-failed"
    _cordon(failed)
    for key in ("capacity", "allocatable"):
        failed["status"][key]["nvidia.com/gpu"] = "0"
    return nodes


def after_upgrade() -> list[Obj]:
    """Both h100 nodes on 580.173.02, upgrade-done and uncordoned; the other pools untouched."""
    nodes = healthy()
    for name in H100_NODES:
        _node(nodes, name)["metadata"]["labels"].update(driver_labels(*NEW_DRIVER))
    return nodes


def nodes_export(nodes: list[Obj]) -> Obj:
    """Nodes as `kubectl get nodes -o json` prints them."""
    return node_list(nodes)


def operator_export(driver_states: dict[str, str] | None = None, policy_state: str = "ready",
                    versions: dict[str, str] | None = None) -> Obj:
    """`kubectl get clusterpolicies,nvidiadrivers -o json` of cluster lab: the ClusterPolicy, the default
    NVIDIADriver the chart deploys (deployDefaultCR) and the per-pool NVIDIADrivers gpuspec renders."""
    states = {"default": "ready", "a100-mig": "ready", "l40s": "ready", **(driver_states or {})}
    pinned = {"default": "580.173.02", "a100-mig": "580.95.05", "l40s": "580.95.05", **(versions or {})}
    selectors = {"default": {"acme.example/gpu-pool": "h100"}, "a100-mig": {"acme.example/gpu-pool": "a100-mig"},
                 "l40s": {"acme.example/accelerator": "l40s"}}

    def status(state: str) -> Obj:
        if state == "ready":
            conditions = [{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "",
                           "lastTransitionTime": ts(-300)},
                          {"type": "Error", "status": "False", "reason": "Ready", "message": "",
                           "lastTransitionTime": ts(-300)}]
        else:
            conditions = [{"type": "Ready", "status": "False", "reason": "OperandNotReady",
                           "message": "state-driver is not ready", "lastTransitionTime": ts(-300)},
                          {"type": "Error", "status": "True", "reason": "DriverNotReady",
                           "message": "driver pods are not ready on 1 node", "lastTransitionTime": ts(-300)}]
        return {"state": state, "namespace": "gpu-operator", "conditions": conditions}

    items: list[Obj] = [{
        "apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy", "generation": 4},
        "spec": {"driver": {"enabled": True, "nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": True}}},
        "status": status(policy_state),
    }]
    for name in ("default", "a100-mig", "l40s"):
        items.append({
            "apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": name, "generation": 2},
            "spec": {"driverType": "gpu", "repository": "nvcr.io/nvidia", "image": "driver", "version": pinned[name],
                     "nodeSelector": selectors[name]},
            "status": status(states[name]),
        })
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


# --- acceptance Jobs and Pods ---------------------------------------------------------------------------------

def _job_labels(pool: str, check: str | None) -> dict[str, str]:
    labels = {"app.kubernetes.io/managed-by": "gpuspec", "gpuspec.io/acceptance": "true", "gpuspec.io/pool": pool}
    if check is not None:
        labels["gpuspec.io/check"] = check
    return labels


def job(name: str, pool: str, outcome: str, *, check: str | None = None, start: float = 0, duration: float = 45,
        deadline: int = 600, annotations: dict[str, str] | None = None, pods: int = 1) -> Obj:
    """A Job as the Job controller leaves it: ``passed``, ``failed`` (back-off limit), ``timed-out`` or ``running``."""
    uid = f"{zlib.crc32(name.encode()):08x}-0000-4000-8000-000000000000"
    status: Obj = {"startTime": ts(start), "active": 0, "ready": 0, "terminating": 0,
                   "uncountedTerminatedPods": {}}
    end = ts(start + duration)
    if outcome == "passed":
        status.update(succeeded=pods, completionTime=end, conditions=[
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods", "lastProbeTime": end, "lastTransitionTime": end},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods", "lastProbeTime": end, "lastTransitionTime": end}])
    elif outcome == "failed":
        status.update(failed=2, conditions=[
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit", "lastProbeTime": end, "lastTransitionTime": end},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit", "lastProbeTime": end,
             "lastTransitionTime": end}])
    elif outcome == "timed-out":
        end = ts(start + deadline)
        status.update(failed=pods, conditions=[
            {"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded",
             "message": "Job was active longer than specified deadline", "lastProbeTime": end,
             "lastTransitionTime": end},
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
             "message": "Job was active longer than specified deadline", "lastProbeTime": end,
             "lastTransitionTime": end}])
    else:
        status.update(active=pods)
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {
            "name": name, "namespace": "gpuspec-acceptance", "uid": uid, "generation": 1,
            "creationTimestamp": ts(start), "labels": _job_labels(pool, check),
            "annotations": {"argocd.argoproj.io/hook": "PostSync",
                            "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation", **(annotations or {})},
        },
        "spec": {"activeDeadlineSeconds": deadline, "backoffLimit": 1, "completionMode": "NonIndexed",
                 "completions": pods, "parallelism": pods, "suspend": False,
                 "template": {"metadata": {"labels": _job_labels(pool, check)},
                              "spec": {"restartPolicy": "Never", "containers": [{"name": "gpu", "image": "x"}]}}},
        "status": status,
    }


def pod(job_name: str, pool: str, node: str | None, outcome: str, *, index: int = 0, start: float = 0,
        seconds: float = 38, message: str | None = None, check: str | None = None) -> Obj:
    """A Pod of a Job: ``passed`` (Succeeded), ``failed`` (exit 1), ``pending`` (image pull back-off) or ``ready``."""
    scheduled = start + 1
    conditions: list[Obj] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": ts(scheduled)}] if node else \
        [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None,
          "message": "0/6 nodes are available: 6 Insufficient nvidia.com/gpu.", "lastTransitionTime": ts(scheduled)}]
    state: Obj
    phase = {"passed": "Succeeded", "failed": "Failed", "pending": "Pending", "ready": "Running"}[outcome]
    if outcome in ("passed", "failed"):
        state = {"terminated": {
            "containerID": "containerd://" + "ab" * 32, "exitCode": 0 if outcome == "passed" else 1,
            "reason": "Completed" if outcome == "passed" else "Error", "startedAt": ts(scheduled + 4),
            "finishedAt": ts(scheduled + seconds),
            **({"message": message} if message is not None else {})}}
        conditions += [{"type": "Ready", "status": "False", "reason": "PodCompleted" if outcome == "passed" else
                        "PodFailed", "lastProbeTime": None, "lastTransitionTime": ts(scheduled + seconds)}]
    elif outcome == "ready":
        state = {"running": {"startedAt": ts(scheduled + 4)}}
        conditions += [{"type": "Ready", "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": ts(scheduled + seconds)}]
    else:
        state = {"waiting": {"reason": "ImagePullBackOff",
                             "message": 'Back-off pulling image "nvcr.io/nvidia/k8s/cuda-sample:vectoradd"'}}
    name = f"{job_name}-{'abcdefghij'[index % 10]}{index:04d}"
    labels = {**_job_labels(pool, check), "batch.kubernetes.io/controller-uid": "5f1c", "controller-uid": "5f1c",
              "batch.kubernetes.io/job-name": job_name, "job-name": job_name}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "gpuspec-acceptance", "labels": labels, "creationTimestamp": ts(start),
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                                          "controller": True, "blockOwnerDeletion": True, "uid": "5f1c"}]},
        "spec": {"nodeName": node, "restartPolicy": "Never", "containers": [{"name": "gpu", "image": "x"}]},
        "status": {"phase": phase, "conditions": conditions, "startTime": ts(start),
                   "containerStatuses": [] if node is None else [
                       {"name": "gpu", "image": "x", "imageID": "", "ready": outcome == "ready", "restartCount": 0,
                        "started": outcome == "ready", "state": state}]},
    }


def run(name: str, pool: str, outcome: str, nodes: list[str], *, check: str | None = None, seconds: float = 38,
        busbw: float | None = None, annotations: dict[str, str] | None = None) -> list[Obj]:
    """A Job and its pods, one per node: passed, failed, timed-out (pods stuck pulling) or running."""
    pod_outcome = {"passed": "passed", "failed": "failed", "timed-out": "pending", "running": "ready"}[outcome]
    message = None if busbw is None else json.dumps({"busbw_gbps": busbw, "algbw_gbps": round(busbw / 1.75, 1)})
    items = [job(name, pool, outcome, check=check, annotations=annotations, pods=len(nodes),
                 duration=seconds + 7)]
    items += [pod(name, pool, node, pod_outcome, index=i, seconds=seconds, message=message, check=check)
              for i, node in enumerate(nodes)]
    return items


def job_list(items: list[Obj]) -> Obj:
    """Jobs and Pods as `kubectl get jobs,pods -n gpuspec-acceptance -o json` prints them."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": copy.deepcopy(items)}


def render_fleet(out: Path) -> Path:
    """Render the gate fixture fleet into ``out`` with the real `gpuspec render`; return the rendered folder."""
    from tests.audit.audit_cli import run_gpuspec

    result = run_gpuspec("render", str(FLEET_DIR), "--out", str(out))
    assert result.code == 0, result.err
    return out


def write_json(path: Path, document: Obj) -> str:
    """Write ``document`` as kubectl's indented JSON to ``path``; return the path as text."""
    path.write_text(json.dumps(document, indent=4) + "\n", encoding="utf-8")
    return str(path)


def passing_runs(expected: list[Any]) -> list[Obj]:
    """A passing run of every expected Job (ExpectedJob records) on its pool's nodes, within budget and floor."""
    items: list[Obj] = []
    for wanted in expected:
        seconds = 38.0 if wanted.budget_seconds is None else min(38.0, wanted.budget_seconds / 2)
        busbw = None if wanted.min_busbw_gbps is None else wanted.min_busbw_gbps + 40
        items += run(wanted.name, wanted.pool, "passed", POOL_NODES.get(wanted.pool, ["gpu-h100-0"]),
                     check=None if wanted.check == "smoke" else wanted.check, seconds=seconds, busbw=busbw)
    return items
