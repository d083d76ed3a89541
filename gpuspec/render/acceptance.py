"""Acceptance checks: per pool, a Job that must get exactly the GPU resource the pool advertises (pure).

Each Job runs NVIDIA's CUDA vectorAdd sample (mirror-rewritten for air-gapped clusters) on the pool's
nodes — the pool's nodeSelector and tolerations — in the tenant-neutral namespace
:data:`ACCEPTANCE_NAMESPACE` (Pod Security ``restricted``: non-root, no privileges), asking for one
whole GPU, one shared replica, or one device of each MIG profile of the pool's layout.  The Job names
carry a digest of the cluster's rendered configuration, so every change of it runs new Jobs.

Argo CD runs the Jobs as PostSync hooks of the overlay Application (deleted on success, kept on
failure); Flux applies them with a Kustomization that depends on the overlay and health-checks them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from gpuspec.matrix.acceptance import sample_image
from gpuspec.render.context import ClusterContext
from gpuspec.render.operand_images import rewrite
from gpuspec.render.overlay import MANAGED_BY, metadata, namespace, psa_labels
from gpuspec.render.poolresources import has_acceptance_check, pool_resources
from gpuspec.render.values import toleration
from gpuspec.spec.models import Pool

#: Namespace of the acceptance Jobs: no tenant's, no quota, Pod Security restricted.
ACCEPTANCE_NAMESPACE = "gpuspec-acceptance"
#: Folder of the acceptance objects inside the cluster's rendered folder.
ACCEPTANCE_DIR = "acceptance"
#: The one resource file of the acceptance folder.
ACCEPTANCE_FILE = "acceptance.yaml"
#: ConfigMap whose content changes with the cluster's configuration (makes Argo CD sync and run the hooks).
TRIGGER_CONFIGMAP = "gpuspec-acceptance"
#: Argo CD: run after the overlay is synced and healthy; delete on success, keep a failed Job for diagnosis.
ARGOCD_HOOK = {
    "argocd.argoproj.io/hook": "PostSync",
    "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded",
}
#: Restricted Pod Security: the Jobs prove a GPU is usable without any privilege.
ACCEPTANCE_PSA = psa_labels("restricted")
#: Unprivileged user the sample runs as.
RUN_AS = 65534


@dataclass(frozen=True, slots=True)
class AcceptanceCheck:
    """One pool's acceptance check: the Job name and the resources each of its containers requests."""

    pool: Pool
    job: str
    resources: tuple[str, ...]
    timeout_seconds: int

    def to_data(self) -> dict[str, Any]:
        """The check as plain data (plan, handover documents)."""
        return {
            "pool": self.pool.name, "job": self.job, "namespace": ACCEPTANCE_NAMESPACE,
            "resources": {r: 1 for r in self.resources}, "nodeSelector": dict(self.pool.node_selector),
            "timeoutSeconds": self.timeout_seconds,
        }


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
    data.pop("managed", None)  # only managed pools get a Job at all
    data.pop("autoscaling", None)  # how many nodes the autoscaler keeps changes nothing one node must show
    return data


def _job_name(pool: Pool, digest: str) -> str:
    stem = f"acceptance-{pool.name}"[:50].rstrip("-")
    return f"{stem}-{digest[:8]}"


def acceptance_checks(ctx: ClusterContext, config: dict[str, Any]) -> list[AcceptanceCheck]:
    """The enabled checks of the cluster's pools (pools without nodes or a known resource get none).

    ``config``: the cluster's other rendered documents, whose digest goes into the Job names.
    """
    digest = _config_digest(config)
    checks: list[AcceptanceCheck] = []
    for pool in ctx.cluster.pools:
        if not has_acceptance_check(pool):
            continue
        resources = pool_resources(pool)
        own = _config_digest({"digest": digest, "pool": _pool_facts(pool)})
        checks.append(AcceptanceCheck(pool, _job_name(pool, own), resources, pool.acceptance.timeout_seconds))
    return checks


def acceptance_image(ctx: ClusterContext) -> str:
    """The sample image the cluster pulls (mirror-rewritten)."""
    return rewrite(sample_image(), ctx.mirror)


def _container_name(resource: str) -> str:
    name = resource.removeprefix("nvidia.com/").replace(".", "-").replace("_", "-").lower()
    return name[:63].rstrip("-")


def job(ctx: ClusterContext, check: AcceptanceCheck) -> dict[str, Any]:
    """The Job of one acceptance check."""
    pool = check.pool
    labels = {**MANAGED_BY, "gpuspec.io/acceptance": "true", "gpuspec.io/pool": pool.name}
    annotations = ARGOCD_HOOK if ctx.cluster.gitops.tool == "argocd" else None
    meta = metadata(ctx, check.job, ACCEPTANCE_NAMESPACE, annotations=annotations)
    meta["labels"] = labels
    image = acceptance_image(ctx)
    containers = [{
        "name": _container_name(resource),
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {"limits": {resource: 1}},
        "securityContext": {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "privileged": False,
            "readOnlyRootFilesystem": True, "runAsNonRoot": True,
        },
    } for resource in check.resources]
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "nodeSelector": dict(pool.node_selector),
        "securityContext": {
            "runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": containers,
    }
    if pool.taints:
        pod["tolerations"] = [toleration(t) for t in pool.taints]
    if ctx.pull_secrets:
        pod["imagePullSecrets"] = [{"name": s} for s in ctx.pull_secrets]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "backoffLimit": 1,
            "activeDeadlineSeconds": check.timeout_seconds,
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }


def acceptance_files(ctx: ClusterContext, checks: list[AcceptanceCheck]) -> dict[str, list[dict[str, Any]]]:
    """File name → documents of the acceptance folder (empty when there are no checks).

    One file holds the namespace, the Argo CD trigger and every Job (a fleet of 1,000 clusters x 10 pools
    writes two files per cluster, not twelve).
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
    docs.extend(job(ctx, check) for check in checks)
    return {ACCEPTANCE_FILE: docs}
