"""Hard NVIDIA constraints of a typed fleet that are not a single support-matrix lookup.

Kernel module flavour per architecture and feature, the last driver branch per architecture, GPUDirect per OS,
precompiled pins, platform cells (OS row x distribution column), known issues of a release, MIG device geometry,
the cluster-wide MIG strategy, and tenant quotas against what the pools advertise.  Facts come from
``gpuspec/matrix/data/domain.yaml`` (each with its NVIDIA source) through :mod:`gpuspec.matrix.query`; part of the
shared support-matrix evaluation of :mod:`gpuspec.rules.matrix`.
"""

from __future__ import annotations

from typing import Protocol

from gpuspec.catalogue import matrix as cat
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import DocPath
from gpuspec.matrix import component_query as cq
from gpuspec.matrix import mig_query as mq
from gpuspec.matrix import query as q
from gpuspec.matrix.data_models import KnownIssue
from gpuspec.matrix.runtime import managed_platform
from gpuspec.model.cluster import Cluster, Pool, Tenant
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy, SharingMode
from gpuspec.model.resolve import EffectiveDriver, effective_driver

#: spec `kubernetes.distribution` -> support-matrix distribution id.
_DISTRIBUTION = {"upstream": "kubernetes"}


class Sink(Protocol):
    """Where problems of the shared evaluation go (one per entry, deduplicated)."""

    def add(self, entry: Entry, message: str, file: str, path: DocPath, hint: str | None = None) -> None:
        """Record one problem of ``entry``."""


def resolved_driver(drv: EffectiveDriver, release_version: str) -> tuple[str | None, str | None]:
    """(version, branch) a pool's driver resolves to: its pin, else the release default when the branch allows."""
    version = drv.version
    default = q.default_driver(release_version)
    if version is None and default is not None and (drv.branch is None or default.split(".")[0] == drv.branch):
        version = default
    branch = drv.branch or (version.split(".")[0] if version else None)
    return version, branch


def driver_flavour(
    cluster: Cluster,
    pool: Pool,
    product: str,
    release_version: str,
    tag: str,
    drv: EffectiveDriver,
    at: tuple[str, DocPath],
    base: DocPath,
    res: Sink,
) -> None:
    """Kernel modules, last branch, GPUDirect and precompiled-pin constraints of one pool's driver."""
    file = cluster.source_file
    dfile, dpath = at
    if drv.source is DriverSource.HOST:
        return
    version, branch = resolved_driver(drv, release_version)
    arch = cq.architecture(product)
    if arch is not None and arch.last_driver_branch and branch and int(branch) > int(arch.last_driver_branch):
        res.add(
            cat.DRIVER_PAST_ARCHITECTURE,
            f"driver branch {branch} does not support {product} ({arch.name}); the last branch for "
            f"{arch.name} is {arch.last_driver_branch}",
            dfile, (*dpath, "branch") if drv.branch else dpath,
            f"pin driver.branch {arch.last_driver_branch} on this pool",
        )
    kmt = drv.kernel_module_type
    installed = cq.kernel_modules_installed(kmt, version, branch)
    kpath: DocPath = (*base, "driver", "kernelModuleType") if "kernel_module_type" in pool.driver.model_fields_set \
        else (*base, "driver")
    why_auto = f" (kernelModuleType auto with driver {version or branch} installs proprietary modules)" \
        if kmt == "auto" else ""
    if arch is not None and arch.open_kernel_modules == "required" and installed == "proprietary":
        res.add(
            cat.KERNEL_MODULES,
            f"{product} ({arch.name}) works only with the open GPU kernel modules{why_auto}",
            file, kpath, "set driver.kernelModuleType: open (and a driver of branch 570 or later)",
        )
    if arch is not None and arch.open_kernel_modules == "unsupported" and kmt == "open":
        res.add(
            cat.KERNEL_MODULES,
            f"the open GPU kernel modules do not support {product} ({arch.name})",
            file, kpath, "set driver.kernelModuleType: proprietary",
        )
    gds = pool.devices.gds and cluster.operator.operands.gds
    if gds and installed == "proprietary":
        res.add(
            cat.KERNEL_MODULES,
            f"GPUDirect Storage (nvidia-fs) needs the open GPU kernel modules{why_auto}",
            file, kpath, "set driver.kernelModuleType: open, or a driver of branch 570 or later with auto",
        )
    if "kernel_module_type" in pool.driver.model_fields_set and kmt == "auto" and version is not None \
            and cq.auto_module_type_works(version) is False:
        res.add(
            cat.AUTO_MODULE_TYPE,
            f"kernelModuleType auto is not understood by driver {version} containers: they install proprietary modules",
            file, kpath, "write kernelModuleType: proprietary (or open), or use driver 570.124.06 or later",
        )
    if drv.source is DriverSource.PRECOMPILED and drv.version is not None and not drv.from_channel:
        res.add(
            cat.PRECOMPILED_VERSION,
            f"precompiled drivers are chosen by branch and kernel: driver.version {drv.version} is not what runs "
            f"(gpuspec renders branch {branch})",
            dfile, (*dpath, "version"), "drop driver.version and keep driver.branch for precompiled drivers",
        )
    _gpudirect(cluster, pool, release_version, tag, drv, base, res)


def _gpudirect(
    cluster: Cluster, pool: Pool, release_version: str, tag: str, drv: EffectiveDriver, base: DocPath, res: Sink
) -> None:
    file = cluster.source_file
    operands = cluster.operator.operands
    for feature, wanted, word in (
        ("storage", pool.devices.gds and operands.gds, "GPUDirect Storage"),
        ("rdma", pool.devices.rdma and operands.rdma, "GPUDirect RDMA"),
    ):
        if not wanted:
            continue
        path: DocPath = (*base, "devices", "gds" if feature == "storage" else "rdma")
        if feature == "storage" and drv.source is DriverSource.PRECOMPILED:
            res.add(
                cat.GPUDIRECT_UNSUPPORTED,
                "GPUDirect Storage is not supported with precompiled driver containers",
                file, path, "use driver.source operator on this pool",
            )
        verdict = cq.gpudirect_os_supported(release_version, feature, pool.os.distribution, pool.os.version)
        if verdict is False:
            res.add(
                cat.GPUDIRECT_UNSUPPORTED,
                f"{word} is not supported on {pool.os.distribution} {pool.os.version} by GPU Operator {tag}",
                file, path, "see the GPUDirect tables of `gpuspec matrix`",
            )
        elif verdict is None:
            res.add(
                cat.CANNOT_VERIFY_PLATFORM,
                f"cannot verify {word} on {pool.os.distribution} {pool.os.version} for GPU Operator {tag}",
                file, path,
            )


def managed_platform_driver(cluster: Cluster, pool: Pool, drv: EffectiveDriver, base: DocPath, res: Sink) -> None:
    """An operator-installed driver on a managed platform's node image or runtime its NVIDIA page does not list."""
    platform = managed_platform(cluster.kubernetes.distribution.value)
    support = platform.operator_driver if platform is not None else None
    if support is None or drv.source is DriverSource.HOST:
        return
    os_id, runtime = pool.os.distribution, cluster.kubernetes.runtime.value
    if os_id in support.os and runtime in support.runtimes:
        return
    where = f"{os_id} {pool.os.version} with {runtime}"
    host = os_id in support.host_driver_os
    res.add(
        cat.MANAGED_PLATFORM_DRIVER,
        f"{cluster.kubernetes.distribution.value}: the operator's driver containers ({drv.source.value}) support "
        f"{' and '.join(support.os)} with {' and '.join(support.runtimes)} only, not {where} ({support.source})",
        cluster.source_file, (*base, "driver", "source") if "source" in pool.driver.model_fields_set
        else (*base, "os", "distribution"),
        "set driver.source: host (the platform's own driver installer)" if host
        else f"use a {' or '.join(support.os)} node image",
    )


def pool_platform_cell(cluster: Cluster, pool: Pool, release_version: str, tag: str, base: DocPath, res: Sink) -> None:
    """The Kubernetes version against the cell of the pool's OS row and the cluster's distribution column."""
    k8s = cluster.kubernetes
    dist = _DISTRIBUTION.get(k8s.distribution.value, k8s.distribution.value)
    if dist not in q.KUBERNETES_MINOR_DISTRIBUTIONS:
        return
    if q.kubernetes_supported(release_version, dist, k8s.version) is not True:
        return  # reported (or cannot be verified) cluster-wide
    cell = q.kubernetes_supported(
        release_version, dist, k8s.version, os_id=pool.os.distribution, os_version=pool.os.version
    )
    if cell is False:
        res.add(
            cat.KUBERNETES_RANGE,
            f"Kubernetes {k8s.version} on {k8s.distribution.value} is not supported on {pool.os.distribution} "
            f"{pool.os.version} by GPU Operator {tag} (the matrix cell of that OS row and distribution)",
            cluster.source_file, (*base, "os"),
            "pick an OS that the distribution's column lists at this Kubernetes version",
        )


# ----------------------------------------------------------------------------- known issues


def _matches(issue: KnownIssue, fleet: Fleet, cluster: Cluster, pool: Pool | None, release_version: str) -> bool:
    when = issue.when
    k8s = cluster.kubernetes
    operands = cluster.operator.operands
    if when.distributions is not None and k8s.distribution.value not in when.distributions:
        return False
    if when.runtimes is not None and k8s.runtime.value not in when.runtimes:
        return False
    if when.cdi is not None and operands.cdi is not when.cdi:
        return False
    if when.user_namespaces is not None and k8s.user_namespaces is not when.user_namespaces:
        return False
    if when.kubernetes_from is not None:
        have, need = q.parse_version(k8s.version), q.parse_version(when.kubernetes_from)
        if have is None or need is None or have < need:
            return False
    pool_keys = (when.products, when.grace, when.driver_from, when.driver_versions, when.mig, when.mig_or_gds,
                 when.mig_strategy, when.sandbox, when.rdma, when.os, when.os_major, when.driver_source, when.selinux)
    if all(k is None for k in pool_keys):
        return pool is None
    if pool is None:
        return False
    return _pool_matches(issue, fleet, cluster, pool, release_version)


def _pool_matches(issue: KnownIssue, fleet: Fleet, cluster: Cluster, pool: Pool, release_version: str) -> bool:
    when = issue.when
    operands = cluster.operator.operands
    product = q.gpu_product(pool.gpu.product)
    mig = pool.mig.strategy is not MigStrategy.NONE
    drv = effective_driver(fleet, cluster, pool)
    version, _ = resolved_driver(drv, release_version)
    checks = [
        when.products is None or (product is not None and product.id in when.products),
        when.grace is None or cq.is_grace(pool.gpu.product) is when.grace,
        when.mig is None or mig is when.mig,
        when.mig_or_gds is None or (mig or (pool.devices.gds and operands.gds)) is when.mig_or_gds,
        when.mig_strategy is None or pool.mig.strategy.value == when.mig_strategy,
        when.sandbox is None or (pool.devices.sandbox and operands.sandbox_workloads) is when.sandbox,
        when.rdma is None or (pool.devices.rdma and operands.rdma) is when.rdma,
        when.os is None or pool.os.distribution == when.os,
        when.os_major is None or pool.os.version.split(".")[0] == when.os_major,
        when.driver_source is None or drv.source.value == when.driver_source,
        when.selinux is None or pool.os.selinux == when.selinux,
        when.driver_versions is None or (drv.source is not DriverSource.HOST and version in when.driver_versions),
    ]
    if when.driver_from is not None:
        have, need = q.parse_version(version or ""), q.parse_version(when.driver_from)
        checks.append(drv.source is not DriverSource.HOST and have is not None and need is not None and have >= need)
    return all(checks)


def known_issues(
    fleet: Fleet, cluster: Cluster, release_version: str, tag: str, vfile: str, vpath: DocPath, res: Sink
) -> None:
    """A warning per known issue of the release that applies to the cluster (or to one of its pools); an error
    (GS224) per issue whose note rules the combination out."""
    for issue in cq.known_issues(release_version):
        entry = cat.NOTE_RULES_OUT if issue.restricts else cat.KNOWN_ISSUE
        hint = (f"NVIDIA does not ship this combination ({issue.source or 'support-matrix note'}): change the OS, "
                "the driver source or the GPU of the pool") if issue.restricts else None
        if _matches(issue, fleet, cluster, None, release_version):
            res.add(entry, f"GPU Operator {tag}: {issue.note}", vfile, vpath, hint)
            continue
        for index, pool in enumerate(cluster.pools):
            if _matches(issue, fleet, cluster, pool, release_version):
                res.add(
                    entry, f"GPU Operator {tag}, pool {pool.name!r}: {issue.note}", cluster.source_file,
                    ("pools", index), hint,
                )


# ----------------------------------------------------------------------------- MIG geometry and tenants


def cluster_constraints(cluster: Cluster, release_version: str | None, res: Sink) -> None:
    """MIG device indices, the cluster-wide MIG strategy and tenant quotas of one cluster."""
    for index, pool in enumerate(cluster.pools):
        _mig_devices(cluster, index, pool, res)
    _mig_strategy(cluster, res)
    for index, tenant in enumerate(cluster.tenants):
        _tenant(cluster, index, tenant, release_version, res)
    _shared_pools(cluster, res)


def _mig_devices(cluster: Cluster, index: int, pool: Pool, res: Sink) -> None:
    if pool.mig.strategy is MigStrategy.NONE or not pool.mig.custom:
        return
    seen: dict[int, int] = {}
    groups = pool.mig.custom
    for g_index, group in enumerate(groups):
        path: DocPath = ("pools", index, "mig", "custom", g_index, "devices")
        if group.devices == "all":
            if len(groups) > 1:
                res.add(
                    cat.MIG_DEVICES,
                    "a device group with devices: all cannot be combined with other groups: every GPU would be "
                    "in two groups",
                    cluster.source_file, path, "list GPU indexes in every group",
                )
            continue
        for device in group.devices:
            if device >= pool.gpu.count:
                res.add(
                    cat.MIG_DEVICES,
                    f"GPU index {device} does not exist: the pool's nodes have {pool.gpu.count} GPUs "
                    f"(indexes 0-{pool.gpu.count - 1})",
                    cluster.source_file, path,
                )
            elif device in seen:
                res.add(
                    cat.MIG_DEVICES,
                    f"GPU {device} is in device groups {seen[device]} and {g_index}",
                    cluster.source_file, path, "give each GPU index to one group",
                )
            else:
                seen[device] = g_index


def _mig_strategy(cluster: Cluster, res: Sink) -> None:
    first: dict[MigStrategy, Pool] = {}
    for index, pool in enumerate(cluster.pools):
        strategy = pool.mig.strategy
        if strategy is MigStrategy.NONE:
            continue
        other = next((p for s, p in first.items() if s is not strategy), None)
        if other is not None:
            res.add(
                cat.MIG_STRATEGY_CLUSTER,
                f"pool {pool.name!r} asks for MIG strategy {strategy.value} but pool {other.name!r} for "
                f"{other.mig.strategy.value}: mig.strategy is one value per cluster (the chart would run mixed)",
                cluster.source_file, ("pools", index, "mig", "strategy"),
                "use one strategy for every MIG pool of the cluster (mixed covers both)",
            )
        first.setdefault(strategy, pool)


def _mig_devices_per_node(pool: Pool) -> dict[str, int] | None:
    """MIG devices per node by profile, or None when the layout is not known per GPU."""
    if pool.mig.custom is not None:
        out: dict[str, int] = {}
        for group in pool.mig.custom:
            gpus = pool.gpu.count if group.devices == "all" else len([d for d in group.devices if d < pool.gpu.count])
            for profile, count in group.profiles.items():
                out[profile] = out.get(profile, 0) + gpus * count
        return out
    if pool.mig.layout:
        check = mq.check_named_layout(pool.mig.layout, pool.gpu.product)
        if check.devices is None:
            return None
        return {profile: count * pool.gpu.count for profile, count in check.devices.items()}
    return None


def _tenant(cluster: Cluster, index: int, tenant: Tenant, release_version: str | None, res: Sink) -> None:
    pools = [p for name in tenant.pools if (p := cluster.pool(name)) is not None]
    mixed = [p for p in pools if p.mig.strategy is MigStrategy.MIXED]
    single = [p for p in pools if p.mig.strategy is MigStrategy.SINGLE]
    file, base = cluster.source_file, ("tenants", index)
    if tenant.mig_quota and not mixed:
        names = ", ".join(p.name for p in single) or ", ".join(p.name for p in pools)
        what = "advertise MIG devices as nvidia.com/gpu (strategy single)" if single else "have no MIG devices"
        res.add(
            cat.QUOTA_RESOURCE,
            f"tenant {tenant.name!r} has a migQuota but its pools ({names}) {what}: the quota caps nothing",
            file, (*base, "migQuota"), "use gpuQuota for single-strategy and non-MIG pools",
        )
    if mixed and not tenant.mig_quota:
        res.add(
            cat.QUOTA_RESOURCE,
            f"tenant {tenant.name!r} uses MIG pool(s) with strategy mixed ({', '.join(p.name for p in mixed)}) but "
            "has no migQuota: their devices are advertised as nvidia.com/mig-<profile> and stay uncapped",
            file, (*base, "pools"), "add migQuota with one entry per MIG profile of those pools",
        )
    advertised: dict[str, int] = {}
    known = True
    for pool in mixed:
        per_node = _mig_devices_per_node(pool)
        if per_node is None:
            known = False
            continue
        for profile, count in per_node.items():
            advertised[f"mig-{profile}"] = advertised.get(f"mig-{profile}", 0) + count * pool.nodes
    for resource, limit in tenant.mig_quota.items():
        if not mixed or not known:
            continue
        if resource not in advertised:
            res.add(
                cat.QUOTA_RESOURCE,
                f"tenant {tenant.name!r}: migQuota {resource} names a resource none of its pools advertises "
                f"(they advertise {', '.join(sorted(advertised)) or 'none'})",
                file, (*base, "migQuota", resource),
            )
        elif limit > advertised[resource]:
            res.add(
                cat.QUOTA_CAPACITY,
                f"tenant {tenant.name!r}: migQuota {resource} {limit} is above the {advertised[resource]} such "
                "devices its pools advertise",
                file, (*base, "migQuota", resource),
            )
    if tenant.gpu_quota:
        # The rendered quota caps each whole-GPU name the pools advertise (renameByDefault: nvidia.com/gpu.shared).
        for shared, resource in ((False, "nvidia.com/gpu"), (True, "nvidia.com/gpu.shared")):
            capacity = _gpu_capacity(pools, shared)
            if capacity is None or (capacity == 0 and (shared or _gpu_capacity(pools, True) != 0)):
                continue  # unknown, or a name these pools do not advertise (the other name is capped)
            if tenant.gpu_quota > capacity:
                res.add(
                    cat.QUOTA_CAPACITY,
                    f"tenant {tenant.name!r}: gpuQuota {tenant.gpu_quota} is above the {capacity} {resource} its "
                    "pools advertise",
                    file, (*base, "gpuQuota"),
                )


def _gpu_capacity(pools: list[Pool], shared: bool = False) -> int | None:
    """``nvidia.com/gpu`` (``shared``: ``nvidia.com/gpu.shared``, from pools shared with ``renameByDefault``) the
    pools advertise in total, or None when a layout makes it unknown."""
    total = 0
    for pool in pools:
        renamed = pool.sharing.mode is not SharingMode.NONE and pool.sharing.rename_by_default
        if shared:
            if renamed and pool.mig.strategy is MigStrategy.NONE:
                total += pool.nodes * pool.gpu.count * pool.sharing.replicas
            elif renamed and pool.mig.strategy is MigStrategy.SINGLE:
                return None
            continue
        if pool.mig.strategy is MigStrategy.MIXED:
            continue
        if pool.mig.strategy is MigStrategy.SINGLE:
            per_node = _mig_devices_per_node(pool)
            if per_node is None:
                return None
            total += sum(per_node.values()) * pool.nodes
            continue
        sharing = pool.sharing
        if sharing.mode is not SharingMode.NONE and sharing.rename_by_default:
            continue
        replicas = sharing.replicas if sharing.mode is not SharingMode.NONE else 1
        total += pool.nodes * pool.gpu.count * replicas
    return total


def _shared_pools(cluster: Cluster, res: Sink) -> None:
    users: dict[str, str] = {}
    for index, tenant in enumerate(cluster.tenants):
        for p_index, name in enumerate(tenant.pools):
            pool = cluster.pool(name)
            if pool is None or pool.sharing.mode is SharingMode.NONE:
                continue
            first = users.setdefault(name, tenant.name)
            if first != tenant.name:
                res.add(
                    cat.SHARED_POOL_TENANTS,
                    f"tenants {first!r} and {tenant.name!r} share pool {name!r} whose GPUs are shared by "
                    f"{pool.sharing.mode.value}: no memory or fault isolation between their pods",
                    cluster.source_file, ("tenants", index, "pools", p_index),
                    "give each tenant its own shared pool, or use MIG for isolation",
                )
