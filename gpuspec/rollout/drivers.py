"""Which object runs each pool's driver pods, and the changes that take a pool's driver away outside the upgrade
policy.

The GPU Operator runs a node's driver pod from one DaemonSet: the ClusterPolicy's (ClusterPolicy driver
management), or the one an NVIDIADriver resource owns (NVIDIA/gpu-operator v26.7.0 internal/state/driver.go
l. 152 and 435: the NVIDIADriver is the controller owner of its DaemonSets).  A pool's nodes are served by the
overlay's NVIDIADriver whose ``spec.nodeSelector`` their labels match, else, with the chart's default NVIDIADriver
(``driver.nvidiaDriverCRD.deployDefaultCR``, v26.7.0+), by that one, which serves every GPU node no other
NVIDIADriver selects.

The upgrade controller (k8s-operator-libs) moves nodes from one driver pod to the next under the upgrade policy
(``maxParallelUpgrades``, ``maxUnavailable``, drain) only while the same DaemonSet serves them and its pod template
changes, and for NVIDIA's controlled migration from ClusterPolicy to NVIDIADriver management (v26.7.0+, which the
change-set rule GS808 judges).  Any other change of a node's owner takes its driver pod away at once:

- the owner is deleted: GitOps prunes an NVIDIADriver the overlay no longer renders, and garbage collection takes
  its DaemonSet and every driver pod with it;
- the owner stays but no longer selects the nodes (its node selector changed): the DaemonSet controller deletes
  its pods from them;
- NVIDIADriver management goes back to the ClusterPolicy: every NVIDIADriver is pruned.

Nodes are judged by the labels they carry now, the base's pool node selector: a change of the labels themselves
happens outside gpuspec.  This is the one reading of driver ownership: the change-set rule GS814 refuses what it
finds and ``gpuspec plan`` shows the same records.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.errors import GpuspecError
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.render.compile import compile_cluster
from gpuspec.render.filetree import ClusterPlan, YamlFile

#: Name of the chart's default NVIDIADriver (templates/nvidiadriver.yaml of GPU Operator v26.7.0).
CHART_DEFAULT = "default"
CLUSTER_POLICY = "ClusterPolicy"
NVIDIA_DRIVER = "NVIDIADriver"


@dataclass(frozen=True, slots=True)
class DriverOwner:
    """The object whose DaemonSet runs a pool's driver pods: the ClusterPolicy, an NVIDIADriver of the overlay, or
    the chart's default NVIDIADriver."""

    kind: str
    name: str
    #: Where it comes from: ``overlay`` (rendered into the cluster's folder, pruned by GitOps) or ``chart``.
    source: str

    def describe(self) -> str:
        """How the plan and the findings name it."""
        if self.kind == CLUSTER_POLICY:
            return "the ClusterPolicy's driver DaemonSet"
        if self.source == "chart":
            return f"the chart's default NVIDIADriver {self.name!r}"
        return f"NVIDIADriver {self.name!r}"


@dataclass(frozen=True, slots=True)
class DriverLoss:
    """A pool whose nodes lose their driver pod at once, outside the upgrade policy, and the way out."""

    cluster: str
    pool: str
    nodes: int
    before: DriverOwner
    after: DriverOwner | None
    why: str
    way_out: str

    def describe(self) -> str:
        """One line: which nodes, what happens, why."""
        then = f"; {self.after.describe()} starts new ones" if self.after is not None else "; nothing replaces them"
        return (f"pool {self.pool!r} of cluster {self.cluster!r} ({self.nodes} node(s)): {self.why}, so its driver "
                f"pods go at once, outside the upgrade policy, and GPU pods on those nodes fail{then}")

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        return {"cluster": self.cluster, "pool": self.pool, "nodes": self.nodes, "before": self.before.describe(),
                "after": self.after.describe() if self.after is not None else None, "why": self.why,
                "wayOut": self.way_out}


def operator_managed(pool: Pool) -> bool:
    """True when the operator installs the pool's driver (not a driver of the node image)."""
    return pool.managed and pool.driver.source is not DriverSource.HOST


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _values(plan: ClusterPlan) -> Mapping[str, Any]:
    file = plan.files.get(f"clusters/{plan.name}/gpu-operator.values.yaml")
    return _mapping(file.documents[0]) if isinstance(file, YamlFile) and file.documents else {}


def _overlay_drivers(plan: ClusterPlan) -> list[tuple[str, Mapping[str, str]]]:
    """(name, node selector) of every NVIDIADriver the cluster's overlay renders."""
    out: list[tuple[str, Mapping[str, str]]] = []
    for path, file in sorted(plan.files.items()):
        if not isinstance(file, YamlFile) or not path.startswith(f"clusters/{plan.name}/"):
            continue
        for doc in file.documents:
            if isinstance(doc, Mapping) and doc.get("kind") == NVIDIA_DRIVER:
                name = str(_mapping(doc.get("metadata")).get("name", ""))
                selector = _mapping(_mapping(doc.get("spec")).get("nodeSelector"))
                out.append((name, {str(k): str(v) for k, v in selector.items()}))
    return out


@dataclass(frozen=True)
class DriverOwnership:
    """How one revision of a cluster serves driver pods: its overlay NVIDIADrivers, whether the chart deploys its
    default NVIDIADriver, and whether the ClusterPolicy runs the driver."""

    overlay: tuple[tuple[str, Mapping[str, str]], ...]
    chart_default: bool
    cluster_policy: bool

    def owner(self, labels: Mapping[str, str]) -> DriverOwner | None:
        """The owner of the driver pods on nodes with ``labels`` (None: no driver pod is deployed there)."""
        for name, selector in self.overlay:
            if all(labels.get(k) == v for k, v in selector.items()):
                return DriverOwner(NVIDIA_DRIVER, name, "overlay")
        if self.chart_default:
            return DriverOwner(NVIDIA_DRIVER, CHART_DEFAULT, "chart")
        if self.cluster_policy:
            return DriverOwner(CLUSTER_POLICY, "cluster-policy", "chart")
        return None

    def exists(self, owner: DriverOwner) -> bool:
        """True when ``owner`` is still rendered (an overlay NVIDIADriver of that name, the chart's default one, or
        the ClusterPolicy's driver)."""
        if owner.kind == CLUSTER_POLICY:
            return self.cluster_policy
        if owner.source == "chart":
            return self.chart_default
        return any(name == owner.name for name, _ in self.overlay)


def ownership(fleet: Fleet, cluster: Cluster) -> DriverOwnership | None:
    """How ``cluster`` of ``fleet`` serves driver pods, from its compiled objects; None when it does not compile
    (validation reports why)."""
    try:
        plan = compile_cluster(fleet, cluster, "")
    except GpuspecError:
        return None
    driver = _mapping(_values(plan).get("driver"))
    enabled = driver.get("enabled") is True
    crd = _mapping(driver.get("nvidiaDriverCRD"))
    crd_on = crd.get("enabled") is True
    return DriverOwnership(tuple(_overlay_drivers(plan)), enabled and crd_on and crd.get("deployDefaultCR") is True,
                           enabled and not crd_on)


def driver_losses(base: Fleet, head: Fleet) -> list[DriverLoss]:
    """Every pool of a cluster in both fleets whose nodes lose their driver pod at once, outside the upgrade
    policy, by the change from ``base`` to ``head``."""
    losses: list[DriverLoss] = []
    for old in sorted(base.clusters, key=lambda c: c.name):
        new = head.cluster(old.name)
        if new is not None:
            losses.extend(cluster_driver_losses(base, old, head, new))
    return losses


def cluster_driver_losses(base: Fleet, old: Cluster, head: Fleet, new: Cluster) -> list[DriverLoss]:
    """:func:`driver_losses` of one cluster, ``old`` in ``base`` and ``new`` in ``head``."""
    pools = [p for p in old.pools if operator_managed(p)]
    if not pools:
        return []
    before, after = ownership(base, old), ownership(head, new)
    if before is None or after is None:
        return []
    return list(_cluster_losses(old, new, pools, before, after))


def _cluster_losses(old: Cluster, new: Cluster, pools: list[Pool], before: DriverOwnership,
                    after: DriverOwnership) -> Iterator[DriverLoss]:
    for pool in pools:
        labels = {str(k): str(v) for k, v in pool.node_selector.items()}
        was, now = before.owner(labels), after.owner(labels)
        if was is None or was == now:
            continue
        successor = _successor(new, labels) or new.pool(pool.name)
        if successor is None or not operator_managed(successor):
            continue  # the nodes leave the fleet with their pool, or their node image brings the driver from now on
        found = _reason(was, now, after, pool, successor)
        if found is not None:
            yield DriverLoss(old.name, pool.name, pool.nodes, was, now, *found)


def _successor(cluster: Cluster, labels: Mapping[str, str]) -> Pool | None:
    """The pool of the head whose node selector the nodes' labels still match (the pool itself, or it renamed);
    failing that, the caller takes the pool of the same name (its nodes are to be relabelled)."""
    for pool in cluster.pools:
        if all(labels.get(str(k)) == str(v) for k, v in pool.node_selector.items()):
            return pool
    return None


def _reason(was: DriverOwner, now: DriverOwner | None, after: DriverOwnership, pool: Pool,
            successor: Pool) -> tuple[str, str] | None:
    """Why the nodes lose their driver pod, and the way out; None for a change of owner the operator moves under
    the upgrade policy (or that another rule judges: ClusterPolicy to NVIDIADriver is GS808's)."""
    drain = (f"cordon and drain the pool's {pool.nodes} node(s) before this change syncs and accept this finding "
             "here (an inline `# gpuspec: ignore GS814 -- drained` with the reason)")
    if now is None:
        return ("no driver DaemonSet serves the pool's nodes any more although the operator is to install their "
                "driver", "keep the driver enabled for the pool, or " + drain)
    if was.kind == NVIDIA_DRIVER and now.kind == CLUSTER_POLICY:
        return (f"driver management goes back from NVIDIADriver resources to the ClusterPolicy ({was.describe()} "
                "is deleted), which NVIDIA does not migrate node by node",
                "keep NVIDIADriver management (operator.driverManagement: nvidiadriver), or " + drain)
    if was.kind != NVIDIA_DRIVER:
        return None
    if not after.exists(was):
        if was.source == "chart":
            return (f"{was.describe()} goes (the chart no longer deploys it: Helm deletes it and garbage collection "
                    f"deletes its DaemonSet; {now.describe()} is to serve the pool)",
                    drain + "; or keep the chart's default NVIDIADriver (operator.defaultNVIDIADriver) while a pool "
                    "runs on it")
        return (f"{was.describe()} goes (it is no longer rendered: GitOps prunes it and garbage collection deletes "
                f"its DaemonSet; {now.describe()} is to serve the pool)",
                drain + "; or set operator.defaultNVIDIADriver: false in this change, so that the pool keeps its "
                "own NVIDIADriver (the pools the chart's default NVIDIADriver serves then lose theirs: GS814 names "
                "them)")
    if was.source == "chart":
        return None  # a pool moves off the chart's default NVIDIADriver onto its own: the operator hands it over
    if successor.name != pool.name or dict(successor.node_selector) != dict(pool.node_selector):
        return (f"{was.describe()} no longer selects the pool's nodes by the labels they carry now",
                "relabel the nodes to the new selector before this change syncs, or " + drain)
    return (f"{was.describe()} no longer selects the pool's nodes ({now.describe()} does)", drain)
