"""What a pool's spec says a node should show: allocatable GPU resources and the MIG Manager config label."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuspec.audit.facts import GPU_RESOURCE, MIG_DISABLED, MIG_RESOURCE_PREFIX, SHARED_SUFFIX
from gpuspec.matrix.mig_query import check_named_layout
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.pool_specs import DriverSource, MigStrategy, SharingMode
from gpuspec.model.resolve import mig_config_value


@dataclass(frozen=True)
class ResourceExpectation:
    """Allocatable resources one node of a pool should advertise.

    ``counts`` maps a resource name to its count per node, or None when the
    name is known but the count is not (a named MIG layout the support
    matrix has no entry for on this product).  ``any_mig`` is True when the
    layout is named but its resources are unknown (e.g. all-balanced): then
    any MIG resource satisfies the expectation.
    """

    counts: dict[str, int | None] = field(default_factory=dict)
    any_mig: bool = False

    def describe(self) -> str:
        """The expectation as text, e.g. ``32 nvidia.com/gpu``."""
        if self.any_mig and not self.counts:
            return "MIG resources (nvidia.com/mig-*)"
        return ", ".join(f"{'?' if n is None else n} {name}" for name, n in sorted(self.counts.items()))


def _shared(pool: Pool, name: str) -> tuple[str, int]:
    sharing = pool.sharing
    if sharing.mode is SharingMode.NONE:
        return name, 1
    return (name + SHARED_SUFFIX if sharing.rename_by_default else name), sharing.replicas


def _device_count(pool: Pool, devices: list[int] | str) -> int:
    if isinstance(devices, str):
        return pool.gpu.count
    return len({d for d in devices if d < pool.gpu.count})


def _add(counts: dict[str, int | None], name: str, n: int | None) -> None:
    if name in counts and counts[name] is None:
        return
    counts[name] = None if n is None else (counts.get(name) or 0) + n


def expected_resources(pool: Pool) -> ResourceExpectation:
    """The allocatable GPU resources one node of ``pool`` should advertise according to the spec."""
    mig = pool.mig
    counts: dict[str, int | None] = {}
    if mig.strategy is MigStrategy.NONE:
        name, factor = _shared(pool, GPU_RESOURCE)
        return ResourceExpectation({name: pool.gpu.count * factor})
    if mig.custom:
        covered: set[int] = set()
        for group in mig.custom:
            if isinstance(group.devices, str):
                covered.update(range(pool.gpu.count))
            else:
                covered.update(d for d in group.devices if d < pool.gpu.count)
            gpus = _device_count(pool, group.devices)
            for profile, instances in group.profiles.items():
                base = GPU_RESOURCE if mig.strategy is MigStrategy.SINGLE else MIG_RESOURCE_PREFIX + profile
                name, factor = _shared(pool, base)
                _add(counts, name, instances * gpus * factor)
        uncovered = pool.gpu.count - len(covered)
        if uncovered and mig.strategy is MigStrategy.MIXED:
            name, factor = _shared(pool, GPU_RESOURCE)
            _add(counts, name, uncovered * factor)
        return ResourceExpectation(counts)
    layout = mig.layout or ""
    per_gpu = check_named_layout(layout, pool.gpu.product).devices if layout else None
    if per_gpu:
        for profile, instances in per_gpu.items():
            base = GPU_RESOURCE if mig.strategy is MigStrategy.SINGLE else MIG_RESOURCE_PREFIX + profile
            name, factor = _shared(pool, base)
            _add(counts, name, instances * pool.gpu.count * factor)
        return ResourceExpectation(counts)
    if mig.strategy is MigStrategy.SINGLE:
        return ResourceExpectation({_shared(pool, GPU_RESOURCE)[0]: None})
    if layout.startswith("all-") and layout not in ("all-balanced", "all-enabled", MIG_DISABLED):
        return ResourceExpectation({_shared(pool, MIG_RESOURCE_PREFIX + layout[len("all-"):])[0]: None})
    return ResourceExpectation(any_mig=True)


def expected_mig_config(pool: Pool) -> str | None:
    """The `nvidia.com/mig.config` value the pool's nodes should carry.

    Named layouts must match exactly; a custom layout is the config `gpuspec render` writes for the pool
    (`custom-<pool>`).  Pools without MIG expect all-disabled (or no label at all).
    """
    return mig_config_value(pool)


def expected_operands(cluster: Cluster, pool: Pool) -> list[str]:
    """The operands (``nvidia.com/gpu.deploy.<operand>`` names) the operator runs on the pool's nodes."""
    if not pool.managed:
        return []  # hybrid mode: nvidia.com/gpu.deploy.operands=false is the spec
    operands = ["device-plugin", "gpu-feature-discovery", "operator-validator"]
    if not pool.toolkit.from_node_image:  # else the node image brings it: the operator's stays off
        operands.insert(0, "container-toolkit")
    if pool.driver.source is not DriverSource.HOST:
        operands.append("driver")
    if cluster.operator.operands.dcgm_exporter.enabled:
        operands.append("dcgm-exporter")
    if pool.mig.strategy is not MigStrategy.NONE:
        operands.append("mig-manager")
    return operands
