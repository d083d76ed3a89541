"""The eviction check (pure): a workload with a PodDisruptionBudget must survive the drain of one of its nodes.

A Job with a ServiceAccount of its own runs a small standard-library Python program (in the all-reduce check's
PyTorch image, which has Python) that talks to the API server with the Job's token:

1. creates the target: a Deployment of two pods, each holding one device of the pool, spread over nodes, and a
   PodDisruptionBudget ``minAvailable: 1``; waits until both pods are available;
2. cordons the node of one target pod and evicts the target pods on it through the Eviction API (which honours
   the PodDisruptionBudget, as the upgrade controller's drain does), retrying a refused eviction until the
   rollout's drain timeout;
3. waits until the Deployment is whole again on other nodes, watching that it never had fewer available pods
   than the budget allows;
4. always (also on failure or SIGTERM at the deadline) uncordons the node it cordoned and deletes the target.

The result goes to the termination message as JSON.  RBAC: in the acceptance namespace the Job may create and
delete its target Deployment and PodDisruptionBudget, read pods and create evictions; cluster-wide it may get and
patch nodes (RBAC cannot narrow a patch to ``spec.unschedulable``, nor to nodes whose names are unknown).
"""

from __future__ import annotations

import json
from typing import Any

#: Where the program and the target's manifests are mounted.
SCRIPT_DIR = "/opt/gpuspec"
SCRIPT_FILE = "eviction.py"
TARGET_FILE = "target.json"
#: Label of the target's pods (not the acceptance labels: the target is not a check of its own).
TARGET_LABEL = "gpuspec.io/eviction-target"
#: Pods of the target and the availability the budget keeps.
REPLICAS = 2
MIN_AVAILABLE = 1

SCRIPT = '''\
"""gpuspec acceptance: a workload with a PodDisruptionBudget survives the drain of one of its nodes."""
import json
import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request

SA = os.environ.get("GPUSPEC_SA_DIR", "/var/run/secrets/kubernetes.io/serviceaccount")
API = os.environ.get("GPUSPEC_API", "https://kubernetes.default.svc")
TERMINATION_LOG = os.environ.get("GPUSPEC_TERMINATION_LOG", "/dev/termination-log")
NS = open(f"{SA}/namespace", encoding="utf-8").read().strip()
TOKEN = open(f"{SA}/token", encoding="utf-8").read().strip()
TLS = ssl.create_default_context(cafile=f"{SA}/ca.crt") if API.startswith("https://") else None
TARGET = json.load(open(os.environ["GPUSPEC_TARGET"], encoding="utf-8"))
NAME = TARGET["deployment"]["metadata"]["name"]
SELECTOR = os.environ["GPUSPEC_SELECTOR"]
REPLICAS = TARGET["deployment"]["spec"]["replicas"]
MIN_AVAILABLE = TARGET["pdb"]["spec"]["minAvailable"]
DRAIN_TIMEOUT = int(os.environ["GPUSPEC_DRAIN_TIMEOUT"])
READY_TIMEOUT = int(os.environ["GPUSPEC_READY_TIMEOUT"])


def call(method, path, body=None, content_type="application/json"):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(API + path, data=data, method=method, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": content_type, "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, context=TLS, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def available():
    status, dep = call("GET", f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}")
    return dep.get("status", {}).get("availableReplicas", 0) if status == 200 else 0


def target_pods():
    status, pods = call("GET", f"/api/v1/namespaces/{NS}/pods?labelSelector={SELECTOR}")
    return [p for p in pods.get("items", []) if not p["metadata"].get("deletionTimestamp")] if status == 200 else []


def cleanup():
    call("DELETE", f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}")
    call("DELETE", f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/{TARGET['pdb']['metadata']['name']}")


def wait(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(2)
    return False


def main():
    result = {"node": "", "evicted": 0, "min_available": None, "recovered_seconds": None, "error": ""}
    cleanup()
    wait(lambda: call("GET", f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}")[0] == 404, 120)
    for kind, path in (("pdb", "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"),
                       ("deployment", "/apis/apps/v1/namespaces/{ns}/deployments")):
        status, body = call("POST", path.format(ns=NS), TARGET[kind])
        if status not in (200, 201):
            result["error"] = f"creating the target {kind}: HTTP {status} {body.get('message', '')}"
            return result
    cordoned = None
    try:
        if not wait(lambda: available() >= REPLICAS, READY_TIMEOUT):
            result["error"] = f"the target never had {REPLICAS} available pods"
            return result
        node = next(p["spec"]["nodeName"] for p in target_pods() if p["spec"].get("nodeName"))
        result["node"] = node
        status, before = call("GET", f"/api/v1/nodes/{node}")
        if not before.get("spec", {}).get("unschedulable"):
            status, _ = call("PATCH", f"/api/v1/nodes/{node}", {"spec": {"unschedulable": True}},
                             "application/merge-patch+json")
            if status != 200:
                result["error"] = f"cordoning {node}: HTTP {status}"
                return result
            cordoned = node
        start = time.monotonic()
        lowest = available()
        victims = [p["metadata"]["name"] for p in target_pods() if p["spec"].get("nodeName") == node]
        for name in victims:
            while True:
                status, body = call("POST", f"/api/v1/namespaces/{NS}/pods/{name}/eviction", {
                    "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS}})
                lowest = min(lowest, available())
                if status in (200, 201, 404):
                    result["evicted"] += status != 404
                    break
                if status != 429 or time.monotonic() - start > DRAIN_TIMEOUT:
                    result["error"] = f"evicting {name}: HTTP {status} {body.get('message', '')}"
                    return result
                time.sleep(5)

        def whole():
            nonlocal lowest
            lowest = min(lowest, available())
            pods = target_pods()
            return (available() >= REPLICAS and len(pods) >= REPLICAS
                    and all(p["spec"].get("nodeName") != node for p in pods))

        if not wait(whole, DRAIN_TIMEOUT + READY_TIMEOUT):
            result["error"] = f"the target did not recover {REPLICAS} available pods on other nodes"
        result["recovered_seconds"] = round(time.monotonic() - start, 1)
        result["min_available"] = lowest
        if lowest < MIN_AVAILABLE:
            result["error"] = f"the target dropped to {lowest} available pods (budget: {MIN_AVAILABLE})"
        return result
    finally:
        if cordoned:
            call("PATCH", f"/api/v1/nodes/{cordoned}", {"spec": {"unschedulable": False}},
                 "application/merge-patch+json")
        cleanup()


def _stop(signum, frame):
    raise SystemExit(1)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop)
    outcome = main()
    with open(TERMINATION_LOG, "w", encoding="utf-8") as fh:
        json.dump(outcome, fh, sort_keys=True)
    print(json.dumps(outcome, sort_keys=True), flush=True)
    sys.exit(1 if outcome["error"] else 0)
'''


def target(name: str, pool_label: str, pod: dict[str, Any]) -> dict[str, Any]:
    """The Deployment and PodDisruptionBudget the program creates (``pod``: the target pods' spec)."""
    labels = {TARGET_LABEL: pool_label}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {**labels, "app.kubernetes.io/managed-by": "gpuspec"}},
        "spec": {"replicas": REPLICAS, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": pod}},
    }
    pdb = {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "labels": {**labels, "app.kubernetes.io/managed-by": "gpuspec"}},
        "spec": {"minAvailable": MIN_AVAILABLE, "selector": {"matchLabels": labels}},
    }
    return {"deployment": deployment, "pdb": pdb}


def target_json(name: str, pool_label: str, pod: dict[str, Any]) -> str:
    """:func:`target` as the JSON file of the program's ConfigMap (sorted keys: byte-identical renders)."""
    return json.dumps(target(name, pool_label, pod), sort_keys=True, indent=1) + "\n"


def rbac(name: str, cluster_role: str, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
    """ServiceAccount, Role + RoleBinding (namespace) and ClusterRole + ClusterRoleBinding (nodes) of the Job."""
    subject = [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]
    ns_meta = {"name": name, "namespace": namespace, "labels": dict(labels)}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(ns_meta),
         "automountServiceAccountToken": False},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": dict(ns_meta), "rules": [
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": [f"{name}-target"],
             "verbs": ["get", "delete"]},
            {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["create"]},
            {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "resourceNames": [f"{name}-target"],
             "verbs": ["get", "delete"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
            {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
        ]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": dict(ns_meta),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}, "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": cluster_role, "labels": dict(labels)},
         "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": cluster_role, "labels": dict(labels)},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role},
         "subjects": subject},
    ]
