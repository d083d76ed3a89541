"""The programs the acceptance Jobs run, executed here against fakes: the eviction check against a fake API
server, the all-reduce against a fake ``torch`` (no GPU, no cluster)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from .fleets import cluster, pool, render_dir, write_fleet

ROLLOUT = {"drain": {"enable": True, "timeoutSeconds": 30}}


def _docs(out: dict[str, bytes]) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(out["clusters/c1/acceptance/acceptance.yaml"]))


def _eviction_objects(tmp_path: Path) -> list[dict[str, Any]]:
    pools = [pool("p", nodes=3, acceptance={"eviction": {"enabled": True}}), pool("off")]
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=pools, rollout=ROLLOUT)]))
    return [d for d in _docs(out) if d["metadata"].get("labels", {}).get("gpuspec.io/check") == "eviction"]


def test_the_eviction_check_has_only_the_access_it_needs(tmp_path: Path) -> None:
    objects = _eviction_objects(tmp_path)
    kinds = {d["kind"]: d for d in objects}
    assert sorted(kinds) == ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Job", "Role", "RoleBinding",
                             "ServiceAccount"]
    assert kinds["ClusterRole"]["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    role = kinds["Role"]["rules"]
    assert {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]} in role
    # get/delete only the target it creates
    assert all(r.get("resourceNames") == ["acceptance-p-eviction-target"] for r in role if "delete" in r["verbs"])
    job = kinds["Job"]
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == kinds["ServiceAccount"]["metadata"]["name"]
    assert pod["automountServiceAccountToken"] is True
    assert {"name": "GPUSPEC_DRAIN_TIMEOUT", "value": "30"} in pod["containers"][0]["env"]  # the rollout's drain
    target = json.loads(kinds["ConfigMap"]["data"]["target.json"])
    assert target["pdb"]["spec"]["minAvailable"] == 1 and target["deployment"]["spec"]["replicas"] == 2
    tpod = target["deployment"]["spec"]["template"]["spec"]
    assert tpod["restartPolicy"] == "Always" and "volumes" not in tpod
    assert tpod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert tpod["nodeSelector"] == {"acme.example/gpu-pool": "p"}
    # off by default; and a pool of one node gets none
    out = render_dir(write_fleet(tmp_path / "one", [cluster("c1", pools=[pool("p", nodes=1, acceptance={
        "eviction": {"enabled": True}})], rollout=ROLLOUT)]))
    assert not any(d["metadata"].get("labels", {}).get("gpuspec.io/check") == "eviction" for d in _docs(out))


class FakeApi:
    """The API calls of the eviction program: a Deployment on nodes n1/n2, a budget that refuses the first
    eviction, and the replacement pod on n3."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.nodes = {"n1": False, "n2": False, "n3": False}  # name -> unschedulable
        self.pods: dict[str, str] = {}
        self.refused = 0
        self.created: set[str] = set()
        self.pending = 0  # deployment reads until the replacement pod is available

    def handle(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        self.calls.append((method, path))
        ns = "/namespaces/gpuspec-acceptance"
        if method == "DELETE":
            if "/deployments/" in path:
                self.created.discard("deployment")
                self.pods = {}
            return 200, {}
        if method == "POST" and path.endswith("/poddisruptionbudgets"):
            return 201, {}
        if method == "POST" and path.endswith("/deployments"):
            self.pods = {"t-a": "n1", "t-b": "n2"}
            self.created.add("deployment")
            return 201, {}
        if method == "GET" and "/deployments/" in path:
            if "deployment" not in self.created:
                return 404, {}
            if self.pending:
                self.pending -= 1
                if not self.pending:
                    self.pods["t-c"] = "n3"  # the Deployment's replacement on a schedulable node
            return 200, {"status": {"availableReplicas": len(self.pods)}}
        if method == "GET" and path.startswith(f"/api/v1{ns}/pods"):
            return 200, {"items": [{"metadata": {"name": n}, "spec": {"nodeName": node}}
                                   for n, node in sorted(self.pods.items())]}
        if path.startswith("/api/v1/nodes/"):
            node = path.rsplit("/", 1)[-1]
            if method == "PATCH":
                assert body is not None
                self.nodes[node] = body["spec"]["unschedulable"]
            return 200, {"spec": {"unschedulable": self.nodes[node]}}
        if method == "POST" and path.endswith("/eviction"):
            name = path.split("/")[-2]
            if self.refused == 0:  # the budget says no once: the program retries
                self.refused += 1
                return 429, {"message": "Cannot evict pod as it would violate the pod's disruption budget."}
            del self.pods[name]
            self.pending = 3
            return 201, {}
        return 500, {"message": f"unexpected {method} {path}"}


def _serve(api: FakeApi) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            status, reply = api.handle(self.command, self.path, body)
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = _any

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _run_eviction(tmp_path: Path, api: FakeApi) -> tuple[int, dict[str, Any]]:
    [config] = [d for d in _eviction_objects(tmp_path) if d["kind"] == "ConfigMap"]
    for name, text in config["data"].items():
        (tmp_path / name).write_text(text)
    sa = tmp_path / "sa"
    sa.mkdir()
    for name, text in {"namespace": "gpuspec-acceptance", "token": "t"}.items():
        (sa / name).write_text(text)
    server = _serve(api)
    try:
        env = {**os.environ, "GPUSPEC_API": f"http://127.0.0.1:{server.server_port}", "GPUSPEC_SA_DIR": str(sa),
               "GPUSPEC_TERMINATION_LOG": str(tmp_path / "termination-log"),
               "GPUSPEC_TARGET": str(tmp_path / "target.json"), "GPUSPEC_SELECTOR": "gpuspec.io/eviction-target=p",
               "GPUSPEC_DRAIN_TIMEOUT": "3", "GPUSPEC_READY_TIMEOUT": "3"}
        done = subprocess.run([sys.executable, str(tmp_path / "eviction.py")], env=env, capture_output=True,
                              text=True, timeout=120)
    finally:
        server.shutdown()
    return done.returncode, json.loads((tmp_path / "termination-log").read_text())


def test_the_eviction_program_drains_one_node_and_always_uncordons_it(tmp_path: Path) -> None:
    api = FakeApi()
    code, result = _run_eviction(tmp_path, api)
    assert code == 0, result
    assert result["node"] == "n1" and result["evicted"] == 1 and result["min_available"] == 1
    assert result["error"] == ""
    assert api.refused == 1  # a refused eviction was retried, as a drain does
    assert ("PATCH", "/api/v1/nodes/n1") in api.calls and api.nodes["n1"] is False  # cordoned, then uncordoned
    assert api.calls[-1][0] == "DELETE"  # the target is removed at the end


def test_the_eviction_program_fails_when_the_workload_does_not_come_back(tmp_path: Path) -> None:
    class NoReplacement(FakeApi):
        def handle(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
            status, reply = super().handle(method, path, body)
            self.pods.pop("t-c", None)  # nowhere to go: the Deployment stays at one pod
            return status, reply

    api = NoReplacement()
    code, result = _run_eviction(tmp_path, api)
    assert code == 1
    assert "did not recover" in result["error"]
    assert api.nodes["n1"] is False  # uncordoned even so


def _fake_torch(root: Path, world: int, seconds: float) -> None:
    pkg = root / "torch"
    (pkg / "distributed").mkdir(parents=True)
    (pkg / "__init__.py").write_text('''
import builtins
float32 = "float32"
class _T:
    def __init__(self, values): self.v = list(values)
    def __eq__(self, x): return _T([a == x for a in self.v])
    def item(self): return self.v[0]
def full(shape, value, device=None): return _T([value] * shape[0])
def ones(n, dtype=None, device=None): return _T([1.0])
def tensor(values, device=None): return _T(values)
def all(t): return _T([builtins.all(t.v)])
class cuda:
    @staticmethod
    def set_device(i): pass
    @staticmethod
    def synchronize(): pass
''')
    (pkg / "distributed" / "__init__.py").write_text(f'''
import time
WORLD = {world}
class ReduceOp:
    MIN = "min"
def init_process_group(backend): assert backend == "nccl"
def get_rank(): return 0
def get_world_size(): return WORLD
def barrier(): pass
def destroy_process_group(): pass
def all_reduce(t, op=None):
    if op is None and len(t.v) > 1:  # the correctness check: the sum of all ranks
        t.v = [float(WORLD * (WORLD - 1) // 2)] * len(t.v)
    elif op is None:
        time.sleep({seconds})
''')


def _run_allreduce(tmp_path: Path, minimum: str | None) -> tuple[int, dict[str, Any]]:
    out = render_dir(write_fleet(tmp_path, [cluster("c1", pools=[pool("p", acceptance={"nccl": {
        "enabled": True, "messageMiB": 1}})])]))
    [script] = [d for d in _docs(out) if d["kind"] == "ConfigMap" and "allreduce.py" in d.get("data", {})]
    (tmp_path / "allreduce.py").write_text(script["data"]["allreduce.py"])
    _fake_torch(tmp_path / "lib", world=16, seconds=0.01)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "lib"), "LOCAL_RANK": "0", "GPUSPEC_MESSAGE_MIB": "1",
           "GPUSPEC_TERMINATION_LOG": str(tmp_path / "termination-log")}
    if minimum is not None:
        env["GPUSPEC_MIN_BUSBW_GBPS"] = minimum
    done = subprocess.run([sys.executable, str(tmp_path / "allreduce.py")], env=env, capture_output=True, text=True,
                          timeout=120)
    return done.returncode, json.loads((tmp_path / "termination-log").read_text())


def test_the_allreduce_reports_bus_bandwidth_as_nccl_tests_and_fails_below_the_minimum(tmp_path: Path) -> None:
    code, result = _run_allreduce(tmp_path / "a", None)
    assert code == 0 and result["correct"] is True and result["ranks"] == 16
    # 1 MiB in about 10 ms: algbw ~0.1 GB/s, busbw = algbw * 2 * 15 / 16
    assert abs(result["busbw_gbps"] - result["algbw_gbps"] * 30 / 16) < 0.02
    assert 0 < result["busbw_gbps"] < 1
    code, result = _run_allreduce(tmp_path / "b", "50")
    assert code == 1 and result["busbw_gbps"] < 50
