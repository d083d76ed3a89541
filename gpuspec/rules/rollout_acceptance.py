"""Rules about the acceptance checks of each pool (GS560-GS564)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import rollout_acceptance as cat
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.resolve import is_air_gapped
from gpuspec.render.acceptance_plan import nccl_wanted, whole_gpus
from gpuspec.rules.base import Problem, Rule, RuleContext
from gpuspec.rules.common import host_of

#: Kubernetes minor from which native sidecar containers are on by default.
SIDECARS_SINCE = (1, 29)


def _images(pool: Pool) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """The acceptance images a pool's spec names, with their path inside the pool."""
    if pool.acceptance.nccl.image:
        yield pool.acceptance.nccl.image, ("acceptance", "nccl", "image")
    for index, workload in enumerate(pool.acceptance.workloads):
        yield workload.image, ("acceptance", "workloads", index, "image")


def _pools(cluster: Cluster) -> Iterator[tuple[int, Pool]]:
    for index, pool in enumerate(cluster.pools):
        if pool.managed and pool.acceptance.enabled:
            yield index, pool


class AcceptanceImageNotMirrored(Rule):
    """An air-gapped cluster's acceptance image from a registry its mirror does not map."""

    entry = cat.ACCEPTANCE_IMAGE_NOT_MIRRORED
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per acceptance image whose registry the cluster's mirror does not map."""
        for cluster in ctx.fleet.clusters:
            mirror = ctx.fleet.mirror(cluster.mirror)
            if mirror is None or not is_air_gapped(cluster):
                continue
            keys = [k.strip("/") for k in mirror.registries]
            for index, pool in _pools(cluster):
                for image, path in _images(pool):
                    if any(image == k or image.startswith(k + "/") for k in keys):
                        continue
                    host = host_of(image) or image
                    yield Problem(
                        f"pool {pool.name!r}: acceptance image {image} comes from {host}, which mirror "
                        f"{mirror.name!r} does not map: the air-gapped nodes cannot pull it",
                        cluster.source_file, ("pools", index, *path),
                        hint=f"mirror the image to a registry of the mirror, or add '{host}: <mirror prefix>' to "
                             f"mirrors[{mirror.name}].registries in fleet.yaml",
                    )


class AcceptanceFloatingTag(Rule):
    """An acceptance image tagged ``latest``."""

    entry = cat.ACCEPTANCE_FLOATING_TAG
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per acceptance image whose tag is ``latest``."""
        for cluster in ctx.fleet.clusters:
            for index, pool in _pools(cluster):
                for image, path in _images(pool):
                    if "@" in image or image.rsplit("/", 1)[-1].partition(":")[2].lower() != "latest":
                        continue
                    yield Problem(
                        f"pool {pool.name!r}: acceptance image {image} has the floating tag latest: each run may "
                        "test another image", cluster.source_file, ("pools", index, *path),
                        hint="pin the tag the workload really runs (or its digest, @sha256:...)",
                    )


class NcclWithoutFabric(Rule):
    """``nccl.enabled: true`` on a pool without RDMA, of one node, or with MIG or sharing."""

    entry = cat.NCCL_WITHOUT_FABRIC
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per pool that asks for the all-reduce where it cannot measure the GPU fabric."""
        for cluster in ctx.fleet.clusters:
            for index, pool in _pools(cluster):
                if pool.acceptance.nccl.enabled is not True:
                    continue
                path = ("pools", index, "acceptance", "nccl", "enabled")
                if not nccl_wanted(cluster, pool):
                    why = "it has one node" if pool.nodes < 2 else "its GPUs are MIG-partitioned or shared"
                    yield Problem(f"pool {pool.name!r} asks for the NCCL check, but {why}: no NCCL Job is rendered",
                                  cluster.source_file, path, hint="remove nccl.enabled, or run it on a pool of "
                                  "whole GPUs with two or more nodes")
                elif whole_gpus(pool) and not (pool.devices.rdma and cluster.operator.operands.rdma):
                    yield Problem(
                        f"pool {pool.name!r} asks for the NCCL check without GPUDirect RDMA: NCCL falls back to TCP "
                        "sockets and the bandwidth measured is the Ethernet's", cluster.source_file, path,
                        hint="set devices.rdma on the pool and operator.operands.rdma on the cluster, or accept the "
                             "finding with a minBusBandwidthGbps your network gives",
                    )


def _minor(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor)


class ReadinessNeedsSidecars(Rule):
    """A workload with ``ready:`` on a cluster older than Kubernetes 1.29."""

    entry = cat.READINESS_NEEDS_SIDECARS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per readiness workload of a cluster without native sidecar containers."""
        for cluster in ctx.fleet.clusters:
            if _minor(cluster.kubernetes.version) >= SIDECARS_SINCE:
                continue
            for index, pool in _pools(cluster):
                for w_index, workload in enumerate(pool.acceptance.workloads):
                    if workload.ready is None:
                        continue
                    yield Problem(
                        f"pool {pool.name!r}: workload {workload.name!r} waits for readiness, which runs it as a "
                        f"native sidecar container; Kubernetes {cluster.kubernetes.version} has none (1.29+)",
                        cluster.source_file, ("pools", index, "acceptance", "workloads", w_index, "ready"),
                        hint="upgrade the cluster to Kubernetes 1.29 or later, or make it a batch workload that "
                             "exits 0 when done (no ready:)",
                    )


class EvictionCheckMismatch(Rule):
    """The eviction check on a cluster whose rollout does not drain, or on a pool of one node."""

    entry = cat.EVICTION_CHECK_MISMATCH
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per eviction check that cannot show what the upgrade does."""
        for cluster in ctx.fleet.clusters:
            drains = cluster.rollout.drain is not None and cluster.rollout.drain.enable
            for index, pool in _pools(cluster):
                if not pool.acceptance.eviction.enabled:
                    continue
                path = ("pools", index, "acceptance", "eviction", "enabled")
                if pool.nodes < 2:
                    yield Problem(f"pool {pool.name!r} has one node: the evicted pod has no other node to go to, "
                                  "so no eviction check is rendered", cluster.source_file, path,
                                  hint="remove eviction.enabled on pools of one node")
                elif not drains:
                    yield Problem(
                        f"pool {pool.name!r}: the eviction check drains a node through the eviction API, but the "
                        "cluster's driver upgrade does not drain (rollout.drain.enable is off): it deletes GPU pods",
                        cluster.source_file, path,
                        hint="set rollout.drain.enable: true, or remove eviction.enabled",
                    )


RULES: list[Rule] = [
    AcceptanceImageNotMirrored(),
    AcceptanceFloatingTag(),
    NcclWithoutFabric(),
    ReadinessNeedsSidecars(),
    EvictionCheckMismatch(),
]
