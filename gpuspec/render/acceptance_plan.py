"""Which acceptance checks each pool gets, from the spec and its defaults (pure; no Kubernetes objects).

A pool with an acceptance check (:func:`has_acceptance_check`) always gets ``smoke`` (the CUDA vectorAdd sample on
one device of each advertised resource).  Then, by what the pool advertises:

* whole GPUs: ``all-gpus`` (per sampled node a pod requesting every GPU of the node), ``dcgm-diag`` (DCGM
  diagnostics on the same sample) and, with GPUDirect RDMA and two or more nodes, ``nccl`` (a multi-node
  all-reduce);
* MIG: ``mig`` (per sampled node the layout's full count of each profile);
* sharing: ``shared`` (every replica of one node's GPUs at once);
* every pool: ``workload-<name>`` per workload of ``acceptance.workloads`` and, where the spec enables it on a
  pool of two or more nodes, ``eviction`` (a workload with a PodDisruptionBudget survives the drain of a node).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuspec.matrix.acceptance import nccl_image, sample_image
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.pool_specs import AcceptanceWorkload, MigStrategy, SharingMode
from gpuspec.render.facts import mig_layout_profiles
from gpuspec.render.poolresources import has_acceptance_check, pool_resources

#: Check ids, as the ``gpuspec.io/check`` label carries them (workloads add ``workload-<name>``).
SMOKE = "smoke"
ALL_GPUS = "all-gpus"
NCCL = "nccl"
DCGM_DIAG = "dcgm-diag"
MIG = "mig"
SHARED = "shared"
EVICTION = "eviction"
WORKLOAD_PREFIX = "workload-"


@dataclass(frozen=True, slots=True)
class PlannedCheck:
    """One check of one pool: its id, the nodes it runs on at once, what each pod requests and its deadline."""

    check: str
    nodes: int
    requests: dict[str, int]
    timeout_seconds: int
    readiness_budget_seconds: int | None = None
    min_busbw_gbps: float | None = None
    workload: AcceptanceWorkload | None = None
    pods: int = 1
    extra: dict[str, int] = field(default_factory=dict)


def sample_size(cluster: Cluster, pool: Pool) -> int:
    """The nodes the per-node checks of ``pool`` run on: the pool's (else the cluster's) sample, at most its nodes."""
    wanted = pool.acceptance.sample_nodes or cluster.acceptance.sample_nodes
    return max(1, min(wanted, pool.nodes))


def readiness_budget(cluster: Cluster, pool: Pool) -> int | None:
    """The pool's time-to-readiness budget in seconds (the pool's, else the cluster's; None = no budget)."""
    return pool.acceptance.readiness_budget_seconds or cluster.acceptance.readiness_budget_seconds


def mig_devices_per_node(pool: Pool) -> dict[str, int]:
    """MIG profile → devices per node of the pool's layout (empty when MIG is off or the layout is unknown)."""
    if pool.mig.strategy is MigStrategy.NONE:
        return {}
    out: dict[str, int] = {}
    if pool.mig.custom is not None:
        for group in pool.mig.custom:
            gpus = pool.gpu.count if group.devices == "all" else len([d for d in group.devices if d < pool.gpu.count])
            for profile, count in group.profiles.items():
                out[profile] = out.get(profile, 0) + gpus * count
    elif pool.mig.layout:
        out = {p: n * pool.gpu.count for p, n in mig_layout_profiles(pool.mig.layout, pool.gpu.product).items()}
    return {p: n for p, n in sorted(out.items()) if n > 0}


def whole_gpus(pool: Pool) -> bool:
    """True when the pool advertises whole, unshared GPUs (``nvidia.com/gpu``, one per physical GPU)."""
    return pool.mig.strategy is MigStrategy.NONE and pool.sharing.mode is SharingMode.NONE


def nccl_wanted(cluster: Cluster, pool: Pool) -> bool:
    """Whether ``pool`` gets the multi-node all-reduce: set explicitly, else where the pool has GPUDirect RDMA
    (``devices.rdma`` with the cluster's RDMA operand) and two or more nodes; whole-GPU pools only."""
    if not whole_gpus(pool) or pool.nodes < 2:
        return False
    enabled = pool.acceptance.nccl.enabled
    if enabled is not None:
        return enabled
    return pool.devices.rdma and cluster.operator.operands.rdma


def _mig_requests(pool: Pool) -> dict[str, int]:
    per_node = mig_devices_per_node(pool)
    if pool.mig.strategy is MigStrategy.SINGLE:
        total = sum(per_node.values())
        return {"nvidia.com/gpu": total} if total else {}
    return {f"nvidia.com/mig-{p}": n for p, n in per_node.items()}


def _devices_per_node(pool: Pool, resource: str) -> int:
    """Physical devices behind ``resource`` on one node: GPUs, or MIG instances (of its profile, mixed)."""
    if pool.mig.strategy is MigStrategy.NONE:
        return pool.gpu.count
    per_node = mig_devices_per_node(pool)
    if pool.mig.strategy is MigStrategy.SINGLE:
        return sum(per_node.values()) or pool.gpu.count
    profile = resource.removeprefix("nvidia.com/mig-").removesuffix(".shared")
    return per_node.get(profile, 1)


def planned_checks(cluster: Cluster, pool: Pool) -> list[PlannedCheck]:
    """The checks of ``pool`` in a fixed order (empty when the pool has no acceptance check)."""
    if not has_acceptance_check(pool):
        return []
    spec = pool.acceptance
    timeout = spec.timeout_seconds
    budget = readiness_budget(cluster, pool)
    sample = sample_size(cluster, pool)
    resources = pool_resources(pool)
    checks = [PlannedCheck(SMOKE, 1, {r: 1 for r in resources}, timeout, budget)]
    if whole_gpus(pool):
        whole = {"nvidia.com/gpu": pool.gpu.count}
        if spec.all_gpus.enabled:
            checks.append(PlannedCheck(ALL_GPUS, sample, whole, timeout, budget))
        if nccl_wanted(cluster, pool):
            nodes = max(2, min(spec.nccl.nodes or sample, pool.nodes))
            checks.append(PlannedCheck(NCCL, nodes, whole, max(timeout, PULL_HEAVY_SECONDS), budget,
                                       spec.nccl.min_bus_bandwidth_gbps,
                                       extra=dict(sorted(spec.nccl.resources.items()))))
        if spec.dcgm_diag.enabled:
            checks.append(PlannedCheck(DCGM_DIAG, sample, whole, max(timeout, _DCGM_SECONDS[spec.dcgm_diag.level]),
                                       budget))
    if pool.mig.strategy is not MigStrategy.NONE and pool.sharing.mode is SharingMode.NONE:
        mig = _mig_requests(pool)
        if mig:
            checks.append(PlannedCheck(MIG, sample, mig, timeout, budget))
    if pool.sharing.mode is not SharingMode.NONE:
        checks.append(PlannedCheck(SHARED, 1, {resources[0]: 1}, timeout, budget,
                                   pods=_devices_per_node(pool, resources[0]) * pool.sharing.replicas))
    for workload in spec.workloads:
        requests = {resources[0]: workload.gpus} if workload.gpus else {}
        checks.append(PlannedCheck(
            WORKLOAD_PREFIX + workload.name, 1, requests,
            workload.deadline_seconds, workload.readiness_budget_seconds or budget, workload=workload,
            pods=workload.replicas,
        ))
    if spec.eviction.enabled and pool.nodes >= 2:
        drain = drain_timeout(cluster, pool)
        checks.append(PlannedCheck(EVICTION, 2, {resources[0]: 1},
                                   max(timeout, PULL_HEAVY_SECONDS) + timeout + 2 * drain + 120, budget))
    return checks


def drain_timeout(cluster: Cluster, pool: Pool) -> int:
    """Seconds the eviction check retries a refused eviction: the rollout's drain timeout (0 or absent: the
    chart's 300 s; a drain without timeout waits at most the pool's check timeout)."""
    drain = cluster.rollout.drain
    seconds = drain.timeout_seconds if drain is not None else 300
    return seconds or pool.acceptance.timeout_seconds


def runner_image(pool: Pool) -> str:
    """The image of the eviction check's program (Python): the pool's all-reduce image."""
    return pool.acceptance.nccl.image or nccl_image()


#: Deadline floor of the checks that pull the PyTorch image (about 10 GB compressed): a first pull on a node can
#: take many minutes, which a 10-minute deadline would count as a failed check.
PULL_HEAVY_SECONDS = 1800
#: Seconds ``dcgmi diag -r <level>`` may take on an 8-GPU node (level 1 seconds, 2 minutes, 3 half an hour,
#: 4 hours); the check's deadline is at least this.
_DCGM_SECONDS = {1: 600, 2: 1200, 3: 3600, 4: 14400}


def acceptance_upstream_images(cluster: Cluster) -> set[str]:
    """Every image the cluster's acceptance checks pull, as upstream names them (before mirror rewriting).

    The DCGM image is the release's, which only the render context knows: see ``render.acceptance``.
    """
    images: set[str] = set()
    for pool in cluster.pools:
        for check in planned_checks(cluster, pool):
            images.add(sample_image())  # smoke, all-gpus, mig, shared and the readiness gate of workloads
            if check.check in (NCCL, EVICTION):
                images.add(runner_image(pool))
            if check.workload is not None:
                images.add(check.workload.image)
    return images


def needs_dcgm_image(cluster: Cluster) -> bool:
    """Whether some pool of ``cluster`` runs the dcgm-diag check."""
    return any(c.check == DCGM_DIAG for pool in cluster.pools for c in planned_checks(cluster, pool))
