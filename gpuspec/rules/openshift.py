"""OpenShift support-matrix checks (GS230-GS233), part of the shared support-matrix evaluation.

OpenShift version vs Kubernetes version, RHCOS pools (and RHCOS only on OpenShift), precompiled drivers per
NVIDIA's OpenShift procedure, and the mirrored OLM catalogs of disconnected clusters.
"""

from __future__ import annotations

from gpuspec.catalogue.matrix import CANNOT_VERIFY_PLATFORM
from gpuspec.catalogue.openshift import (
    OPENSHIFT_CATALOG,
    OPENSHIFT_KUBERNETES,
    OPENSHIFT_POOL_OS,
    OPENSHIFT_PRECOMPILED,
)
from gpuspec.matrix import openshift as ocp
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.cluster_specs import Distribution
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.resolve import effective_driver
from gpuspec.rules.constraints import Sink


def is_openshift(cluster: Cluster) -> bool:
    """True for ``kubernetes.distribution: openshift``."""
    return cluster.kubernetes.distribution is Distribution.OPENSHIFT


def openshift_checks(fleet: Fleet, cluster: Cluster, res: Sink) -> None:
    """Every OpenShift check of one cluster (independent of the release: the facts hold for every line)."""
    _versions(cluster, res)
    for index, pool in enumerate(cluster.pools):
        _pool_os(cluster, index, pool, res)
        if is_openshift(cluster) and effective_driver(fleet, cluster, pool).source is DriverSource.PRECOMPILED:
            _precompiled(cluster, index, pool, res)
    if is_openshift(cluster):
        _catalogs(fleet, cluster, res)


def _versions(cluster: Cluster, res: Sink) -> None:
    k8s = cluster.kubernetes
    file = cluster.source_file
    if k8s.openshift_version is None:
        return
    if not is_openshift(cluster):
        res.add(OPENSHIFT_KUBERNETES,
                f"kubernetes.openshiftVersion is set but the distribution is {k8s.distribution.value}",
                file, ("kubernetes", "openshiftVersion"), "set distribution: openshift, or remove openshiftVersion")
        return
    ships = ocp.kubernetes_of(k8s.openshift_version)
    if ships is False:
        res.add(CANNOT_VERIFY_PLATFORM,
                f"cannot verify the Kubernetes version of OpenShift {k8s.openshift_version}: not in the matrix",
                file, ("kubernetes", "openshiftVersion"))
    elif ships is None:
        res.add(CANNOT_VERIFY_PLATFORM,
                f"cannot verify that OpenShift {k8s.openshift_version} ships Kubernetes {k8s.version}: the matrix "
                "records its Kubernetes version as unknown",
                file, ("kubernetes", "version"))
    elif ships != k8s.version:
        res.add(OPENSHIFT_KUBERNETES,
                f"OpenShift {k8s.openshift_version} ships Kubernetes {ships}, not {k8s.version}",
                file, ("kubernetes", "version"), f'set version: "{ships}" (or the OpenShift version you run)')


def _pool_os(cluster: Cluster, index: int, pool: Pool, res: Sink) -> None:
    file = cluster.source_file
    os_id = pool.os.distribution
    if is_openshift(cluster) and os_id != "rhcos":
        res.add(OPENSHIFT_POOL_OS,
                f"pool {pool.name} runs {os_id} {pool.os.version}; on OpenShift the GPU Operator supports RHCOS "
                "nodes only",
                file, ("pools", index, "os", "distribution"), "OpenShift GPU nodes run rhcos")
    elif not is_openshift(cluster) and os_id == "rhcos":
        res.add(OPENSHIFT_POOL_OS,
                f"pool {pool.name} runs RHCOS on a {cluster.kubernetes.distribution.value} cluster; RHCOS is "
                "OpenShift's node OS", file, ("pools", index, "os", "distribution"),
                "set kubernetes.distribution: openshift")
    elif is_openshift(cluster) and cluster.kubernetes.openshift_version is not None:
        want = ocp.openshift_minor(cluster.kubernetes.openshift_version)
        if ocp.openshift_minor(pool.os.version) != want:
            res.add(OPENSHIFT_POOL_OS,
                    f"pool {pool.name} runs RHCOS {pool.os.version}; RHCOS follows the OpenShift release ({want})",
                    file, ("pools", index, "os", "version"), f'set version: "{want}"')


def _precompiled(cluster: Cluster, index: int, pool: Pool, res: Sink) -> None:
    res.add(OPENSHIFT_PRECOMPILED,
            f"pool {pool.name}: precompiled driver on OpenShift; nvcr.io has no precompiled RHCOS driver images and "
            "gpuspec cannot pin a custom build",
            cluster.source_file, ("pools", index, "driver", "source"),
            "use driver.source: operator (the operator builds the driver with the OpenShift Driver Toolkit, "
            "entitlement-free)")


def required_catalogs(cluster: Cluster) -> list[str]:
    """The default OLM catalogs the cluster's Subscriptions use (the NFD Operator's only when gpuspec installs it)."""
    names = [ocp.olm().catalog_source]
    if cluster.operator.operands.nfd:
        names.append(ocp.nfd().catalog_source)
    return names


def _catalogs(fleet: Fleet, cluster: Cluster, res: Sink) -> None:
    mirror = fleet.mirror(cluster.mirror) if cluster.mirror else None
    if mirror is None:
        return
    missing = [c for c in required_catalogs(cluster) if c not in mirror.catalog_sources]
    if missing:
        res.add(OPENSHIFT_CATALOG,
                f"OpenShift cluster on mirror {mirror.name}: no mirrored CatalogSource for {', '.join(missing)}",
                cluster.source_file, ("mirror",),
                f"mirror the operator indexes (oc-mirror) and name their CatalogSources in mirrors[{mirror.name}]."
                f"catalogSources ({', '.join(f'{c}: <name>' for c in missing)})")
