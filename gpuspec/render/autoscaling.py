"""What each autoscaled pool's autoscaler needs so it waits for the GPU Operator (pure data, `autoscaling.yaml`).

Per pool: the node-group template cluster-autoscaler scales from (labels with the cloud provider's GPU label,
taints, resources, and on AWS the Auto Scaling Group tags that carry them), or the Karpenter NodePool template
fields (labels, taints, startup taints, GPU limit); and the readiness gate in words. gpuspec renders no startup
taint of its own: the GPU Operator removes none, so one would strand every new node (see GS242).
"""

from __future__ import annotations

from typing import Any

from gpuspec.matrix import autoscaling as asdata
from gpuspec.model.models import AutoscalerKind, MigStrategy, Pool, SharingMode
from gpuspec.render.context import ClusterContext
from gpuspec.render.facts import mig_layout_profiles
from gpuspec.render.poolresources import GPU_RESOURCE

#: File of the autoscaling facts inside a cluster's output folder (data, not applied by GitOps).
AUTOSCALING_FILE = "autoscaling.yaml"


def _per_gpu_profiles(pool: Pool) -> list[tuple[int, dict[str, int]]]:
    """(number of GPUs, MIG profile → instances per GPU) groups of the pool's layout."""
    if pool.mig.custom is not None:
        out = []
        for group in pool.mig.custom:
            gpus = pool.gpu.count if isinstance(group.devices, str) else \
                len([d for d in group.devices if d < pool.gpu.count])
            out.append((gpus, dict(group.profiles)))
        return out
    if pool.mig.layout:
        return [(pool.gpu.count, mig_layout_profiles(pool.mig.layout, pool.gpu.product))]
    return []


def node_resources(pool: Pool) -> dict[str, int]:
    """Extended resources one node of ``pool`` advertises once the operator is done (empty when unknown)."""
    shared = pool.sharing.mode is not SharingMode.NONE
    factor = pool.sharing.replicas if shared else 1
    suffix = ".shared" if shared and pool.sharing.rename_by_default else ""
    if pool.mig.strategy is MigStrategy.NONE:
        return {GPU_RESOURCE + suffix: pool.gpu.count * factor}
    counts: dict[str, int] = {}
    for gpus, profiles in _per_gpu_profiles(pool):
        for profile, instances in profiles.items():
            name = GPU_RESOURCE if pool.mig.strategy is MigStrategy.SINGLE else f"nvidia.com/mig-{profile}"
            counts[name + suffix] = counts.get(name + suffix, 0) + gpus * instances * factor
    return dict(sorted(counts.items()))


def _taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect} if value else {"key": key, "effect": effect}


def gpu_label_value(pool: Pool) -> str:
    """The value gpuspec gives cluster-autoscaler's GPU label (its GPU type, e.g. in ``--gpu-total``)."""
    return pool.gpu.product.lower()


def _cluster_autoscaler(pool: Pool, labels: dict[str, str]) -> dict[str, Any]:
    auto = pool.autoscaling
    assert auto is not None
    label = asdata.gpu_label(auto.cloud)
    template_labels = dict(labels)
    gate: str
    if label and auto.cloud == "gce":
        gate = (f"GKE sets {label} on the node; cluster-autoscaler counts the node as unready while it has the "
                "label and no allocatable nvidia.com/gpu")
    elif label:
        template_labels[label] = gpu_label_value(pool)
        gate = (f"the node group sets the label {label} (value {gpu_label_value(pool)}); cluster-autoscaler "
                "counts the node as unready while it has the label and no allocatable nvidia.com/gpu")
    else:
        gate = "none from the cloud provider (cloud: other has no GPU label)"
    startup = [t for t in auto.startup_taints if t.removed_by]
    if startup:
        gate += "; startup taint(s) " + ", ".join(f"{t.key} (removed by {t.removed_by})" for t in startup)
    taints = [_taint(t.key, t.value, t.effect) for t in pool.taints] + \
        [_taint(t.key, t.value, t.effect) for t in startup]
    resources = node_resources(pool)
    out: dict[str, Any] = {
        "gpuLabel": label or None,
        "readinessGate": gate,
        "nodeGroupTemplate": {"labels": template_labels, "taints": taints,
                              "resources": {k: str(v) for k, v in resources.items()}},
    }
    if auto.cloud == "aws":
        # Tag keys are the prefix plus these (kept apart so no line of the file outgrows yamllint's 80 columns).
        tags = {f"label/{k}": v for k, v in sorted(template_labels.items())}
        tags |= {f"taint/{t['key']}": f"{t.get('value', '')}:{t['effect']}" for t in taints}
        tags |= {f"resources/{k}": str(v) for k, v in resources.items()}
        out["autoScalingGroupTags"] = {"prefix": asdata.aws_template_tag_prefix(), "tags": tags}
    if startup:
        out["startupTaintFlags"] = [f"--startup-taint={t.key}" for t in startup]
    return out


def _karpenter(pool: Pool, labels: dict[str, str]) -> dict[str, Any]:
    auto = pool.autoscaling
    assert auto is not None
    startup = [t for t in auto.startup_taints if t.removed_by]
    gate = ("Karpenter counts a node as initialized only once the instance type's extended resources "
            "(nvidia.com/gpu) are registered by the device plugin")
    if startup:
        gate += " and its startup taints are removed: " + ", ".join(
            f"{t.key} (removed by {t.removed_by})" for t in startup)
    template: dict[str, Any] = {"metadata": {"labels": dict(labels)},
                                "spec": {"taints": [_taint(t.key, t.value, t.effect) for t in pool.taints]}}
    if startup:
        template["spec"]["startupTaints"] = [_taint(t.key, t.value, t.effect) for t in startup]
    out: dict[str, Any] = {"readinessGate": gate, "nodePoolTemplate": template}
    # NodePool limits count the instance types' GPUs (nvidia.com/gpu), whatever MIG or sharing makes of them.
    out["nodePoolLimits"] = {GPU_RESOURCE: str(auto.max * pool.gpu.count)}
    return out


def autoscaling_facts(ctx: ClusterContext, node_labels: dict[str, Any]) -> dict[str, Any] | None:
    """The ``autoscaling.yaml`` document of the cluster, or None when no pool autoscales."""
    pools: dict[str, Any] = {}
    gpu_total: dict[str, list[int]] = {}
    for pool in sorted(ctx.cluster.pools, key=lambda p: p.name):
        auto = pool.autoscaling
        if auto is None:
            continue
        labels = dict(node_labels["pools"].get(pool.name, {}).get("labels", {}))
        entry: dict[str, Any] = {"autoscaler": auto.autoscaler.value, "min": auto.min, "max": auto.max}
        if auto.autoscaler is AutoscalerKind.CLUSTER_AUTOSCALER:
            entry["cloud"] = auto.cloud
            entry |= _cluster_autoscaler(pool, labels)
            if entry["gpuLabel"] and auto.cloud != "gce":
                low, high = gpu_total.setdefault(gpu_label_value(pool), [0, 0])
                gpu_total[gpu_label_value(pool)] = [low + auto.min * pool.gpu.count, high + auto.max * pool.gpu.count]
        else:
            entry |= _karpenter(pool, labels)
        pools[pool.name] = entry
    if not pools:
        return None
    doc: dict[str, Any] = {"operatorRemovesTaints": asdata.operator_removes_taints(), "pools": pools}
    if gpu_total:
        doc["clusterAutoscalerFlags"] = [f"--gpu-total={t}:{lo}:{hi}" for t, (lo, hi) in sorted(gpu_total.items())]
    return doc
