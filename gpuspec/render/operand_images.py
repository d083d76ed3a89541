"""Which operand images a cluster runs, their references, and mirror rewriting (pure)."""

from __future__ import annotations

from gpuspec.errors import GpuspecError
from gpuspec.matrix.data_models import Image
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.settings import Mirror
from gpuspec.render.acceptance_plan import acceptance_upstream_images, needs_dcgm_image
from gpuspec.render.context import ClusterContext, PoolDriver
from gpuspec.render.facts import NFD, image_ref, image_tag, os_tag

#: Components that only run for sandbox (VM passthrough / vGPU) workloads and that gpuspec turns on with them.
SANDBOX_COMPONENTS = frozenset({"vgpuDeviceManager", "vfioManager", "vfioManager.driverManager", "sandboxDevicePlugin"})
#: Components gpuspec always turns off: nothing in the spec asks for them (standalone DCGM, node status exporter,
#: user-built vGPU manager, Kata, confidential computing) or they belong to the GPUCluster/DRA stack.
OFF_COMPONENTS = frozenset({
    "dcgm", "nodeStatusExporter", "vgpuManager", "vgpuManager.driverManager", "kataManager",
    "kataSandboxDevicePlugin", "ccManager", "draDriver",
})
#: Components that run on every cluster whatever the spec says.
ALWAYS_COMPONENTS = frozenset({
    "operator", "operator.initContainer", "validator", "toolkit", "devicePlugin", "gfd", "migManager",
})


def rewrite(reference: str, mirror: Mirror | None) -> str:
    """``reference`` (repository or image reference) with its registry replaced by the mirror's prefix.

    The longest ``mirror.registries`` key that matches at a path boundary wins; a reference whose registry the
    mirror does not list is returned unchanged (lint rule GS4xx reports it).
    """
    if mirror is None:
        return reference
    best = ""
    for upstream in mirror.registries:
        key = upstream.rstrip("/")
        if (reference == key or reference.startswith(key + "/")) and len(key) > len(best):
            best = key
    if not best:
        return reference
    return mirror.registries[best].rstrip("/") + reference[len(best):]


def toolkit_on_every_node_image(cluster: Cluster) -> bool:
    """True when every pool's node image brings the NVIDIA Container Toolkit (``toolkit.source: host``): the
    operator's toolkit is turned off (``toolkit.enabled: false``), as NVIDIA's install with pre-installed drivers
    and toolkit does."""
    return bool(cluster.pools) and all(p.toolkit.from_node_image for p in cluster.pools)


def component_enabled(ctx: ClusterContext, path: str) -> bool:
    """Whether the operand at Helm values ``path`` runs on this cluster."""
    operands = ctx.cluster.operator.operands
    if path == "toolkit":
        return not toolkit_on_every_node_image(ctx.cluster)
    if path in ALWAYS_COMPONENTS:
        return True
    if path in ("driver", "driver.manager"):
        return ctx.driver_mode != "none"
    if path == "dcgmExporter":
        return operands.dcgm_exporter.enabled
    if path == "gds":
        return ctx.gds
    if path == "gdrcopy":
        return ctx.gdrcopy
    if path in SANDBOX_COMPONENTS:
        return ctx.sandbox
    if path in OFF_COMPONENTS:
        return False
    if path == NFD:  # on OpenShift the NFD Operator labels the nodes, never the chart's NFD
        return operands.nfd and ctx.cluster.kubernetes.distribution.value != "openshift"
    image = ctx.facts.images.get(path)
    return bool(image and image.enabled_default)


def _os_tag(ctx: ClusterContext, pool: Pool) -> str:
    return os_tag(ctx.facts.version, pool.os.distribution, pool.os.version)


def driver_tag(ctx: ClusterContext, driver: PoolDriver) -> str:
    """The driver image tag a pool's nodes pull: ``<version>-<os>`` or ``<branch>-<kernel>-<os>`` (precompiled)."""
    tag = _os_tag(ctx, driver.pool)
    if driver.precompiled:
        if not driver.pool.os.kernel:
            raise GpuspecError(
                f"cluster {ctx.name}, pool {driver.pool.name}: a precompiled driver needs os.kernel "
                "(the image tag is <branch>-<kernel>-<os>)"
            )
        return f"{driver.branch}-{driver.pool.os.kernel}-{tag}"
    return f"{driver.version}-{tag}"


def _base(image: Image) -> str:
    return f"{(image.repository or '').rstrip('/')}/{image.image}"


def cluster_images(ctx: ClusterContext) -> dict[str, str]:
    """Every image the cluster pulls: upstream reference → reference it pulls (mirror-rewritten)."""
    facts = ctx.facts
    refs: set[str] = set()
    for path, image in facts.images.items():
        if path in ("driver", "gds", "gdrcopy") or not component_enabled(ctx, path):
            continue
        if path == NFD:
            refs.add(f"{_base(image)}:{image_tag(image, facts)}")
            continue
        ref = image_ref(image, facts.version) if not image.os_tag_suffix else None
        if ref:
            refs.add(ref)
    driver = facts.images.get("driver")
    if driver is not None and ctx.driver_mode != "none":
        refs.update(f"{_base(driver)}:{driver_tag(ctx, d)}" for d in ctx.drivers)
    for name in ("gds", "gdrcopy"):
        extra = facts.images.get(name)
        if extra is not None and component_enabled(ctx, name):
            refs.update(f"{_base(extra)}:{image_tag(extra, facts)}-{_os_tag(ctx, d.pool)}" for d in ctx.drivers)
    refs.update(acceptance_upstream_images(ctx.cluster))
    dcgm = facts.images.get("dcgm")
    if dcgm is not None and needs_dcgm_image(ctx.cluster):
        ref = image_ref(dcgm, facts.version)
        if ref:
            refs.add(ref)
    return {ref: rewrite(ref, ctx.mirror) for ref in sorted(refs)}
