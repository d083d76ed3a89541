"""Emit the Kubernetes objects of a cluster's Kustomize overlay (pure).

Namespaces with Pod Security labels, NVIDIADriver per pool (multi-driver clusters),
the MIG and device-plugin ConfigMaps, ResourceQuota and LimitRange per tenant
namespace, PriorityClasses, read-only RBAC for the operator namespace.
"""

from __future__ import annotations

from typing import Any

from gpuspec.matrix.runtime import managed_platform
from gpuspec.model.cluster import Pool, Tenant
from gpuspec.model.pool_specs import MigStrategy, SharingMode
from gpuspec.render.context import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    MIG_CONFIG_LABEL,
    MIG_DEFAULT_LAYOUT,
    ClusterContext,
    PoolDriver,
)
from gpuspec.render.facts import mig_layout_entries, mig_layout_profiles, nvidiadriver_has_field
from gpuspec.render.operand_images import component_enabled, rewrite
from gpuspec.render.poolresources import GPU_RESOURCE, SHARED_GPU_RESOURCE, gpu_quota_resources
from gpuspec.render.serialize import dump_document
from gpuspec.render.values import proxy_env, toleration, upgrade_policy

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpuspec"}
#: Argo CD: apply after the chart's CRDs and operator (wave 1), and skip the dry run while the CRD is missing.
AFTER_CRDS = {
    "argocd.argoproj.io/sync-wave": "1",
    "argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true",
}
#: GitOps must never delete a namespace because a file disappeared.
KEEP_NAMESPACE = {
    "argocd.argoproj.io/sync-options": "Delete=false,Prune=false",
    "kustomize.toolkit.fluxcd.io/prune": "disabled",
}
#: Group that gets read-only access to the operator namespace and GPU Operator resources.
VIEWER_GROUP = "gpuspec:gpu-operator-viewers"


def gitops_labels(ctx: ClusterContext) -> dict[str, str]:
    """Labels of GitOps objects (several clusters' objects share an Argo CD / Flux namespace)."""
    return {**MANAGED_BY, "gpuspec.io/cluster": ctx.name}


def metadata(ctx: ClusterContext, name: str, namespace: str | None = None,
             annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """Object metadata with gpuspec's label (no cluster name: identical objects serialize once per fleet)."""
    meta: dict[str, Any] = {"name": name, "labels": dict(MANAGED_BY)}
    if namespace is not None:
        meta["namespace"] = namespace
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def psa_labels(level: str, warn: str | None = None) -> dict[str, str]:
    """Pod Security Admission labels: enforce and audit at ``level``, warn at ``warn`` (default the same)."""
    return {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/audit": warn or level,
        "pod-security.kubernetes.io/warn": warn or level,
    }


#: The operator's operands (driver, toolkit, device plugin) run privileged.
OPERATOR_PSA = psa_labels("privileged")
#: GPU workloads need no privileges: baseline enforced, restricted reported.
TENANT_PSA = psa_labels("baseline", "restricted")


def namespace(ctx: ClusterContext, name: str, psa: dict[str, str], **extra: str) -> dict[str, Any]:
    """A Namespace with Pod Security labels that GitOps never prunes."""
    meta = metadata(ctx, name, annotations=KEEP_NAMESPACE)
    meta["labels"] = {**meta["labels"], **psa, **extra}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


# ----------------------------------------------------------------------------- drivers


def nvidia_driver(ctx: ClusterContext, driver: PoolDriver) -> dict[str, Any]:
    """The NVIDIADriver that installs one pool's driver on exactly that pool's nodes."""
    version = ctx.facts.version
    images = ctx.facts.images
    image = images["driver"]
    pool = driver.pool
    spec: dict[str, Any] = {
        "driverType": "gpu",
        "repository": rewrite(image.repository or "", ctx.mirror),
        "image": image.image,
        "version": driver.spec_version,
        "usePrecompiled": driver.precompiled,
        "nodeSelector": dict(pool.node_selector),
    }
    manager = images.get("driver.manager")
    if manager is not None and manager.repository:
        spec["manager"] = {
            "repository": rewrite(manager.repository, ctx.mirror), "image": manager.image, "version": manager.version,
        }
    if nvidiadriver_has_field(version, "default"):
        spec["default"] = False
    if nvidiadriver_has_field(version, "kernelModuleType"):
        spec["kernelModuleType"] = driver.kernel_module_type
    elif nvidiadriver_has_field(version, "useOpenKernelModules") and driver.kernel_module_type != "auto":
        spec["useOpenKernelModules"] = driver.kernel_module_type == "open"
    if nvidiadriver_has_field(version, "upgradePolicy"):
        spec["upgradePolicy"] = upgrade_policy(ctx, "podDeletion")
    if ctx.pull_secrets:
        spec["imagePullSecrets"] = ctx.pull_secrets
    if ctx.mirror is not None and ctx.mirror.package_repo_config_map:
        spec["repoConfig"] = {"name": ctx.mirror.package_repo_config_map}
    if ctx.mirror is not None and ctx.mirror.ca_config_map:
        spec["certConfig"] = {"name": ctx.mirror.ca_config_map}
    env = proxy_env(ctx)
    if env:
        spec["env"] = env
    if ctx.rdma and pool.devices.rdma:
        spec["rdma"] = {"enabled": True}
    if ctx.gds and pool.devices.gds:
        spec["gds"] = {"enabled": True}
    if ctx.gdrcopy and pool.devices.gdrcopy and nvidiadriver_has_field(version, "gdrcopy"):
        spec["gdrcopy"] = {"enabled": True}
    if pool.taints and nvidiadriver_has_field(version, "tolerations"):
        spec["tolerations"] = [toleration(t) for t in pool.taints]
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "NVIDIADriver",
        "metadata": metadata(ctx, driver.resource_name, annotations=AFTER_CRDS),
        "spec": spec,
    }


# ----------------------------------------------------------------------------- MIG and sharing


def _custom_entries(pool: Pool) -> list[dict[str, Any]]:
    return [
        {"devices": group.devices if group.devices == "all" else list(group.devices), "mig-enabled": True,
         "mig-devices": dict(group.profiles)}
        for group in pool.mig.custom or []
    ]


def mig_config(ctx: ClusterContext) -> dict[str, Any]:
    """The mig-parted config (``version: v1``) with every layout the cluster's pools select."""
    configs: dict[str, Any] = {MIG_DEFAULT_LAYOUT: mig_layout_entries(MIG_DEFAULT_LAYOUT) or [
        {"devices": "all", "mig-enabled": False},
    ]}
    for pool in ctx.cluster.pools:
        name = ctx.mig_layouts.get(pool.name)
        if name is None:
            continue
        if pool.mig.custom is not None:
            configs[name] = _custom_entries(pool)
        else:
            entries = mig_layout_entries(name)
            if entries is not None:
                configs[name] = entries
    return {"version": "v1", "mig-configs": configs}


def mig_configmap(ctx: ClusterContext) -> dict[str, Any]:
    """The ConfigMap migManager.config.name points at (key ``config.yaml``)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(ctx, ctx.mig_configmap, ctx.namespace),
        "data": {"config.yaml": dump_document(mig_config(ctx))},
    }


def _pool_profiles(ctx: ClusterContext, pool: Pool) -> list[str]:
    if pool.mig.custom is not None:
        return sorted({p for group in pool.mig.custom for p in group.profiles})
    if pool.mig.layout:
        return sorted(mig_layout_profiles(pool.mig.layout, pool.gpu.product))
    return []


def sharing_config(ctx: ClusterContext, pool: Pool | None) -> dict[str, Any]:
    """One device-plugin config (``version: v1``): the pool's time-slicing/MPS sharing, or none for ``None``."""
    config: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": ctx.mig_strategy}}
    if pool is None:
        return config
    sharing = pool.sharing
    profiles = _pool_profiles(ctx, pool) if pool.mig.strategy is MigStrategy.MIXED else []
    names = [f"nvidia.com/mig-{p}" for p in profiles] or ["nvidia.com/gpu"]
    resources = [{"name": n, "replicas": sharing.replicas} for n in names]
    if sharing.mode is SharingMode.TIME_SLICING:
        config["sharing"] = {"timeSlicing": {
            "renameByDefault": sharing.rename_by_default,
            "failRequestsGreaterThanOne": sharing.fail_requests_greater_than_one,
            "resources": resources,
        }}
    else:
        # MPS: format of the k8s-device-plugin README ("With CUDA MPS", v0.15.0+); the matrix records it as unknown.
        config["sharing"] = {"mps": {"renameByDefault": sharing.rename_by_default, "resources": resources}}
    return config


def sharing_config_name(pool: Pool) -> str:
    """The key of a sharing pool's config in the device-plugin ConfigMap, its nodes' config label value."""
    return pool.sharing.config_name or pool.name


def device_plugin_configmap(ctx: ClusterContext) -> dict[str, Any]:
    """The ConfigMap devicePlugin.config.name points at: the default key (unless none) plus one key per sharing
    pool (its ``sharing.configName``, else its name)."""
    data = {}
    if ctx.device_plugin_default:
        data[ctx.device_plugin_default] = dump_document(sharing_config(ctx, None))
    for pool in ctx.sharing_pools:
        data[sharing_config_name(pool)] = dump_document(sharing_config(ctx, pool))
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(ctx, ctx.device_plugin_configmap, ctx.namespace),
        "data": data,
    }


#: The node label the operator reads for a node's GPU workload (container, vm-passthrough, vm-vgpu).
WORKLOAD_CONFIG_LABEL = "nvidia.com/gpu.workload.config"
WORKLOAD_VM_PASSTHROUGH = "vm-passthrough"
#: The node label that switches every GPU Operator operand off on a node (hybrid mode, `managed: false`).
DEPLOY_OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
#: The per-node switch of the operator's container-toolkit DaemonSet (the operator's deploy labels, one per operand).
DEPLOY_TOOLKIT_LABEL = "nvidia.com/gpu.deploy.container-toolkit"


def node_labels(ctx: ClusterContext) -> dict[str, Any]:
    """Per pool, the node labels the rendered configuration expects (selector plus MIG/device-plugin config)."""
    pools: dict[str, Any] = {}
    for pool in ctx.cluster.pools:
        expected = dict(pool.node_selector)
        layout = ctx.mig_layouts.get(pool.name)
        if layout is not None:
            expected[MIG_CONFIG_LABEL] = layout
        if pool.sharing.mode is not SharingMode.NONE:
            expected[DEVICE_PLUGIN_CONFIG_LABEL] = sharing_config_name(pool)
        if ctx.sandbox and pool.devices.sandbox:
            # Without this label the operator gives the node the chart's default workload, `container`
            # (controllers/state_manager.go getWorkloadConfig; sandboxWorkloads.defaultWorkload): the VM pool
            # would run the container stack. gpuspec renders the passthrough stack (vfio-manager, sandbox plugin).
            expected[WORKLOAD_CONFIG_LABEL] = WORKLOAD_VM_PASSTHROUGH
        if not pool.managed:
            # Hybrid mode: the operator deploys no operand on the node (its deploy labels all default to this one).
            expected[DEPLOY_OPERANDS_LABEL] = "false"
        elif pool.toolkit.from_node_image and component_enabled(ctx, "toolkit"):
            # The node image brings the toolkit while other pools take the operator's: keep it off these nodes.
            expected[DEPLOY_TOOLKIT_LABEL] = "false"
        pools[pool.name] = {"labels": expected}
    return {"pools": pools}


# ----------------------------------------------------------------------------- tenants


def _gpus_per_container(ctx: ClusterContext, tenant: Tenant) -> dict[str, int] | None:
    """Per whole-GPU resource name, the most one container can get on the tenant's pools; None when MIG makes it
    layout-bound."""
    best: dict[str, int] = {}
    for name in tenant.pools:
        pool = ctx.cluster.pool(name)
        if pool is None:
            continue
        if pool.mig.strategy is not MigStrategy.NONE:
            return None
        sharing = pool.sharing
        resource = SHARED_GPU_RESOURCE if sharing.mode is not SharingMode.NONE and sharing.rename_by_default \
            else GPU_RESOURCE
        if sharing.mode is SharingMode.NONE:
            most = pool.gpu.count
        elif sharing.mode is SharingMode.TIME_SLICING and sharing.fail_requests_greater_than_one:
            most = 1
        else:
            most = pool.gpu.count * sharing.replicas
        best[resource] = max(best.get(resource, 0), most)
    return best or None


def tenant_objects(ctx: ClusterContext, tenant: Tenant) -> list[dict[str, Any]]:
    """Per tenant namespace: the Namespace, its GPU ResourceQuota and (where computable) a LimitRange.

    ``gpuQuota`` caps every whole-GPU resource name the tenant's pools advertise: a pool shared with
    ``renameByDefault`` advertises ``nvidia.com/gpu.shared``, which a quota on ``nvidia.com/gpu`` does not cap.
    """
    docs: list[dict[str, Any]] = []
    hard: dict[str, str] = {}
    pools = [p for name in tenant.pools if (p := ctx.cluster.pool(name)) is not None]
    if tenant.gpu_quota is not None:
        for resource in gpu_quota_resources(pools):
            hard[f"requests.{resource}"] = str(tenant.gpu_quota)
    for resource, limit in sorted(tenant.mig_quota.items()):
        hard[f"requests.nvidia.com/{resource}"] = str(limit)
    per_container = _gpus_per_container(ctx, tenant)
    for ns in tenant.namespaces:
        docs.append(namespace(ctx, ns, TENANT_PSA, **{"gpuspec.io/tenant": tenant.name}))
        if hard:
            docs.append({
                "apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": metadata(ctx, "gpuspec-gpu-quota", ns), "spec": {"hard": dict(hard)},
            })
        if per_container is not None:
            # default/defaultRequest 0: without them Kubernetes defaults a container's limit to `max`,
            # which would hand every container in the namespace that many GPUs.
            docs.append({
                "apiVersion": "v1", "kind": "LimitRange",
                "metadata": metadata(ctx, "gpuspec-gpu-limits", ns),
                "spec": {"limits": [{
                    "type": "Container",
                    "max": {r: str(n) for r, n in sorted(per_container.items())},
                    "default": {r: "0" for r in sorted(per_container)},
                    "defaultRequest": {r: "0" for r in sorted(per_container)},
                }]},
            })
    return docs


#: Folder (inside the cluster's rendered folder) of what must exist before the chart installs: the platform's
#: PriorityClass quota (and, with Flux, the operator namespace it lives in).
PREREQUISITES_DIR = "prerequisites"


def priority_class_quota(ctx: ClusterContext) -> dict[str, Any] | None:
    """The ResourceQuota a managed platform needs in the operator namespace before it admits the operands' pods of
    the system-*-critical PriorityClasses (GKE; data/runtime.yaml ``managed_platforms``), or None."""
    platform = managed_platform(ctx.cluster.kubernetes.distribution.value)
    quota = platform.priority_class_quota if platform is not None else None
    if quota is None:
        return None
    return {
        "apiVersion": "v1", "kind": "ResourceQuota",
        # Argo CD applies it before the chart's objects of the same Application (it is one of its sources).
        "metadata": metadata(ctx, quota.name, ctx.namespace, annotations={"argocd.argoproj.io/sync-wave": "-1"}),
        "spec": {
            "hard": {"pods": str(quota.pods)},
            "scopeSelector": {"matchExpressions": [
                {"operator": "In", "scopeName": "PriorityClass", "values": list(quota.priority_classes)},
            ]},
        },
    }


def priority_classes(ctx: ClusterContext) -> list[dict[str, Any]]:
    """The PriorityClasses the cluster spec declares."""
    docs: list[dict[str, Any]] = []
    for pc in ctx.cluster.priority_classes:
        doc: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": metadata(ctx, pc.name),
            "value": pc.value, "preemptionPolicy": pc.preemption_policy, "globalDefault": False,
        }
        if pc.description:
            doc["description"] = pc.description
        docs.append(doc)
    return docs


# ----------------------------------------------------------------------------- RBAC


_READ = ["get", "list", "watch"]


def rbac(ctx: ClusterContext) -> list[dict[str, Any]]:
    """Read-only access to the operator namespace and GPU Operator resources for the viewer group.

    Kubernetes RBAC only grants; gpuspec grants people read access and nothing else, so changes to the
    operator namespace go through git and the GitOps controller's own service account.
    """
    role_name = "gpuspec-gpu-operator-view"
    subject = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": VIEWER_GROUP}]
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": metadata(ctx, role_name, ctx.namespace),
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "pods/log", "services", "endpoints", "configmaps",
                                                  "events", "serviceaccounts"], "verbs": _READ},
                {"apiGroups": ["apps"], "resources": ["daemonsets", "deployments", "replicasets"], "verbs": _READ},
                {"apiGroups": ["monitoring.coreos.com"], "resources": ["servicemonitors", "prometheusrules"],
                 "verbs": _READ},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": metadata(ctx, role_name, ctx.namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
            "subjects": subject,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": metadata(ctx, role_name),
            "rules": [
                {"apiGroups": ["nvidia.com"], "resources": ["clusterpolicies", "nvidiadrivers"], "verbs": _READ},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": metadata(ctx, role_name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
            "subjects": subject,
        },
    ]


def kustomization(resources: list[str]) -> dict[str, Any]:
    """The overlay's kustomization.yaml listing its resource files."""
    return {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": sorted(resources),
    }

