"""Driver image references and release facts the plan names in impact and rollback notes.

Answers come from the support matrix (:mod:`gpuspec.matrix.query`); when the
matrix does not know a release, the answer is ``None`` and the caller says so.
"""

from __future__ import annotations

from gpuspec.errors import GpuspecError
from gpuspec.matrix import component_query, query
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.resolve import effective_driver, operator_version
from gpuspec.model.settings import Mirror


def mirrored(reference: str, mirror: Mirror | None) -> str:
    """``reference`` rewritten to ``mirror``'s registry prefix (unchanged when there is no mirror or no match)."""
    if mirror is None:
        return reference
    for host, prefix in sorted(mirror.registries.items(), key=lambda kv: -len(kv[0])):
        if reference.startswith(host.rstrip("/") + "/"):
            return prefix.rstrip("/") + reference[len(host.rstrip("/")) :]
    return reference


def default_driver(operator: str | None) -> str | None:
    """The driver version the chart of ``operator`` installs by default, or None when unknown."""
    if operator is None:
        return None
    try:
        return query.default_driver(operator)
    except (GpuspecError, ValueError):
        return None


def driver_manager(operator: str | None) -> str | None:
    """The k8s-driver-manager image tag a release pins (it runs in every driver pod), or None when unknown."""
    if operator is None:
        return None
    try:
        images = component_query.component_images(operator)
    except (GpuspecError, ValueError):
        return None
    image = (images or {}).get("driver.manager")
    return image.version if image is not None else None


def resolved_driver_version(fleet: Fleet, cluster: Cluster, pool: Pool) -> str | None:
    """The exact driver version a pool runs: its pin (or its channel's), else the release default in its branch."""
    driver = effective_driver(fleet, cluster, pool)
    if driver.version:
        return driver.version
    default = default_driver(operator_version(fleet, cluster))
    if default and (driver.branch is None or default.split(".", 1)[0] == driver.branch):
        return default
    return None


def driver_image(fleet: Fleet, cluster: Cluster, pool: Pool) -> str | None:
    """The driver image reference the pool's nodes pull (mirror-rewritten for air-gapped clusters), or None.

    None when the driver is preinstalled on the host, or when the release, OS tag or exact version is unknown.
    """
    driver = effective_driver(fleet, cluster, pool)
    operator = operator_version(fleet, cluster)
    if driver.source is DriverSource.HOST or operator is None:
        return None
    try:
        images = component_query.component_images(operator)
        tag = component_query.os_tag(operator, pool.os.distribution, pool.os.version)
    except (GpuspecError, ValueError):
        return None
    image = (images or {}).get("driver")
    if image is None or not image.repository or not image.image or tag is None:
        return None
    base = f"{image.repository.rstrip('/')}/{image.image}"
    if driver.source is DriverSource.PRECOMPILED:
        branch = driver.branch or (default_driver(operator) or "").split(".", 1)[0]
        if not branch or not pool.os.kernel:
            return None
        reference = f"{base}:{branch}-{pool.os.kernel}-{tag}"
    else:
        version = resolved_driver_version(fleet, cluster, pool)
        if version is None:
            return None
        reference = f"{base}:{version}-{tag}"
    return mirrored(reference, fleet.mirror(cluster.mirror))
