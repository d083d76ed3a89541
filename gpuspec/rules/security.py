"""Security and access rules (GS6xx): dedicated namespace, least-privilege devices, justified sharing, tenancy."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import security as cat
from gpuspec.model.cluster import Cluster
from gpuspec.model.pool_specs import SharingMode
from gpuspec.model.resolve import pool_path
from gpuspec.rules import ownership
from gpuspec.rules.base import Problem, Rule, RuleContext

#: (operand key in operator.operands, attribute on Operands, attribute on DeviceNeeds, words)
DEVICE_FEATURES: tuple[tuple[str, str, str, str], ...] = (
    ("rdma", "rdma", "rdma", "GPUDirect RDMA"),
    ("gds", "gds", "gds", "GPUDirect Storage"),
    ("gdrcopy", "gdrcopy", "gdrcopy", "GDRCopy"),
    ("sandboxWorkloads", "sandbox_workloads", "sandbox", "sandbox workloads (VM passthrough / vGPU)"),
)


class DedicatedOperatorNamespace(Rule):
    """The GPU Operator runs in a namespace of its own, not ``default`` or a ``kube-*`` system namespace."""

    entry = cat.DEDICATED_OPERATOR_NAMESPACE
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose operator namespace is a shared or system namespace."""
        forbidden = set(self.param(ctx, "forbidden_namespaces"))
        for cluster in ctx.fleet.clusters:
            namespace = cluster.operator.namespace
            if namespace in forbidden:
                yield Problem(
                    f"the operator runs in the shared namespace {namespace!r}",
                    cluster.source_file, ("operator", "namespace"),
                    hint="use a namespace of its own, e.g. gpu-operator",
                )


class DeviceOperandsOnlyWhenNeeded(Rule):
    """RDMA, GDS, GDRCopy and sandbox workloads are enabled for a cluster only if some pool declares the need."""

    entry = cat.DEVICE_OPERANDS_ONLY_WHEN_NEEDED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per operand enabled at cluster level that no pool of the cluster declares."""
        for cluster in ctx.fleet.clusters:
            operands = cluster.operator.operands
            for key, operand_attr, need_attr, words in DEVICE_FEATURES:
                if getattr(operands, operand_attr) and not any(getattr(p.devices, need_attr) for p in cluster.pools):
                    yield Problem(
                        f"{words} is enabled but no pool of {cluster.name!r} declares devices.{need_attr}",
                        cluster.source_file, ("operator", "operands", key),
                        hint=f"turn it off, or set devices.{need_attr}: true on the pools that use it",
                    )


class DeviceNeedsEnabled(Rule):
    """A pool that declares a device need is in a cluster that enables the matching operand."""

    entry = cat.DEVICE_NEEDS_ENABLED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per pool device need whose operand the cluster does not enable."""
        for cluster in ctx.fleet.clusters:
            operands = cluster.operator.operands
            for pool in cluster.pools:
                for key, operand_attr, need_attr, words in DEVICE_FEATURES:
                    if getattr(pool.devices, need_attr) and not getattr(operands, operand_attr):
                        yield Problem(
                            f"pool {pool.name!r} needs {words}, which cluster {cluster.name!r} does not enable",
                            cluster.source_file, pool_path(cluster, pool, "devices", need_attr),
                            hint=f"set operator.operands.{key}: true, or drop the need",
                        )


class SharingJustified(Rule):
    """GPU sharing (time-slicing or MPS) carries a written justification of at least ``min_length`` characters."""

    entry = cat.SHARING_JUSTIFIED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per sharing pool whose justification is missing or too short."""
        minimum = int(self.param(ctx, "min_length"))
        for cluster in ctx.fleet.clusters:
            for pool in cluster.pools:
                sharing = pool.sharing
                if sharing.mode is SharingMode.NONE:
                    continue
                text = (sharing.justification or "").strip()
                if len(text) >= minimum:
                    continue
                if not text:
                    message, path = f"pool {pool.name!r} shares GPUs ({sharing.mode.value}) without a " \
                        "justification", pool_path(cluster, pool, "sharing", "mode")
                else:
                    message = (f"the sharing justification of pool {pool.name!r} has {len(text)} characters, "
                               f"fewer than {minimum}")
                    path = pool_path(cluster, pool, "sharing", "justification")
                yield Problem(message, cluster.source_file, path,
                              hint="write in sharing.justification why pods may share these GPUs")


def _tenant_quota_missing(cluster: Cluster) -> Iterator[int]:
    for index, tenant in enumerate(cluster.tenants):
        if tenant.gpu_quota is None and not tenant.mig_quota:
            yield index


class TenantsHaveGpuQuota(Rule):
    """In a cluster with tenants, every tenant has a GPU quota (``gpuQuota`` or ``migQuota``)."""

    entry = cat.TENANTS_HAVE_GPU_QUOTA
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per tenant with neither gpuQuota nor migQuota."""
        for cluster in ctx.fleet.clusters:
            for index in _tenant_quota_missing(cluster):
                tenant = cluster.tenants[index]
                yield Problem(
                    f"tenant {tenant.name!r} has no GPU quota", cluster.source_file, ("tenants", index, "name"),
                    hint="set gpuQuota (and migQuota for MIG pools)",
                )


class TenantPoolsTainted(Rule):
    """In a cluster with tenants, every GPU pool carries a ``NoSchedule`` or ``NoExecute`` taint."""

    entry = cat.TENANT_POOLS_TAINTED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per untainted pool of a cluster that has tenants."""
        for cluster in ctx.fleet.clusters:
            if not cluster.tenants:
                continue
            for pool in cluster.pools:
                if not any(t.effect in ("NoSchedule", "NoExecute") for t in pool.taints):
                    yield Problem(
                        f"pool {pool.name!r} has no NoSchedule/NoExecute taint, but cluster {cluster.name!r} "
                        "has tenants",
                        cluster.source_file, pool_path(cluster, pool, "taints") if pool.taints
                        else pool_path(cluster, pool, "name"),
                        hint="add a taint such as {key: example.com/gpu, value: <pool>, effect: NoSchedule}",
                    )


RULES: list[Rule] = [
    DedicatedOperatorNamespace(),
    DeviceOperandsOnlyWhenNeeded(),
    DeviceNeedsEnabled(),
    SharingJustified(),
    TenantsHaveGpuQuota(),
    TenantPoolsTainted(),
    *ownership.RULES,
]
