"""Words for what a change does to a cluster and how to undo it (pure functions of the spec)."""

from __future__ import annotations

from gpuspec.matrix import openshift as ocp
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.resolve import MIG_CONFIG_LABEL, is_air_gapped


def _flags(force: bool, delete_empty_dir: bool, selector: str = "") -> str:
    parts = [f for f, on in (("force", force), ("deleteEmptyDir", delete_empty_dir)) if on]
    if selector:
        parts.append(f"podSelector {selector}")
    return (", " + ", ".join(parts)) if parts else ""


def reload_procedure(cluster: Cluster, pool: Pool | None = None, where: str | None = None) -> str:
    """How the operator's upgrade controller reloads drivers on this cluster: eviction, drain and parallelism
    (``where``: the nodes it happens on, default the pool's or every GPU node)."""
    rollout = cluster.rollout
    if where is None:
        where = f"{pool.nodes} node(s) x {pool.gpu.count} GPU(s)" if pool is not None else "every GPU node"
    if not rollout.auto_upgrade:
        return (
            f"{where}: autoUpgrade is off, so the upgrade controller does not roll the driver; "
            "nodes keep the old driver until each node's driver pod is deleted by hand "
            "(cordon, evict GPU pods, drain first)"
        )
    deletion = rollout.pod_deletion
    text = (
        f"{where}: GPU pods are evicted (timeout {deletion.timeout_seconds}s"
        f"{_flags(deletion.force, deletion.delete_empty_dir)})"
        if deletion is not None
        else f"{where}: GPU pods are evicted (chart default: timeout 300s)"
    )
    drain = rollout.drain
    if drain is not None and drain.enable:
        text += (
            f", then nodes are drained (timeout {drain.timeout_seconds}s"
            f"{_flags(drain.force, drain.delete_empty_dir, drain.pod_selector)})"
        )
    else:
        text += ", no drain (drain disabled)"
    parallel = rollout.max_parallel_upgrades or "unlimited"
    text += f"; {parallel} node(s) at a time, maxUnavailable {rollout.max_unavailable}"
    return text


def manages_driver(pool: Pool) -> bool:
    """True when the operator installs the pool's driver (driver container or precompiled modules)."""
    return pool.driver.source is not DriverSource.HOST


def managed_pools(cluster: Cluster) -> list[Pool]:
    """The pools whose driver the operator manages."""
    return [p for p in cluster.pools if manages_driver(p)]


def operator_rollback(before: str, after: str, cluster: Cluster) -> str:
    """Rollback note for an operator version change from ``before`` to ``after``."""
    where = f" from mirror {cluster.mirror}" if is_air_gapped(cluster) else ""
    return (
        f"Revert the chart to {before} (git revert of this change; Argo CD / Flux applies helm upgrade to {before}"
        f"{where}) and set operator.rollback: true in that change (remove it again in the next one). Helm does "
        f"not downgrade CRDs: the {after} "
        f"CRDs stay installed, so check them against {before} or kubectl apply the {before} CRDs before reverting."
    )


def olm_upgrade_impact(before: str, after: str) -> str:
    """What an OpenShift (OLM) operator upgrade does: new channel/startingCSV, approval, operator restart, rollout."""
    return (
        f"OLM upgrade: the Subscription moves to channel {ocp.channel(after)} and startingCSV {ocp.csv_name(after)}; "
        f"the approval Job approves only that CSV's InstallPlan; OLM replaces CSV {ocp.csv_name(before)} "
        "(operator Deployment restarts, new CRDs from the bundle); operand DaemonSets (device plugin, GFD, toolkit, "
        "DCGM exporter, validator, mig-manager) roll to the new images from the ClusterPolicy"
    )


def olm_rollback(before: str, after: str) -> str:
    """Rollback note of an OLM operator upgrade (OLM does not downgrade an installed CSV)."""
    return (
        f"OLM does not downgrade a CSV: revert this change, then delete the Subscription and CSV "
        f"{ocp.csv_name(after)} (operands keep running) so the Subscription re-installs {ocp.csv_name(before)}; "
        "approve its InstallPlan (the approval Job does), and set operator.rollback: true in that change."
    )


def driver_rollback(image: str | None, before: str, fleet: Fleet, cluster: Cluster, pool: Pool) -> str:
    """Rollback note for a driver change: the previous image must be pullable and nodes are drained again."""
    if pool.driver.source is DriverSource.HOST:
        return (
            f"The driver ({before}) is preinstalled on the node image: roll back the node image; "
            "the operator does not manage it."
        )
    mirror = fleet.mirror(cluster.mirror)
    if image:
        pull = (
            f"the previous driver image {image} must still be in mirror {mirror.name}"
            if mirror is not None
            else f"the previous driver image {image} must still be pullable"
        )
    else:
        pull = (
            f"the previous driver image ({before}) must still be in mirror {cluster.mirror} "
            "(exact reference unknown to the support matrix)"
            if cluster.mirror
            else f"the previous driver image ({before}) must still be pullable"
        )
    return (
        f"Revert the pool's driver to {before} with operator.rollback: true (removed again in the next change); "
        f"{pull}; "
        "every node reloads the driver again (GPU pods evicted, drain per rollout settings)."
    )


def mig_procedure(cluster: Cluster, pool: Pool, label: str) -> str:
    """What mig-manager does when a pool's layout changes (NVIDIA gpu-operator-mig.rst, MIG Manager notes)."""
    clients = (
        "; the driver is preinstalled, so it also stops the host GPU clients of its gpu-clients list "
        "(nvsm, DCGM, nv_peer_mem services)"
        if pool.driver.source is DriverSource.HOST else ""
    )
    return (
        f"{pool.nodes} node(s) x {pool.gpu.count} GPU(s): when a node's {MIG_CONFIG_LABEL} label is {label}, "
        "mig-manager sets nvidia.com/mig.config.state=pending, stops the operator's GPU pods on the node "
        "(device plugin, GPU feature discovery, DCGM exporter, DCGM, validator)" + clients + ", and repartitions "
        "the GPUs; it needs no user workload on them but does not evict or drain: cordon and drain the node "
        "first (running GPU jobs fail otherwise); the node advertises no GPUs until the state is success "
        "(a reboot happens only with WITH_REBOOT=true, which gpuspec does not set)"
    )


def mig_provisioning(cluster: Cluster, pool: Pool, label: str) -> str:
    """The step that brings a pool's MIG layout to its nodes: the node label, which GitOps does not apply."""
    return (
        f"provisioning step: label the {pool.nodes} node(s) of pool {pool.name} {MIG_CONFIG_LABEL}={label} "
        f"(rendered/clusters/{cluster.name}/node-labels.yaml lists it; Argo CD / Flux do not apply node labels); "
        f"`gpuspec audit --cluster {cluster.name}` reports nodes whose label differs (GS782)"
    )


def mig_rollback(before: str) -> str:
    """Rollback note for a MIG change: reverting repartitions again."""
    return (
        f"Revert to {before}: mig-manager repartitions the GPUs again, which needs idle GPUs "
        "(GPU pods evicted) again."
    )
