"""Emit the pinned GPU Operator Helm values of a cluster (pure)."""

from __future__ import annotations

from typing import Any

from gpuspec.matrix.component_query import template_only_values
from gpuspec.matrix.runtime import TOOLKIT_ENV, host_driver_install, rendered_env, runtime_cell
from gpuspec.model.pool_specs import Taint
from gpuspec.render.context import MIG_DEFAULT_LAYOUT, ClusterContext
from gpuspec.render.facts import NFD, image_tag
from gpuspec.render.operand_images import component_enabled, rewrite

#: Components whose chart values take ``imagePullSecrets`` (a list of secret names) at every release that has them.
PULL_SECRET_COMPONENTS = frozenset({
    "operator", "validator", "driver", "toolkit", "devicePlugin", "gfd", "migManager", "nodeStatusExporter", "gds",
    "gdrcopy", "vgpuManager", "vgpuDeviceManager", "vfioManager", "kataManager", "sandboxDevicePlugin",
    "kataSandboxDevicePlugin", "ccManager", "draDriver",
})
#: The chart's default toleration of operand DaemonSets (``daemonsets.tolerations`` at every release).
GPU_TOLERATION: dict[str, str] = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
#: The control-plane toleration of the NFD worker (chart default from v23.9 on).
CONTROL_PLANE_TOLERATION: dict[str, str] = {
    "key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule",
}


def set_path(tree: dict[str, Any], path: str, value: Any) -> None:
    """Set ``tree[a][b][c] = value`` for ``path`` ``a.b.c``, creating the intermediate mappings."""
    *parents, leaf = path.split(".")
    node = tree
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def toleration(taint: Taint) -> dict[str, str]:
    """The toleration that lets a pod onto nodes with ``taint``."""
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def pool_tolerations(ctx: ClusterContext) -> list[dict[str, str]]:
    """Tolerations of every distinct pool taint, in a stable order; not the taints the chart's default toleration
    (:data:`GPU_TOLERATION`, any value) tolerates already, such as EKS's ``nvidia.com/gpu=present:NoSchedule``."""
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    for pool in ctx.cluster.pools:
        for taint in pool.taints:
            if taint.key == GPU_TOLERATION["key"] and taint.effect == GPU_TOLERATION["effect"]:
                continue
            seen.setdefault((taint.key, taint.value, taint.effect), toleration(taint))
    return [seen[k] for k in sorted(seen)]


def proxy_env(ctx: ClusterContext) -> list[dict[str, str]]:
    """HTTP(S)_PROXY / NO_PROXY (both spellings) for the driver container, from the mirror's proxy."""
    proxy = ctx.mirror.proxy if ctx.mirror else None
    if proxy is None:
        return []
    env: list[dict[str, str]] = []
    for name, value in (("HTTP_PROXY", proxy.http), ("HTTPS_PROXY", proxy.https), ("NO_PROXY", proxy.no_proxy)):
        if value:
            env.extend(({"name": name, "value": value}, {"name": name.lower(), "value": value}))
    return env


def upgrade_policy(ctx: ClusterContext, pod_deletion_key: str) -> dict[str, Any]:
    """The driver upgrade policy from the cluster's rollout (``pod_deletion_key``: gpuPodDeletion or podDeletion)."""
    rollout = ctx.cluster.rollout
    policy: dict[str, Any] = {
        "autoUpgrade": rollout.auto_upgrade,
        "maxParallelUpgrades": rollout.max_parallel_upgrades,
        "maxUnavailable": rollout.max_unavailable,
        "waitForCompletion": {"timeoutSeconds": rollout.wait_for_completion_seconds},
    }
    if rollout.wait_for_completion is not None:
        # The upgrade library waits only for pods matching a selector (k8s-operator-libs common_manager.go).
        wait = rollout.wait_for_completion
        policy["waitForCompletion"] = {"timeoutSeconds": wait.timeout_seconds, "podSelector": wait.pod_selector}
    if rollout.drain is not None:
        d = rollout.drain
        policy["drain"] = {
            "enable": d.enable, "force": d.force, "timeoutSeconds": d.timeout_seconds,
            "deleteEmptyDir": d.delete_empty_dir, "podSelector": d.pod_selector,
        }
    if rollout.pod_deletion is not None:
        p = rollout.pod_deletion
        policy[pod_deletion_key] = {
            "force": p.force, "timeoutSeconds": p.timeout_seconds, "deleteEmptyDir": p.delete_empty_dir,
        }
    return policy


def _images(ctx: ClusterContext, values: dict[str, Any]) -> None:
    """Every operand's image pinned; on an air-gapped cluster every image in the ClusterPolicy points to the mirror
    -- disabled operands too, so enabling one later (or an override) cannot pull from the public registry -- and
    every operand whose template reads pull secrets gets them."""
    facts = ctx.facts
    secrets = ctx.pull_secrets
    air_gapped = ctx.mirror is not None
    secret_keys = PULL_SECRET_COMPONENTS | {k.rsplit(".", 1)[0] for k in template_only_values()
                                            if k.endswith(".imagePullSecrets")}
    for path, image in facts.images.items():
        if path == NFD:
            continue
        enabled = component_enabled(ctx, path)
        if image.enabled_default is not None:
            set_path(values, f"{path}.enabled", enabled)
        if not (enabled or air_gapped) or not image.repository or not image.image:
            continue
        set_path(values, f"{path}.repository", rewrite(image.repository, ctx.mirror))
        set_path(values, f"{path}.image", image.image)
        set_path(values, f"{path}.version", image_tag(image, facts))
        if secrets and path in secret_keys:
            set_path(values, f"{path}.imagePullSecrets", list(secrets))


def _nfd(ctx: ClusterContext, values: dict[str, Any]) -> None:
    enabled = ctx.cluster.operator.operands.nfd
    values["nfd"] = {"enabled": enabled}
    image = ctx.facts.images.get(NFD)
    if not enabled or image is None or not image.repository:
        return
    sub: dict[str, Any] = {
        "image": {
            "repository": rewrite(f"{image.repository.rstrip('/')}/{image.image}", ctx.mirror),
            "tag": image_tag(image, ctx.facts),
        },
        "worker": {"tolerations": [CONTROL_PLANE_TOLERATION, GPU_TOLERATION, *pool_tolerations(ctx)]},
    }
    if ctx.pull_secrets:
        sub["imagePullSecrets"] = [{"name": s} for s in ctx.pull_secrets]
    values[NFD] = sub


def _driver(ctx: ClusterContext, values: dict[str, Any]) -> None:
    driver: dict[str, Any] = values.setdefault("driver", {})
    driver["enabled"] = ctx.driver_mode != "none"
    driver["upgradePolicy"] = upgrade_policy(ctx, "gpuPodDeletion")
    if ctx.driver_mode == "none":
        return
    driver["rdma"] = {"enabled": ctx.rdma}
    mirror = ctx.mirror
    if mirror is not None and mirror.package_repo_config_map:
        driver["repoConfig"] = {"configMapName": mirror.package_repo_config_map}
    if mirror is not None and mirror.ca_config_map:
        driver["certConfig"] = {"name": mirror.ca_config_map}
    env = proxy_env(ctx)
    if env:
        driver["env"] = env
    if ctx.driver_mode == "nvidiadriver" and ctx.default_driver is None:
        # One NVIDIADriver per pool (overlay); the chart must not deploy its default CR or driver DaemonSet.
        driver["nvidiaDriverCRD"] = {"enabled": True, "deployDefaultCR": False}
        return
    only = ctx.drivers[0]
    driver["nvidiaDriverCRD"] = {"enabled": False}
    if ctx.default_driver is not None:
        # v26.7.0+: the chart's default NVIDIADriver (from these driver.* values) serves every GPU node that no
        # pool's own NVIDIADriver selects -- NVIDIA's documented migration from ClusterPolicy management.
        only = ctx.default_driver
        driver["nvidiaDriverCRD"] = {"enabled": True, "deployDefaultCR": True}
    driver["version"] = only.spec_version
    driver["usePrecompiled"] = only.precompiled
    if ctx.facts.has_chart_value("driver.kernelModuleType"):
        driver["kernelModuleType"] = only.kernel_module_type
    elif ctx.facts.has_chart_value("driver.useOpenKernelModules") and only.kernel_module_type != "auto":
        driver["useOpenKernelModules"] = only.kernel_module_type == "open"


def toolkit_env(ctx: ClusterContext) -> list[dict[str, str]]:
    """The toolkit environment NVIDIA documents for the cluster's distribution, runtime and release (data/runtime.yaml).

    Only what the operator does not set by itself: it detects the runtime, defaults the runtime's config and
    socket paths and sets ``CONTAINERD_RUNTIME_CLASS``; documented values equal to the toolkit's defaults are left out.
    """
    k8s = ctx.cluster.kubernetes
    cell = runtime_cell(ctx.facts.version, k8s.distribution.value, k8s.runtime.value, k8s.version)
    return [{"name": e.name, "value": e.value} for e in rendered_env(cell)]


def host_driver_values(ctx: ClusterContext) -> dict[str, Any]:
    """Chart values (dotted path -> value) the distribution's own driver installer needs (data/runtime.yaml), when every
    pool takes its driver from the host image; only keys the release's chart has."""
    entry = host_driver_install(ctx.facts.version, ctx.cluster.kubernetes.distribution.value)
    if entry is None or ctx.drivers or not ctx.cluster.pools:
        return {}
    out = {path: value for path, value in entry.values.items() if ctx.facts.has_chart_value(path)}
    if ctx.mig_strategy != "none" and entry.mig_manager_env:
        out["migManager.env"] = [{"name": e.name, "value": e.value} for e in entry.mig_manager_env]
    return out


def helm_values(ctx: ClusterContext) -> dict[str, Any]:
    """The Helm values that pin the cluster's GPU Operator chart: images, operands, driver, MIG, sharing."""
    operands = ctx.cluster.operator.operands
    values: dict[str, Any] = {
        "psa": {"enabled": True},
        "cdi": {"enabled": operands.cdi},
        "daemonsets": {"tolerations": [GPU_TOLERATION, *pool_tolerations(ctx)]},
        "sandboxWorkloads": {"enabled": ctx.sandbox},
        "mig": {"strategy": ctx.mig_strategy},
    }
    _images(ctx, values)
    _nfd(ctx, values)
    _driver(ctx, values)
    env = toolkit_env(ctx) if component_enabled(ctx, "toolkit") else []  # no toolkit container: no environment
    if env:
        set_path(values, TOOLKIT_ENV, env)
    for path, value in sorted(host_driver_values(ctx).items()):
        set_path(values, path, value)
    set_path(values, "dcgmExporter.serviceMonitor.enabled",
             operands.dcgm_exporter.enabled and operands.dcgm_exporter.service_monitor)
    set_path(values, "migManager.config.default", MIG_DEFAULT_LAYOUT)
    if ctx.custom_mig:
        set_path(values, "migManager.config.name", ctx.mig_configmap)
    if ctx.sharing_pools:
        set_path(values, "devicePlugin.config.name", ctx.device_plugin_configmap)
        set_path(values, "devicePlugin.config.default", ctx.device_plugin_default)
    return values
