"""Which extended resource a pool advertises to Kubernetes (pure)."""

from __future__ import annotations

from collections.abc import Iterable

from gpuspec.model.cluster import Pool
from gpuspec.model.pool_specs import MigStrategy, SharingMode
from gpuspec.render.facts import mig_layout_profiles


def mig_profiles(pool: Pool) -> list[str]:
    """The MIG profiles of a pool's layout, sorted (empty when MIG is off or the layout is unknown)."""
    if pool.mig.strategy is MigStrategy.NONE:
        return []
    if pool.mig.custom is not None:
        return sorted({p for group in pool.mig.custom for p in group.profiles})
    if pool.mig.layout:
        return sorted(mig_layout_profiles(pool.mig.layout, pool.gpu.product))
    return []


def pool_resources(pool: Pool) -> tuple[str, ...]:
    """The extended resources a pool advertises, one name per kind of device (empty when unknown).

    Whole GPUs and MIG strategy ``single`` advertise ``nvidia.com/gpu``; strategy ``mixed`` one
    ``nvidia.com/mig-<profile>`` per profile of the layout; sharing with ``renameByDefault`` appends ``.shared``.
    """
    if pool.mig.strategy is MigStrategy.MIXED:
        names = [f"nvidia.com/mig-{p}" for p in mig_profiles(pool)]
    else:
        names = ["nvidia.com/gpu"]
    if pool.sharing.mode is not SharingMode.NONE and pool.sharing.rename_by_default:
        names = [f"{n}.shared" for n in names]
    return tuple(names)


def has_acceptance_check(pool: Pool) -> bool:
    """True when the pool gets an acceptance Job: managed by the operator, enabled, with nodes, advertising a known
    resource to containers (an unmanaged pool's GPUs are not the rollout's to check; a VM pool, ``devices.sandbox``,
    runs the sandbox stack, whose device plugin advertises its GPUs to VMs under a per-device name (KubeVirt
    host-devices: e.g. ``nvidia.com/GP102GL_Tesla_P40``) and no
    ``nvidia.com/gpu``: a Job requesting it would stay pending until its deadline)."""
    return (pool.managed and pool.acceptance.enabled and pool.nodes > 0 and not pool.devices.sandbox
            and bool(pool_resources(pool)))


#: The whole-GPU resource names the device plugin advertises: plain, and with sharing ``renameByDefault``.
GPU_RESOURCE = "nvidia.com/gpu"
SHARED_GPU_RESOURCE = "nvidia.com/gpu.shared"


def gpu_quota_resources(pools: Iterable[Pool]) -> list[str]:
    """The resource names a tenant's ``gpuQuota`` must cap: every whole-GPU name its pools advertise
    (``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` for shared pools with ``renameByDefault``), sorted;
    ``nvidia.com/gpu`` when they advertise none (MIG strategy mixed only)."""
    names = {n for pool in pools for n in pool_resources(pool) if n in (GPU_RESOURCE, SHARED_GPU_RESOURCE)}
    return sorted(names) or [GPU_RESOURCE]
