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
"""gpuspec acceptance: a budget-guarded workload survives a node drain."""
import json
import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request

ENV = os.environ
SA = ENV.get("GPUSPEC_SA_DIR",
             "/var/run/secrets/kubernetes.io/serviceaccount")
API = ENV.get("GPUSPEC_API", "https://kubernetes.default.svc")
LOG = ENV.get("GPUSPEC_TERMINATION_LOG", "/dev/termination-log")
NS = open(f"{SA}/namespace", encoding="utf-8").read().strip()
TOKEN = open(f"{SA}/token", encoding="utf-8").read().strip()
TLS = None
if API.startswith("https://"):
    TLS = ssl.create_default_context(cafile=f"{SA}/ca.crt")
TARGET = json.load(open(ENV["GPUSPEC_TARGET"], encoding="utf-8"))
NAME = TARGET["deployment"]["metadata"]["name"]
PDB = TARGET["pdb"]["metadata"]["name"]
REPLICAS = TARGET["deployment"]["spec"]["replicas"]
MIN_AVAILABLE = TARGET["pdb"]["spec"]["minAvailable"]
SELECTOR = ENV["GPUSPEC_SELECTOR"]
DRAIN_TIMEOUT = int(ENV["GPUSPEC_DRAIN_TIMEOUT"])
READY_TIMEOUT = int(ENV["GPUSPEC_READY_TIMEOUT"])
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
PDBS = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"
PODS = f"/api/v1/namespaces/{NS}/pods"
MERGE = "application/merge-patch+json"


def call(method, path, body=None, content_type="application/json"):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {TOKEN}",
               "Content-Type": content_type,
               "Accept": "application/json"}
    req = urllib.request.Request(API + path, data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, context=TLS, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def available():
    status, dep = call("GET", f"{DEPLOYMENTS}/{NAME}")
    if status != 200:
        return 0
    return dep.get("status", {}).get("availableReplicas", 0)


def target_pods():
    status, pods = call("GET", f"{PODS}?labelSelector={SELECTOR}")
    if status != 200:
        return []
    return [p for p in pods.get("items", [])
            if not p["metadata"].get("deletionTimestamp")]


def node_of(pod):
    return pod["spec"].get("nodeName")


def schedulable(node, value):
    body = {"spec": {"unschedulable": not value}}
    return call("PATCH", f"/api/v1/nodes/{node}", body, MERGE)[0]


def cleanup():
    call("DELETE", f"{DEPLOYMENTS}/{NAME}")
    call("DELETE", f"{PDBS}/{PDB}")


def wait(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(2)
    return False


def evict(name):
    body = {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": name, "namespace": NS}}
    return call("POST", f"{PODS}/{name}/eviction", body)


def main():
    result = {"node": "", "evicted": 0, "min_available": None,
              "recovered_seconds": None, "error": ""}
    cleanup()
    wait(lambda: call("GET", f"{DEPLOYMENTS}/{NAME}")[0] == 404, 120)
    for kind, path in (("pdb", PDBS), ("deployment", DEPLOYMENTS)):
        status, body = call("POST", path, TARGET[kind])
        if status not in (200, 201):
            why = body.get("message", "")
            result["error"] = f"creating the {kind}: HTTP {status} {why}"
            return result
    cordoned = None
    try:
        if not wait(lambda: available() >= REPLICAS, READY_TIMEOUT):
            result["error"] = f"the target never had {REPLICAS} pods"
            return result
        node = next(node_of(p) for p in target_pods() if node_of(p))
        result["node"] = node
        _, before = call("GET", f"/api/v1/nodes/{node}")
        if not before.get("spec", {}).get("unschedulable"):
            status = schedulable(node, False)
            if status != 200:
                result["error"] = f"cordoning {node}: HTTP {status}"
                return result
            cordoned = node
        start = time.monotonic()
        lowest = available()
        pods = target_pods()
        victims = [p["metadata"]["name"] for p in pods
                   if node_of(p) == node]
        for name in victims:
            while True:
                status, body = evict(name)
                lowest = min(lowest, available())
                if status in (200, 201, 404):
                    result["evicted"] += status != 404
                    break
                late = time.monotonic() - start > DRAIN_TIMEOUT
                if status != 429 or late:
                    why = body.get("message", "")
                    result["error"] = f"evicting {name}: {status} {why}"
                    return result
                time.sleep(5)

        def whole():
            nonlocal lowest
            now = available()
            lowest = min(lowest, now)
            pods = target_pods()
            away = all(node_of(p) != node for p in pods)
            return now >= REPLICAS and len(pods) >= REPLICAS and away

        if not wait(whole, DRAIN_TIMEOUT + READY_TIMEOUT):
            result["error"] = (f"the target did not recover {REPLICAS} "
                               "available pods on other nodes")
        result["recovered_seconds"] = round(time.monotonic() - start, 1)
        result["min_available"] = lowest
        if lowest < MIN_AVAILABLE:
            result["error"] = (f"the target dropped to {lowest} available "
                               f"pods (budget: {MIN_AVAILABLE})")
        return result
    finally:
        if cordoned:
            schedulable(cordoned, True)
        cleanup()


def _stop(signum, frame):
    raise SystemExit(1)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop)
    try:
        outcome = main()
    except SystemExit:
        outcome = {"error": "stopped at the Job's deadline (SIGTERM)"}
    with open(LOG, "w", encoding="utf-8") as fh:
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
    # One key or item per line and no space after separators: no line is longer than one value.
    return json.dumps(target(name, pool_label, pod), sort_keys=True, indent=0, separators=(",", ":")) + "\n"


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
