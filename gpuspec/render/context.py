"""Per-cluster facts every emitter shares: release, mirror, driver mode, MIG and sharing wiring (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpuspec.errors import GpuspecError
from gpuspec.model import cluster_specs
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy, SharingMode
from gpuspec.model.resolve import custom_layout_name, effective_driver, operator_version
from gpuspec.model.settings import Mirror
from gpuspec.render.facts import ReleaseFacts, driver_version, nvidiadriver_has_field, release_facts

#: ConfigMap (operator namespace) holding the mig-parted config when any pool has a custom layout, unless the cluster
#: names its own (``operator.configMaps.mig``: :attr:`ClusterContext.mig_configmap`).
MIG_CONFIGMAP = cluster_specs.MIG_CONFIGMAP
#: ConfigMap (operator namespace) holding one device-plugin config per sharing pool, unless the cluster names its own
#: (``operator.configMaps.devicePlugin``: :attr:`ClusterContext.device_plugin_configmap`).
DEVICE_PLUGIN_CONFIGMAP = cluster_specs.DEVICE_PLUGIN_CONFIGMAP
#: Device-plugin config key applied to nodes without a ``nvidia.com/device-plugin.config`` label, unless the cluster
#: names its own (:attr:`ClusterContext.device_plugin_default`).
DEVICE_PLUGIN_DEFAULT_KEY = cluster_specs.DEVICE_PLUGIN_DEFAULT_KEY
#: MIG layout applied to MIG-capable nodes without a ``nvidia.com/mig.config`` label.
MIG_DEFAULT_LAYOUT = "all-disabled"
#: Node label that selects a pool's MIG layout.
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
#: Node label that selects a pool's device-plugin config.
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"

DriverMode = Literal["none", "clusterpolicy", "nvidiadriver"]


#: Suffix of the NVIDIADriver name of a pool with precompiled drivers (see :attr:`PoolDriver.resource_name`).
PRECOMPILED_SUFFIX = "-precompiled"


@dataclass(frozen=True, slots=True)
class PoolDriver:
    """The resolved driver of one pool whose driver the operator manages."""

    pool: Pool
    source: DriverSource
    branch: str
    version: str
    kernel_module_type: str

    @property
    def precompiled(self) -> bool:
        """True for precompiled driver containers."""
        return self.source is DriverSource.PRECOMPILED

    @property
    def resource_name(self) -> str:
        """The NVIDIADriver's name: the pool's, with ``-precompiled`` for precompiled drivers.

        ``spec.usePrecompiled`` is immutable (the CRD's rule ``self == oldSelf``), so a pool's switch between
        compiled and precompiled drivers must be a new NVIDIADriver; with the variant in the name it is one.
        """
        return f"{self.pool.name}{PRECOMPILED_SUFFIX}" if self.precompiled else self.pool.name

    @property
    def spec_version(self) -> str:
        """The version the chart / NVIDIADriver takes: the branch for precompiled drivers, else the full version."""
        return self.branch if self.precompiled else self.version

    @property
    def key(self) -> tuple[str, str, str]:
        """Pools with equal keys can share one driver DaemonSet configuration."""
        return (self.source.value, self.spec_version, self.kernel_module_type)


@dataclass(frozen=True, slots=True)
class ClusterContext:
    """Everything derived once per cluster that more than one emitter needs."""

    fleet: Fleet
    cluster: Cluster
    facts: ReleaseFacts
    mirror: Mirror | None
    drivers: tuple[PoolDriver, ...]
    driver_mode: DriverMode
    mig_strategy: str
    mig_layouts: dict[str, str]
    custom_mig: bool
    sharing_pools: tuple[Pool, ...]
    default_driver: PoolDriver | None = None

    @property
    def pool_drivers(self) -> tuple[PoolDriver, ...]:
        """The drivers that get an NVIDIADriver of their own: every pool's, or (with a default NVIDIADriver)
        those that differ from the default."""
        if self.driver_mode != "nvidiadriver":
            return ()
        default = self.default_driver
        return tuple(d for d in self.drivers if default is None or d.key != default.key)

    @property
    def name(self) -> str:
        """The cluster's name."""
        return self.cluster.name

    @property
    def device_plugin_configmap(self) -> str:
        """The device-plugin ConfigMap's name (``operator.configMaps.devicePlugin``)."""
        return self.cluster.operator.config_maps.device_plugin

    @property
    def device_plugin_default(self) -> str:
        """The device-plugin config key of nodes without a config label ("" = none)."""
        return self.cluster.operator.config_maps.device_plugin_default

    @property
    def mig_configmap(self) -> str:
        """The mig-parted ConfigMap's name (``operator.configMaps.mig``)."""
        return self.cluster.operator.config_maps.mig

    @property
    def namespace(self) -> str:
        """The operator namespace."""
        return self.cluster.operator.namespace

    @property
    def pull_secrets(self) -> list[str]:
        """Image pull secret names (from the mirror; none for online clusters)."""
        return list(self.mirror.pull_secrets) if self.mirror else []

    def pools_needing(self, device: str) -> list[Pool]:
        """Pools that declare a special device need (``rdma``, ``gds``, ``gdrcopy``, ``sandbox``)."""
        return [p for p in self.cluster.pools if getattr(p.devices, device)]

    @property
    def gds(self) -> bool:
        """GPUDirect Storage on: the operand is enabled and a pool declares it."""
        return self.cluster.operator.operands.gds and bool(self.pools_needing("gds"))

    @property
    def gdrcopy(self) -> bool:
        """GDRCopy on: the operand is enabled, a pool declares it and the chart knows it."""
        return (
            self.cluster.operator.operands.gdrcopy and bool(self.pools_needing("gdrcopy"))
            and "gdrcopy" in self.facts.images
        )

    @property
    def rdma(self) -> bool:
        """GPUDirect RDMA on: the operand is enabled and a pool declares it."""
        return self.cluster.operator.operands.rdma and bool(self.pools_needing("rdma"))

    @property
    def sandbox(self) -> bool:
        """Sandbox (VM passthrough / vGPU) workloads on: the operand is enabled and a pool declares it."""
        return self.cluster.operator.operands.sandbox_workloads and bool(self.pools_needing("sandbox"))


def _resolve_driver(fleet: Fleet, cluster: Cluster, pool: Pool, facts: ReleaseFacts) -> PoolDriver | None:
    eff = effective_driver(fleet, cluster, pool)
    if eff.source is DriverSource.HOST:
        return None
    version = eff.version or driver_version(facts, eff.branch)
    if version is None:
        raise GpuspecError(
            f"cluster {cluster.name}, pool {pool.name}: driver branch {eff.branch} is not listed for GPU Operator "
            f"{facts.tag}; pin driver.version or pick a listed branch"
        )
    branch = eff.branch or version.split(".", 1)[0]
    return PoolDriver(pool, eff.source, branch, version, eff.kernel_module_type)


def _mig_strategy(pools: list[Pool]) -> str:
    strategies = {p.mig.strategy for p in pools}
    if MigStrategy.MIXED in strategies:
        return MigStrategy.MIXED.value
    if MigStrategy.SINGLE in strategies:
        return MigStrategy.SINGLE.value
    return MigStrategy.NONE.value


def cluster_context(fleet: Fleet, cluster: Cluster) -> ClusterContext:
    """Derive the shared render facts of ``cluster``; GpuspecError when its release or driver cannot be resolved."""
    version = operator_version(fleet, cluster)
    if version is None:
        raise GpuspecError(f"cluster {cluster.name}: no GPU Operator version (pin operator.version or a channel)")
    facts = release_facts(version)
    mirror = fleet.mirror(cluster.mirror)
    if cluster.mirror and mirror is None:
        raise GpuspecError(f"cluster {cluster.name}: mirror {cluster.mirror} is not defined in fleet.yaml")
    drivers = tuple(d for p in cluster.pools if (d := _resolve_driver(fleet, cluster, p, facts)) is not None)
    mode = driver_mode_of(cluster, drivers)
    default = (
        default_nvidiadriver(drivers, facts.version)
        if mode == "nvidiadriver" and cluster.operator.default_nvidia_driver else None
    )
    layouts: dict[str, str] = {}
    custom = False
    for pool in cluster.pools:
        if pool.mig.strategy is MigStrategy.NONE:
            continue
        if pool.mig.custom is not None:
            layouts[pool.name] = custom_layout_name(pool)
            custom = True
        elif pool.mig.layout:
            layouts[pool.name] = pool.mig.layout
    sharing = tuple(p for p in cluster.pools if p.sharing.mode is not SharingMode.NONE)
    return ClusterContext(
        fleet=fleet, cluster=cluster, facts=facts, mirror=mirror, drivers=drivers, driver_mode=mode,
        mig_strategy=_mig_strategy(cluster.pools), mig_layouts=layouts, custom_mig=custom, sharing_pools=sharing,
        default_driver=default,
    )


def driver_mode_of(cluster: Cluster, drivers: tuple[PoolDriver, ...]) -> DriverMode:
    """How the cluster's operator-installed drivers are managed: none, the ClusterPolicy, or NVIDIADriver resources."""
    if not drivers:
        return "none"
    wanted = cluster.operator.driver_management
    if wanted == "nvidiadriver" or (wanted == "auto" and len({d.key for d in drivers}) > 1):
        return "nvidiadriver"
    return "clusterpolicy"


def default_nvidiadriver(drivers: tuple[PoolDriver, ...], version: str) -> PoolDriver | None:
    """The driver of the chart's default NVIDIADriver (the driver of the most nodes, first pool on a tie), on
    releases whose NVIDIADriver has ``spec.default`` (v26.7.0+); None before, where every pool gets its own."""
    if not drivers or not nvidiadriver_has_field(version, "default"):
        return None
    nodes: dict[tuple[str, str, str], int] = {}
    for d in drivers:
        nodes[d.key] = nodes.get(d.key, 0) + d.pool.nodes
    best = max(nodes.values())
    return next(d for d in drivers if nodes[d.key] == best)


def driver_mode(fleet: Fleet, cluster: Cluster) -> DriverMode | None:
    """The cluster's driver management mode as render resolves it; None when its release or drivers do not
    resolve."""
    try:
        ctx = cluster_context(fleet, cluster)
    except GpuspecError:
        return None
    return ctx.driver_mode
