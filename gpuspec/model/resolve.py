"""Effective values of a cluster or pool once channels and defaults are applied (pure functions)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuspec.findings import DocPath
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.ownership import Owners, pool_hardware
from gpuspec.model.ownership import resolve as resolve_owners
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.settings import Mirror

#: Public chart repository of the GPU Operator (NGC).
NGC_CHART_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"


@dataclass(frozen=True, slots=True)
class EffectiveDriver:
    """The driver a pool gets: explicit pool settings, else the channel's, else the release default (None)."""

    source: DriverSource
    branch: str | None
    version: str | None
    kernel_module_type: str
    from_channel: bool


def operator_version(fleet: Fleet, cluster: Cluster) -> str | None:
    """The GPU Operator release a cluster runs: its pin, else its channel's; None when neither resolves."""
    if cluster.operator.version:
        return cluster.operator.version
    channel = fleet.channel(cluster.operator.channel)
    return channel.operator if channel else None


def chart_repository(mirror: Mirror | None) -> str:
    """Where a cluster's GPU Operator chart comes from: its mirror's chart repository, else NGC (no trailing ``/``)."""
    return mirror.chart.repository.rstrip("/") if mirror else NGC_CHART_REPOSITORY


def effective_driver(fleet: Fleet, cluster: Cluster, pool: Pool) -> EffectiveDriver:
    """The driver settings that apply to ``pool`` (branch/version None = the operator release's default)."""
    spec = pool.driver
    channel = fleet.channel(cluster.operator.channel)
    branch, version, from_channel = spec.branch, spec.version, False
    if branch is None and version is None and channel is not None and channel.driver is not None:
        branch, version, from_channel = channel.driver.branch, channel.driver.version, True
    if branch is None and version is not None:
        branch = version.split(".", 1)[0]
    return EffectiveDriver(spec.source, branch, version, spec.kernel_module_type, from_channel)


def pool_path(cluster: Cluster, pool: Pool, *rest: str | int) -> DocPath:
    """The document path of ``pool`` (plus ``rest``) inside its cluster file."""
    return ("pools", cluster.pool_position(pool), *rest)


def is_air_gapped(cluster: Cluster) -> bool:
    """True when the cluster pulls everything from a mirror."""
    return cluster.mirror is not None


#: Node label mig-manager acts on, and its value on nodes without MIG.
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_CONFIG_DISABLED = "all-disabled"


def mig_config_value(pool: Pool) -> str:
    """The ``nvidia.com/mig.config`` value a pool's nodes carry: the named layout, ``custom-<pool>`` or
    ``all-disabled``."""
    if pool.mig.strategy.value == "none":
        return MIG_CONFIG_DISABLED
    return pool.mig.layout if pool.mig.layout else custom_layout_name(pool)


def custom_layout_name(pool: Pool) -> str:
    """The mig-parted config name of a pool's custom MIG layout (render writes it, audit expects it on nodes):
    its ``configName``, else ``custom-<pool>``."""
    return pool.mig.config_name or f"custom-{pool.name}"


def cluster_owners(fleet: Fleet, cluster: Cluster) -> Owners:
    """The owner teams of ``cluster``: its ``ownership``, each role falling back to fleet.yaml's."""
    return resolve_owners(fleet.settings.ownership, cluster.ownership)


def pool_owner(fleet: Fleet, cluster: Cluster, pool: Pool) -> str | None:
    """The hardware owner team of ``pool``: its own, else its cluster's (which falls back to the fleet's)."""
    return pool_hardware(cluster_owners(fleet, cluster), pool.ownership)
