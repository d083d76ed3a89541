"""Building blocks of the acceptance pods (pure): hardened containers, placement on the pool, sampling of nodes.

Every pod runs under Pod Security ``restricted``: non-root, no privilege escalation, every capability dropped,
RuntimeDefault seccomp, a read-only root file system (``/tmp`` is an emptyDir), no service account token, and
CPU/memory requests and limits (no BestEffort pod).
"""

from __future__ import annotations

from typing import Any

from gpuspec.model.cluster import Pool
from gpuspec.render.context import ClusterContext
from gpuspec.render.values import toleration

#: Unprivileged user the NVIDIA images run as.
RUN_AS = 65534
#: Label every pod of one acceptance Job carries with the Job's name (anti-affinity, affinity, Services select it).
JOB_LABEL = "gpuspec.io/job"
HOSTNAME = "kubernetes.io/hostname"
TERMINATION_LOG = "/dev/termination-log"

#: CPU/memory of the small CUDA sample containers: requests, limits.
SMALL = ({"cpu": "250m", "memory": "512Mi"}, {"cpu": "1", "memory": "1Gi"})


def container_security(*, read_only: bool = True) -> dict[str, Any]:
    """The container securityContext of every acceptance container (Pod Security restricted)."""
    return {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "privileged": False,
        "readOnlyRootFilesystem": read_only, "runAsNonRoot": True,
    }


def compute(requests: dict[str, str], limits: dict[str, str], devices: dict[str, int] | None = None) -> dict[str, Any]:
    """A container's ``resources``: CPU/memory requests and limits, device resources as limits (= requests)."""
    out: dict[str, Any] = {"requests": dict(requests), "limits": dict(limits)}
    for name, count in (devices or {}).items():
        out["limits"][name] = count
    return out


def container(name: str, image: str, resources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A hardened container with a writable ``/tmp`` and its termination message from the file, else the logs."""
    mounts = [{"name": "tmp", "mountPath": "/tmp"}, *extra.pop("volumeMounts", [])]
    security = extra.pop("securityContext", None) or container_security()
    return {
        "name": name, "image": image, "imagePullPolicy": "IfNotPresent", **extra,
        "resources": resources,
        "securityContext": security,
        "terminationMessagePath": TERMINATION_LOG,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": mounts,
    }


def pod_spec(ctx: ClusterContext, pool: Pool, containers: list[dict[str, Any]], *,
             run_as: int | None = RUN_AS, volumes: list[dict[str, Any]] | None = None,
             **extra: Any) -> dict[str, Any]:
    """A pod on ``pool``'s nodes: its nodeSelector and tolerations, no token, the mirror's pull secrets."""
    security: dict[str, Any] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    if run_as is not None:
        security.update({"runAsUser": run_as, "runAsGroup": run_as})
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "nodeSelector": dict(pool.node_selector),
        "securityContext": security,
        **extra,
        "containers": containers,
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}}, *(volumes or [])],
    }
    if pool.taints:
        pod["tolerations"] = [toleration(t) for t in pool.taints]
    if ctx.pull_secrets:
        pod["imagePullSecrets"] = [{"name": s} for s in ctx.pull_secrets]
    return pod


def one_per_node(job: str) -> dict[str, Any]:
    """Affinity that puts every pod of Job ``job`` on a node of its own (required pod anti-affinity)."""
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {JOB_LABEL: job}}, "topologyKey": HOSTNAME,
    }]}}


def all_on_one_node(job: str) -> dict[str, Any]:
    """Affinity that puts every pod of Job ``job`` on the same node (required pod affinity to each other)."""
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {JOB_LABEL: job}}, "topologyKey": HOSTNAME,
    }]}}


def spread(job: str) -> list[dict[str, Any]]:
    """A topology spread of Job ``job``'s pods over nodes (best effort: a pool smaller than the replicas still runs)."""
    return [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {JOB_LABEL: job}}}]
