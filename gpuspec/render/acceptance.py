"""Acceptance checks: per pool, the Jobs that prove after each rollout that the pool works as the spec says (pure).

Which checks a pool gets is :mod:`gpuspec.render.acceptance_plan`; this module turns them into Kubernetes
objects in the tenant-neutral namespace :data:`ACCEPTANCE_NAMESPACE` (Pod Security ``restricted``).  Every Job
carries the labels ``gpuspec.io/acceptance: "true"``, ``gpuspec.io/pool`` and ``gpuspec.io/check`` (``smoke``,
``all-gpus``, ``nccl``, ``dcgm-diag``, ``mig``, ``shared``, ``workload-<name>``) and, where the spec sets them,
the annotations ``gpuspec.io/readiness-budget-seconds`` and ``gpuspec.io/min-busbw-gbps``.  Job names end in a
digest of the cluster's rendered configuration and of the check, so every change runs new Jobs.

Argo CD runs the Jobs as PostSync hooks of the overlay Application (the previous run's Job is deleted when the
next is created, so the results of the last run stay readable for ``gpuspec acceptance report``); Flux applies them
with a Kustomization that depends on the overlay and health-checks them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from gpuspec.matrix.acceptance import nccl_image, sample_image
from gpuspec.model.cluster import Pool
from gpuspec.model.pool_specs import AcceptanceWorkload
from gpuspec.render import acceptance_eviction as eviction
from gpuspec.render import acceptance_nccl as nccl
from gpuspec.render import acceptance_pod as pods
from gpuspec.render.acceptance_plan import (
    ALL_GPUS,
    DCGM_DIAG,
    EVICTION,
    MIG,
    NCCL,
    SHARED,
    SMOKE,
    PlannedCheck,
    drain_timeout,
    planned_checks,
    runner_image,
)
from gpuspec.render.context import ClusterContext
from gpuspec.render.facts import image_ref
from gpuspec.render.operand_images import rewrite
from gpuspec.render.overlay import MANAGED_BY, metadata, namespace, psa_labels

#: Namespace of the acceptance Jobs: no tenant's, no quota, Pod Security restricted.
ACCEPTANCE_NAMESPACE = "gpuspec-acceptance"
#: Folder of the acceptance objects inside the cluster's rendered folder.
ACCEPTANCE_DIR = "acceptance"
#: The one resource file of the acceptance folder.
ACCEPTANCE_FILE = "acceptance.yaml"
#: ConfigMap whose content changes with the cluster's configuration (makes Argo CD sync and run the hooks).
TRIGGER_CONFIGMAP = "gpuspec-acceptance"
#: Argo CD: run after the overlay is synced and healthy; the previous run's Job is deleted when the next starts, so
#: passed and failed Jobs (and their pods' times and termination messages) stay readable until then.
ARGOCD_HOOK = {
    "argocd.argoproj.io/hook": "PostSync",
    "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
}
#: Restricted Pod Security: the Jobs prove a GPU is usable without any privilege.
ACCEPTANCE_PSA = psa_labels("restricted")
#: Unprivileged user the sample runs as.
RUN_AS = pods.RUN_AS
#: Labels and annotations of the contract with ``gpuspec acceptance report``.
ACCEPTANCE_LABEL = "gpuspec.io/acceptance"
POOL_LABEL = "gpuspec.io/pool"
CHECK_LABEL = "gpuspec.io/check"
BUDGET_ANNOTATION = "gpuspec.io/readiness-budget-seconds"
BUSBW_ANNOTATION = "gpuspec.io/min-busbw-gbps"
#: The CUDA sample's binary (k8s-samples image: /cuda-samples/sample links to the sample).
SAMPLE_BINARY = "/cuda-samples/sample"


@dataclass(frozen=True, slots=True)
class AcceptanceCheck:
    """One check of one pool: its Job's name, what each pod requests, its deadline and its objects."""

    pool: Pool
    check: str
    job: str
    resources: tuple[str, ...]
    timeout_seconds: int
    documents: tuple[dict[str, Any], ...] = ()

    def to_data(self) -> dict[str, Any]:
        """The check as plain data (plan, handover documents)."""
        job = self.documents[-1] if self.documents else {}
        limits = _device_limits(job)
        return {
            "pool": self.pool.name, "check": self.check, "job": self.job, "namespace": ACCEPTANCE_NAMESPACE,
            "resources": limits or {r: 1 for r in self.resources}, "nodeSelector": dict(self.pool.node_selector),
            "timeoutSeconds": self.timeout_seconds,
        }


def _device_limits(job: dict[str, Any]) -> dict[str, int]:
    pod = job.get("spec", {}).get("template", {}).get("spec", {})
    out: dict[str, int] = {}
    for c in [*pod.get("initContainers", []), *pod.get("containers", [])]:
        for name, value in (c.get("resources", {}).get("limits") or {}).items():
            if "/" in name:
                out[name] = out.get(name, 0) + int(value)
    return out


def _config_digest(files: dict[str, Any]) -> str:
    # Plan data is never cyclic (it is dumped as YAML next), so the encoder need not track containers.
    text = json.dumps(files, sort_keys=True, separators=(",", ":"), default=str, check_circular=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _pool_facts(pool: Pool) -> dict[str, Any]:
    """The pool as its Job names hash it: facts that only inform findings (``os.selinux``) change no Job."""
    data: dict[str, Any] = pool.model_dump(mode="json", by_alias=True)
    data["os"].pop("selinux", None)
    if data["mig"].get("configName") is None:  # a field added later: absent, it changes no Job name
        data["mig"].pop("configName", None)
    if data["sharing"].get("configName") is None:  # the same
        data["sharing"].pop("configName", None)
    data.pop("managed", None)  # only managed pools get a Job at all
    data.pop("autoscaling", None)  # how many nodes the autoscaler keeps changes nothing one node must show
    return data


def _job_name(pool: Pool, check: str, digest: str) -> str:
    # <= 58 characters: an Indexed Job's pod hostname <job>-<index> stays a DNS label.
    stem = f"acceptance-{pool.name}-{check}"[:49].rstrip("-")
    return f"{stem}-{digest[:8]}"


def _stable_name(pool: Pool, check: str) -> str:
    return f"acceptance-{pool.name}-{check}"[:63].rstrip("-")


def acceptance_image(ctx: ClusterContext) -> str:
    """The sample image the cluster pulls (mirror-rewritten)."""
    return rewrite(sample_image(), ctx.mirror)


def dcgm_image(ctx: ClusterContext) -> str | None:
    """The DCGM image of the cluster's pinned release, upstream name (None when the release pins none)."""
    image = ctx.facts.images.get("dcgm")
    return image_ref(image, ctx.facts.version) if image is not None else None


#: Stands for the Job's name while its objects are hashed (a DNS label no real name can equal).
_PLACEHOLDER = "gpuspec-job-name-placeholder"


def acceptance_checks(ctx: ClusterContext, config: dict[str, Any]) -> list[AcceptanceCheck]:
    """The checks of the cluster's pools, with their objects (pools without nodes or a known resource get none).

    ``config``: the cluster's other rendered documents, whose digest goes into the Job names.
    """
    digest = _config_digest(config)
    settings = _config_digest(ctx.cluster.acceptance.model_dump(mode="json", by_alias=True))
    checks: list[AcceptanceCheck] = []
    for pool in ctx.cluster.pools:
        planned_list = planned_checks(ctx.cluster, pool)
        if not planned_list:
            continue
        facts = _config_digest(_pool_facts(pool))
        for planned in planned_list:
            if planned.check == DCGM_DIAG and dcgm_image(ctx) is None:
                continue
            # The name hashes the check's own objects too (built once with a placeholder name): a new image pin
            # or script in gpuspec's data changes the Job, so it gets a new name.  Then they are built again with
            # that name (cheaper than reading the hashed text back; the builders copy what they take from the
            # spec and write plain JSON types only, which tests/render/test_acceptance_objects.py holds them to).
            text = json.dumps(_documents(ctx, pool, planned, _PLACEHOLDER), separators=(",", ":"), check_circular=False)
            key = hashlib.sha256("\0".join((digest, facts, settings, planned.check, text)).encode()).hexdigest()
            name = _job_name(pool, planned.check, key)
            checks.append(AcceptanceCheck(pool, planned.check, name, tuple(planned.requests),
                                          planned.timeout_seconds, tuple(_documents(ctx, pool, planned, name))))
    return checks


# ----------------------------------------------------------------------------- Jobs


def _labels(pool: Pool, check: str) -> dict[str, str]:
    return {**MANAGED_BY, ACCEPTANCE_LABEL: "true", POOL_LABEL: pool.name, CHECK_LABEL: check}


def _job(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str, pod: dict[str, Any], *,
         pods_total: int = 1, indexed: bool = False, backoff: int = 0) -> dict[str, Any]:
    labels = _labels(pool, planned.check)
    annotations: dict[str, str] = dict(ARGOCD_HOOK) if ctx.cluster.gitops.tool == "argocd" else {}
    if planned.readiness_budget_seconds is not None:
        annotations[BUDGET_ANNOTATION] = str(planned.readiness_budget_seconds)
    if planned.min_busbw_gbps is not None:
        annotations[BUSBW_ANNOTATION] = f"{planned.min_busbw_gbps:g}"
    meta = metadata(ctx, name, ACCEPTANCE_NAMESPACE, annotations=annotations or None)
    meta["labels"] = labels
    spec: dict[str, Any] = {"backoffLimit": backoff, "activeDeadlineSeconds": planned.timeout_seconds}
    if pods_total > 1 or indexed:
        spec.update({"completions": pods_total, "parallelism": pods_total})
    if indexed:
        spec["completionMode"] = "Indexed"
    spec["template"] = {"metadata": {"labels": {**labels, pods.JOB_LABEL: name}}, "spec": pod}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def _container_name(resource: str) -> str:
    name = resource.removeprefix("nvidia.com/").replace(".", "-").replace("_", "-").replace("/", "-").lower()
    return name[:63].rstrip("-")


def _smoke(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    image = acceptance_image(ctx)
    containers = [pods.container(_container_name(r), image, pods.compute(*pods.SMALL, {r: n}))
                  for r, n in planned.requests.items()]
    return [_job(ctx, pool, planned, name, pods.pod_spec(ctx, pool, containers), backoff=1)]


def _per_device_loop(count: int) -> list[str]:
    # CUDA numbers the container's devices 0..count-1: the sample runs on each in turn; one that is missing or
    # fails ends the pod with an error.
    loop = (
        "i=0\n"
        f"while [ $i -lt {count} ]; do\n"
        '  echo "GPU $i"\n'
        f"  CUDA_VISIBLE_DEVICES=$i {SAMPLE_BINARY} || exit 1\n"
        "  i=$((i+1))\n"
        "done\n"
    )
    return ["/bin/sh", "-c", loop]


def _all_gpus(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    [(resource, count)] = planned.requests.items()
    container = pods.container("all-gpus", acceptance_image(ctx), pods.compute(*pods.SMALL, {resource: count}),
                               command=_per_device_loop(count))
    pod = pods.pod_spec(ctx, pool, [container], affinity=pods.one_per_node(name))
    return [_job(ctx, pool, planned, name, pod, pods_total=planned.nodes, indexed=True)]


def _mig(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    image = acceptance_image(ctx)
    containers = [pods.container(_container_name(r), image, pods.compute(*pods.SMALL, {r: n}))
                  for r, n in planned.requests.items()]
    pod = pods.pod_spec(ctx, pool, containers, affinity=pods.one_per_node(name))
    return [_job(ctx, pool, planned, name, pod, pods_total=planned.nodes, indexed=True)]


def _shared(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    [(resource, count)] = planned.requests.items()
    container = pods.container("shared", acceptance_image(ctx), pods.compute(*pods.SMALL, {resource: count}))
    pod = pods.pod_spec(ctx, pool, [container], affinity=pods.all_on_one_node(name))
    return [_job(ctx, pool, planned, name, pod, pods_total=planned.pods)]


def _dcgm(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    [(resource, count)] = planned.requests.items()
    level = pool.acceptance.dcgm_diag.level
    script = (
        "set -e\n"
        "nv-hostengine --pid /tmp/nv-hostengine.pid \\\n"
        "  --log-filename /tmp/nv-hostengine.log --home-dir /tmp\n"
        f"dcgmi diag -r {level}\n"
    )
    image = rewrite(dcgm_image(ctx) or "", ctx.mirror)
    container = pods.container(
        "dcgm-diag", image,
        pods.compute({"cpu": "1", "memory": "2Gi"}, {"cpu": "2", "memory": "4Gi"}, {resource: count}),
        command=["/bin/sh", "-c", script],
        env=[{"name": "HOME", "value": "/tmp"}],
        volumeMounts=[{"name": "dcgm-logs", "mountPath": "/var/log/nvidia-dcgm"}],
    )
    pod = pods.pod_spec(ctx, pool, [container], affinity=pods.one_per_node(name),
                        volumes=[{"name": "dcgm-logs", "emptyDir": {"sizeLimit": "1Gi"}}])
    return [_job(ctx, pool, planned, name, pod, pods_total=planned.nodes, indexed=True)]


def _nccl(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    [(resource, gpus)] = planned.requests.items()
    spec = pool.acceptance.nccl
    service = _stable_name(pool, NCCL)
    labels = _labels(pool, NCCL)
    svc = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {**metadata(ctx, service, ACCEPTANCE_NAMESPACE), "labels": dict(labels)},
        "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                 "selector": {POOL_LABEL: pool.name, CHECK_LABEL: NCCL},
                 "ports": [{"name": "rendezvous", "port": nccl.RENDEZVOUS_PORT, "protocol": "TCP"}]},
    }
    script = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {**metadata(ctx, service, ACCEPTANCE_NAMESPACE), "labels": dict(labels)},
        "data": {nccl.SCRIPT_FILE: nccl.SCRIPT},
    }
    env = [{"name": "HOME", "value": "/tmp"}, {"name": "GPUSPEC_MESSAGE_MIB", "value": str(spec.message_mib)},
           {"name": "NCCL_DEBUG", "value": "WARN"}]
    if planned.min_busbw_gbps is not None:
        env.append({"name": "GPUSPEC_MIN_BUSBW_GBPS", "value": f"{planned.min_busbw_gbps:g}"})
    devices = {resource: gpus, **planned.extra}
    container = pods.container(
        "nccl", rewrite(spec.image or nccl_image(), ctx.mirror),
        pods.compute({"cpu": str(gpus), "memory": f"{4 * gpus}Gi"}, {"cpu": str(2 * gpus), "memory": f"{8 * gpus}Gi"},
                     devices),
        command=nccl.launch_command(name, service, planned.nodes, gpus),
        env=env,
        ports=[{"name": "rendezvous", "containerPort": nccl.RENDEZVOUS_PORT, "protocol": "TCP"}],
        volumeMounts=[{"name": "script", "mountPath": nccl.SCRIPT_DIR, "readOnly": True},
                      {"name": "shm", "mountPath": "/dev/shm"}],
    )
    pod = pods.pod_spec(ctx, pool, [container], affinity=pods.one_per_node(name), subdomain=service,
                        volumes=[{"name": "script", "configMap": {"name": service}},
                                 {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": f"{2 * gpus}Gi"}}])
    return [svc, script, _job(ctx, pool, planned, name, pod, pods_total=planned.nodes, indexed=True)]


def _probe(workload: AcceptanceWorkload) -> dict[str, Any]:
    ready = workload.ready
    assert ready is not None
    handler: dict[str, Any]
    if ready.exec is not None:
        handler = {"exec": {"command": list(ready.exec)}}
    elif ready.tcp:
        handler = {"tcpSocket": {"port": ready.port}}
    else:
        handler = {"httpGet": {"path": ready.path, "port": ready.port}}
    return {**handler, "periodSeconds": ready.period_seconds}


def _workload(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    workload = planned.workload
    assert workload is not None
    res = workload.resources
    requests = {"cpu": res.cpu, "memory": res.memory}
    limits = {"cpu": res.cpu_limit or res.cpu, "memory": res.memory_limit or res.memory}
    extra: dict[str, Any] = {"env": [{"name": "HOME", "value": "/tmp"}]}
    if workload.command is not None:
        extra["command"] = list(workload.command)
    if workload.args is not None:
        extra["args"] = list(workload.args)
    main = pods.container(workload.name, rewrite(workload.image, ctx.mirror),
                          pods.compute(requests, limits, planned.requests), **extra)
    if workload.ready is None:
        pod = pods.pod_spec(ctx, pool, [main], run_as=None, topologySpreadConstraints=pods.spread(name))
    else:
        # A service: it runs as a native sidecar whose startup probe holds back the pod's only container, which
        # exits 0 at once; the pod completes when the service became ready, the deadline fails it otherwise.
        probe = _probe(workload)
        startup = {**probe, "failureThreshold": max(1, workload.deadline_seconds // probe["periodSeconds"])}
        main.update({"restartPolicy": "Always", "startupProbe": startup, "readinessProbe": probe})
        done = pods.container("ready", acceptance_image(ctx),
                              pods.compute({"cpu": "10m", "memory": "16Mi"}, {"cpu": "100m", "memory": "64Mi"}),
                              command=["/bin/sh", "-c", "echo ready"],
                              securityContext={**pods.container_security(), "runAsUser": RUN_AS,
                                               "runAsGroup": RUN_AS})
        pod = pods.pod_spec(ctx, pool, [done], run_as=None, initContainers=[main],
                            topologySpreadConstraints=pods.spread(name))
    return [_job(ctx, pool, planned, name, pod, pods_total=planned.pods)]


def _eviction(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    [(resource, count)] = planned.requests.items()
    stable = _stable_name(pool, EVICTION)[:56].rstrip("-")
    labels = _labels(pool, EVICTION)
    # The target: hardened pods holding one device each, spread over nodes, no volume (a drain that keeps emptyDir
    # pods would refuse them), a short grace period.
    sleeper = {
        "name": "target", "image": acceptance_image(ctx), "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 2; done"],
        "resources": pods.compute(*pods.SMALL, {resource: count}), "securityContext": pods.container_security(),
    }
    target_pod = pods.pod_spec(ctx, pool, [sleeper], terminationGracePeriodSeconds=5)
    target_pod["restartPolicy"] = "Always"
    del target_pod["volumes"]
    target_pod["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 100, "podAffinityTerm": {"topologyKey": pods.HOSTNAME, "labelSelector": {
            "matchLabels": {eviction.TARGET_LABEL: pool.name}}}}]}}
    config = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {**metadata(ctx, stable, ACCEPTANCE_NAMESPACE), "labels": dict(labels)},
        "data": {eviction.SCRIPT_FILE: eviction.SCRIPT,
                 eviction.TARGET_FILE: eviction.target_json(f"{stable}-target", pool.name, target_pod)},
    }
    cluster_role = f"gpuspec-acceptance-eviction-{pool.name}"[:63].rstrip("-")
    access = eviction.rbac(stable, cluster_role, ACCEPTANCE_NAMESPACE, labels)
    env = [
        {"name": "HOME", "value": "/tmp"},
        {"name": "GPUSPEC_TARGET", "value": f"{eviction.SCRIPT_DIR}/{eviction.TARGET_FILE}"},
        {"name": "GPUSPEC_SELECTOR", "value": f"{eviction.TARGET_LABEL}={pool.name}"},
        {"name": "GPUSPEC_DRAIN_TIMEOUT", "value": str(drain_timeout(ctx.cluster, pool))},
        {"name": "GPUSPEC_READY_TIMEOUT", "value": str(pool.acceptance.timeout_seconds)},
    ]
    runner = pods.container(
        "eviction", rewrite(runner_image(pool), ctx.mirror),
        pods.compute({"cpu": "100m", "memory": "256Mi"}, {"cpu": "500m", "memory": "512Mi"}),
        command=["python3", f"{eviction.SCRIPT_DIR}/{eviction.SCRIPT_FILE}"], env=env,
        volumeMounts=[{"name": "script", "mountPath": eviction.SCRIPT_DIR, "readOnly": True}],
    )
    pod = pods.pod_spec(ctx, pool, [runner], volumes=[{"name": "script", "configMap": {"name": stable}}],
                        serviceAccountName=stable)
    pod["automountServiceAccountToken"] = True  # the only acceptance pod that talks to the API server
    return [*access, config, _job(ctx, pool, planned, name, pod)]


_BUILDERS = {
    SMOKE: _smoke, ALL_GPUS: _all_gpus, MIG: _mig, SHARED: _shared, DCGM_DIAG: _dcgm, NCCL: _nccl,
    EVICTION: _eviction,
}


def _documents(ctx: ClusterContext, pool: Pool, planned: PlannedCheck, name: str) -> list[dict[str, Any]]:
    """The objects of one check, its Job last."""
    build = _BUILDERS.get(planned.check, _workload)
    return build(ctx, pool, planned, name)


def job(ctx: ClusterContext, check: AcceptanceCheck) -> dict[str, Any]:
    """The Job of one acceptance check."""
    return check.documents[-1]


def acceptance_files(ctx: ClusterContext, checks: list[AcceptanceCheck]) -> dict[str, list[dict[str, Any]]]:
    """File name → documents of the acceptance folder (empty when there are no checks).

    One file holds the namespace, the Argo CD trigger and every check's objects (a fleet of 1,000 clusters x 10
    pools writes two files per cluster, not twelve).
    """
    if not checks:
        return {}
    docs: list[dict[str, Any]] = [namespace(ctx, ACCEPTANCE_NAMESPACE, ACCEPTANCE_PSA)]
    if ctx.cluster.gitops.tool == "argocd":
        docs.append({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": metadata(ctx, TRIGGER_CONFIGMAP, ACCEPTANCE_NAMESPACE),
            "data": {"jobs": "\n".join(c.job for c in checks)},
        })
    for check in checks:
        docs.extend(check.documents)
    return {ACCEPTANCE_FILE: docs}
