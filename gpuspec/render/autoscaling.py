"""What each autoscaled pool's autoscaler needs so it waits for the GPU Operator (pure data, `autoscaling.yaml`).

Per pool: the node-group template cluster-autoscaler scales from (labels with the cloud provider's GPU label,
taints, resources, and on AWS and Azure the tags that carry them), or the Karpenter NodePool template fields
(labels, taints, startup taints, limits) and, where the pool advertises what no instance type offers, the
NodeOverlay that tells Karpenter; and the readiness gate in words. gpuspec renders no startup taint of its own: the
GPU Operator removes none, so one would strand every new node (see GS242).

What a pool's nodes advertise decides the rest (:func:`advertised_resources`): cluster-autoscaler counts a node
that carries its cloud's GPU label as unready until ``nvidia.com/gpu`` is allocatable, so gpuspec renders the label
only for pools that advertise it (GS248 where the platform sets it anyway); ``--gpu-total`` counts the advertised
``nvidia.com/gpu``; template resources list every advertised resource.
"""

from __future__ import annotations

from typing import Any

from gpuspec.matrix import autoscaling as asdata
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.pool_specs import AutoscalerKind, AutoscalingSpec, MigStrategy, SharingMode
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


def is_vm_pool(cluster: Cluster, pool: Pool) -> bool:
    """True for a pool of VM passthrough nodes (``devices.sandbox`` with sandbox workloads on): its sandbox device
    plugin advertises each GPU under its device model's name (``nvidia.com/GP102GL_Tesla_P40``), never
    ``nvidia.com/gpu``."""
    return pool.devices.sandbox and cluster.operator.operands.sandbox_workloads


def advertised_resources(cluster: Cluster, pool: Pool) -> dict[str, int]:
    """What one node of ``pool`` advertises to the autoscaler's eyes: :func:`node_resources`, none known for a VM
    pool (its resource names are the GPUs' device models)."""
    return {} if is_vm_pool(cluster, pool) else node_resources(pool)


def why_no_gpu_resource(cluster: Cluster, pool: Pool) -> str:
    """Why ``pool`` advertises no ``nvidia.com/gpu`` (for messages), or "" when it does or nothing is known."""
    if is_vm_pool(cluster, pool):
        return "its GPUs are passed through to VMs (devices.sandbox): the sandbox device plugin names them by model"
    advertised = node_resources(pool)
    if not advertised or asdata.ready_gpu_resource() in advertised:
        return ""
    if any(name.endswith(".shared") for name in advertised):
        return "sharing.renameByDefault advertises " + ", ".join(advertised)
    return "mig.strategy mixed advertises " + ", ".join(advertised)


def unknown_to_instance_types(cluster: Cluster, pool: Pool) -> list[str]:
    """The resources ``pool`` advertises that no instance type offers by itself (only ``nvidia.com/gpu``, from
    the GPU count): MIG profiles of the mixed strategy, ``.shared`` names."""
    base = asdata.karpenter_instance_gpu_resource()
    return [name for name in advertised_resources(cluster, pool) if name != base]


def _taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect} if value else {"key": key, "effect": effect}


def gpu_label_value(pool: Pool) -> str:
    """The value gpuspec gives cluster-autoscaler's GPU label (its GPU type, e.g. in ``--gpu-total``)."""
    return pool.gpu.product.lower()


def gpu_label_on_nodes(cluster: Cluster, pool: Pool, auto: AutoscalingSpec) -> str | None:
    """The GPU label cluster-autoscaler reads that the pool's nodes carry: the one the platform sets (gce, azure),
    or on aws the one gpuspec renders into the node group, only for a pool that advertises ``nvidia.com/gpu``."""
    label = asdata.gpu_label(auto.cloud, cluster.kubernetes.version)
    if label is None or asdata.gpu_label_set_by_platform(auto.cloud):
        return label
    return label if asdata.ready_gpu_resource() in advertised_resources(cluster, pool) else None


def _tag_key(key: str) -> str:
    """A label or taint key as an Azure VMSS tag name writes it: ``_`` as ``~2``, then ``/`` as ``_``."""
    return key.replace("_", "~2").replace("/", "_")


def _gate_text(cluster: Cluster, pool: Pool, auto: AutoscalingSpec, label: str | None) -> str:
    ready = asdata.ready_gpu_resource()
    why = why_no_gpu_resource(cluster, pool)
    platform = asdata.gpu_label_set_by_platform(auto.cloud)
    name = asdata.gpu_label(auto.cloud, cluster.kubernetes.version)
    if label and why:
        ok, percent = asdata.unready_limits()
        return (f"{'GKE' if auto.cloud == 'gce' else 'AKS'} sets {label} on the node and {why}, never {ready}: "
                f"cluster-autoscaler counts every node of the pool as unready for good and halts once more than "
                f"{ok} nodes and {percent}% of the cluster are unready (GS248)")
    if label and platform:
        return (f"{'GKE' if auto.cloud == 'gce' else 'AKS'} sets {label} on the node; cluster-autoscaler counts "
                f"the node as unready while it has the label and no allocatable {ready}")
    if label:
        return (f"the node group sets the label {label} (value {gpu_label_value(pool)}); cluster-autoscaler "
                f"counts the node as unready while it has the label and no allocatable {ready}")
    if name and why:
        return (f"none from the GPU label: {why}, never {ready}, so the node group must not set the GPU label "
                "(with it cluster-autoscaler would count every node unready for good)")
    return f"none from the cloud provider (cloud: {auto.cloud} has no GPU label)"


def _cluster_autoscaler(cluster: Cluster, pool: Pool, labels: dict[str, str]) -> dict[str, Any]:
    auto = pool.autoscaling
    assert auto is not None
    label = gpu_label_on_nodes(cluster, pool, auto)
    template_labels = dict(labels)
    if label and not asdata.gpu_label_set_by_platform(auto.cloud):
        template_labels[label] = gpu_label_value(pool)
    gate = _gate_text(cluster, pool, auto, label)
    startup = [t for t in auto.startup_taints if t.removed_by]
    if startup:
        gate += "; startup taint(s) " + ", ".join(f"{t.key} (removed by {t.removed_by})" for t in startup)
    taints = [_taint(t.key, t.value, t.effect) for t in pool.taints] + \
        [_taint(t.key, t.value, t.effect) for t in startup]
    resources = advertised_resources(cluster, pool)
    if resources and GPU_RESOURCE not in resources:
        # The template takes nvidia.com/gpu from the instance type's GPU count unless a tag says otherwise
        # (aws_manager.go buildNodeFromTemplate, azure_template.go); these nodes advertise none.
        resources = {GPU_RESOURCE: 0, **resources}
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
    elif auto.cloud == "azure":
        tags = {f"label_{_tag_key(k)}": v for k, v in sorted(template_labels.items())}
        tags |= {f"taint_{_tag_key(t['key'])}": f"{t.get('value', '')}:{t['effect']}" for t in taints}
        tags |= {f"resources_{k.replace('/', '_')}": str(v) for k, v in resources.items()}
        out["scaleSetTags"] = {"prefix": asdata.azure_template_tag_prefix(), "tags": tags}
    if startup:
        out["startupTaintFlags"] = [f"--startup-taint={t.key}" for t in startup]
    return out


def node_overlay_name(cluster: Cluster, pool: Pool) -> str:
    """The name of the NodeOverlay gpuspec renders for ``pool`` (cluster-scoped, so it names the cluster too)."""
    return f"gpuspec-{cluster.name}-{pool.name}"


def _node_overlay(cluster: Cluster, pool: Pool, resources: dict[str, int]) -> dict[str, Any]:
    """The NodeOverlay (karpenter.sh/v1alpha1) that gives the instance types of the pool's NodePool (matched by the
    pool's node-selector labels, which the NodePool template carries) the resources its nodes advertise."""
    return {
        "apiVersion": asdata.node_overlay()["api_version"],
        "kind": "NodeOverlay",
        "metadata": {"name": node_overlay_name(cluster, pool)},
        "spec": {
            "requirements": [{"key": k, "operator": "In", "values": [v]}
                             for k, v in sorted(pool.node_selector.items())],
            "capacity": {k: str(v) for k, v in resources.items()},
        },
    }


def _karpenter(cluster: Cluster, pool: Pool, labels: dict[str, str]) -> dict[str, Any]:
    auto = pool.autoscaling
    assert auto is not None
    startup = [t for t in auto.startup_taints if t.removed_by]
    resources = advertised_resources(cluster, pool)
    gate = ("Karpenter counts a node as initialized only once the extended resources its pods requested ("
            + (", ".join(resources) or "the GPUs' device-model names") + ") are registered by the device plugin")
    if startup:
        gate += " and its startup taints are removed: " + ", ".join(
            f"{t.key} (removed by {t.removed_by})" for t in startup)
    template: dict[str, Any] = {"metadata": {"labels": dict(labels)},
                                "spec": {"taints": [_taint(t.key, t.value, t.effect) for t in pool.taints]}}
    if startup:
        template["spec"]["startupTaints"] = [_taint(t.key, t.value, t.effect) for t in startup]
    out: dict[str, Any] = {"readinessGate": gate, "nodePoolTemplate": template}
    # NodePool limits sum what the nodes advertise (an initialized node's own capacity): limit those resources.
    limits = resources or {GPU_RESOURCE: pool.gpu.count}
    out["nodePoolLimits"] = {name: str(auto.max * count) for name, count in limits.items()}
    if resources and resources != {asdata.karpenter_instance_gpu_resource(): pool.gpu.count}:
        overlay = asdata.node_overlay()
        out["nodeOverlay"] = _node_overlay(cluster, pool, resources)
        out["nodeOverlayNeeds"] = (f"Karpenter {overlay['since']} or later with the feature gate "
                                   f"{overlay['feature_gate']}; the NodePool's instance types have "
                                   f"{pool.gpu.count} GPUs each")
    return out


def autoscaling_facts(ctx: ClusterContext, node_labels: dict[str, Any]) -> dict[str, Any] | None:
    """The ``autoscaling.yaml`` document of the cluster, or None when no pool autoscales."""
    cluster = ctx.cluster
    pools: dict[str, Any] = {}
    gpu_total: dict[str, list[int]] = {}
    for pool in sorted(cluster.pools, key=lambda p: p.name):
        auto = pool.autoscaling
        if auto is None:
            continue
        labels = dict(node_labels["pools"].get(pool.name, {}).get("labels", {}))
        entry: dict[str, Any] = {"autoscaler": auto.autoscaler.value, "min": auto.min, "max": auto.max}
        if auto.autoscaler is AutoscalerKind.CLUSTER_AUTOSCALER:
            entry["cloud"] = auto.cloud
            entry |= _cluster_autoscaler(cluster, pool, labels)
            # --gpu-total counts a labelled node's allocatable nvidia.com/gpu (GetNodeGpuTarget), by label value.
            gpus = advertised_resources(cluster, pool).get(GPU_RESOURCE, 0)
            gpu_type = asdata.platform_gpu_type(auto.cloud) if asdata.gpu_label_set_by_platform(auto.cloud) \
                else gpu_label_value(pool)
            if entry["gpuLabel"] and gpu_type and gpus:
                low, high = gpu_total.setdefault(gpu_type, [0, 0])
                gpu_total[gpu_type] = [low + auto.min * gpus, high + auto.max * gpus]
        else:
            entry |= _karpenter(cluster, pool, labels)
        pools[pool.name] = entry
    if not pools:
        return None
    doc: dict[str, Any] = {"operatorRemovesTaints": asdata.operator_removes_taints(), "pools": pools}
    if gpu_total:
        doc["clusterAutoscalerFlags"] = [f"--gpu-total={t}:{lo}:{hi}" for t, (lo, hi) in sorted(gpu_total.items())]
    return doc
