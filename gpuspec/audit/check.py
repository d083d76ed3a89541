"""Compare exported node state and operator resources with one cluster of the spec (pure; no I/O)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuspec.audit.expect import ResourceExpectation, expected_mig_config, expected_operands, expected_resources
from gpuspec.audit.facts import (
    MIG_DISABLED,
    MIG_RESOURCE_PREFIX,
    UPGRADE_FAILED,
    UPGRADE_IN_PROGRESS,
    NodeFacts,
    node_names,
    version_key,
)
from gpuspec.audit.host import audit_hosts
from gpuspec.catalogue import audit as R
from gpuspec.catalogue import audit_operator as OP
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import DocPath, Finding
from gpuspec.matrix.query import default_driver
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy, SharingMode
from gpuspec.model.resolve import effective_driver, operator_version, pool_path
from gpuspec.redaction import one_line

if TYPE_CHECKING:  # the inventory models (pydantic) only where an inventory is read
    from gpuspec.audit.inventory import OperatorResource

#: The node label that selects a node's device-plugin config (a key of the device-plugin ConfigMap).
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
#: Deploy-label values (nvidia.com/gpu.deploy.driver) that mean the driver is installed on the host.
PREINSTALLED = "pre-installed"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _v(count: int, singular: str, plural: str) -> str:
    return singular if count == 1 else plural


@dataclass
class PoolSummary:
    """One row of the per-pool summary: declared vs seen vs ready nodes and expected vs advertised GPUs."""

    pool: str
    declared: int
    matched: int
    ready: int
    gpus_declared: int
    gpus_seen: int
    expected: ResourceExpectation
    advertised: dict[str, int] = field(default_factory=dict)


@dataclass
class AuditResult:
    """Findings of an audit and the per-pool summary."""

    findings: list[Finding]
    pools: list[PoolSummary]
    gpu_nodes: int
    unmatched: int


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """True when every label of ``selector`` is on the node with the same value."""
    return all(labels.get(key) == value for key, value in selector.items())


class _Collector:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.file = cluster.source_file
        self.findings: list[Finding] = []

    def add(self, entry: Entry, message: str, path: DocPath, hint: str | None = None, at_key: bool = False) -> None:
        """Record one finding of ``entry`` at ``path`` of the cluster file, with its default severity."""
        self.findings.append(entry.finding(message, self.file, path, hint, at_key=at_key))

    def grouped(self, entry: Entry, nodes: Sequence[NodeFacts], key: Callable[[NodeFacts], str | None],
                message: Callable[[str, list[NodeFacts]], str], path: DocPath, hint: str | None = None) -> None:
        """One finding per distinct observed value, listing the nodes that show it."""
        groups: dict[str, list[NodeFacts]] = defaultdict(list)
        for node in nodes:
            value = key(node)
            if value is not None:
                groups[value].append(node)
        for value in sorted(groups):
            self.add(entry, message(value, groups[value]), path, hint)


def _pool_label(pool: Pool) -> str:
    return f"pool {pool.name!r}"


def _advertised_problem(node: NodeFacts, want: ResourceExpectation) -> str | None:
    have = {k: v for k, v in node.allocatable.items() if v > 0}
    problems: list[str] = []
    for name, count in sorted(want.counts.items()):
        got = have.get(name, 0)
        if (count is None and got == 0) or (count is not None and got != count):
            problems.append(f"{got} {name}")
    if want.any_mig and not any(k.startswith(MIG_RESOURCE_PREFIX) for k in have):
        problems.append("no nvidia.com/mig-* resources")
    for name in sorted(set(have) - set(want.counts)):
        if want.any_mig and (name.startswith(MIG_RESOURCE_PREFIX) or name.startswith("nvidia.com/gpu")):
            continue
        problems.append(f"{have[name]} {name}")
    return ", ".join(problems) if problems else None


def advertised_problem(node: NodeFacts, want: ResourceExpectation) -> str | None:
    """What ``node`` advertises that differs from ``want`` (e.g. ``7 nvidia.com/gpu``), None when it matches."""
    return _advertised_problem(node, want)


def _check_hardware(c: _Collector, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    label = _pool_label(pool)
    with_labels = [n for n in nodes if n.product_label is not None]
    missing = [n for n in nodes if n.product_label is None]
    if missing:
        c.add(R.GFD_LABELS_MISSING,
              f"{_plural(len(missing), 'node')} of {label} {_v(len(missing), 'has', 'have')} no "
              f"nvidia.com/gpu.product label from GPU Feature Discovery: {node_names(missing)}",
              pool_path(cluster, pool, "gpu"), "check the gpu-feature-discovery and NFD pods on these nodes")
    unknown = [n for n in with_labels if n.product is None]
    c.grouped(R.PRODUCT_UNKNOWN, unknown, lambda n: n.product_label,
              lambda v, ns: f"{label}: GFD product {v!r} is not in gpuspec's product map, so it cannot be "
                            f"compared with {pool.gpu.product}: {node_names(ns)}",
              pool_path(cluster, pool, "gpu", "product"),
              "add the string to gpuspec/audit/data/gfd_products.yaml")

    def product_of(n: NodeFacts) -> str | None:
        if n.product is None or n.product.accepts(pool.gpu.product):
            return None
        return f"{n.product_label} ({n.product.product_id})"

    wrong = [n for n in with_labels if product_of(n) is not None]
    unverified = any(n.product is not None and not n.product.verified for n in wrong)
    c.grouped(R.PRODUCT_MISMATCH, wrong, product_of,
              lambda v, ns: f"{label} declares {pool.gpu.product} but {_plural(len(ns), 'node')} "
                            f"{_v(len(ns), 'reports', 'report')} "
                            f"{v}: {node_names(ns)}",
              pool_path(cluster, pool, "gpu", "product"),
              "the GFD → product mapping of this string is not verified on a real node; see "
              "gpuspec/audit/data/gfd_products.yaml" if unverified else None)
    if pool.mig.strategy is not MigStrategy.SINGLE:  # single strategy overwrites gpu.count with MIG devices
        c.grouped(R.COUNT_MISMATCH, nodes,
                  lambda n: None if n.gpu_count is None or n.gpu_count == pool.gpu.count else str(n.gpu_count),
                  lambda v, ns: f"{label} declares {pool.gpu.count} GPUs per node but {_plural(len(ns), 'node')} "
                                f"{_v(len(ns), 'reports', 'report')} nvidia.com/gpu.count={v}: {node_names(ns)}",
                  pool_path(cluster, pool, "gpu", "count"))


def _check_resources(c: _Collector, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts],
                     want: ResourceExpectation) -> None:
    label = _pool_label(pool)
    idle = [n for n in nodes if n.advertised == 0]
    if idle:
        c.add(R.NO_GPUS_ADVERTISED,
              f"{_plural(len(idle), 'node')} of {label} {_v(len(idle), 'is', 'are')} labelled as GPU "
              f"node{_v(len(idle), '', 's')} but "
              f"advertise{_v(len(idle), 's', '')} no allocatable "
              f"GPUs: {node_names(idle)}",
              pool_path(cluster, pool, "gpu"),
              "check the driver, container-toolkit and device-plugin pods on these nodes "
              "(kubectl -n <operator namespace> get pods -o wide)")
    c.grouped(R.ADVERTISED_MISMATCH, [n for n in nodes if n.advertised > 0],
              lambda n: _advertised_problem(n, want),
              lambda v, ns: f"{label} expects {want.describe()} per node but {_plural(len(ns), 'node')} "
                            f"{_v(len(ns), 'advertises', 'advertise')} {v}: {node_names(ns)}",
              pool_path(cluster, pool, "mig" if pool.mig.strategy is not MigStrategy.NONE else "gpu"))


def _check_driver(c: _Collector, fleet: Fleet, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    label = _pool_label(pool)
    versions: dict[str, list[NodeFacts]] = defaultdict(list)
    for n in nodes:
        if n.driver:
            versions[n.driver].append(n)
    if len({version_key(v) for v in versions}) > 1:
        ordered = sorted(versions.items(), key=lambda item: version_key(item[0]))
        parts = "; ".join(f"{v} on {node_names(ns)}" for v, ns in ordered)
        c.add(R.DRIVER_DRIFT, f"{label} runs {len(versions)} driver versions: {parts}",
              pool_path(cluster, pool, "driver"),
              "look for nodes stuck in the driver upgrade (label nvidia.com/gpu-driver-upgrade-state)")
    driver = effective_driver(fleet, cluster, pool)
    pinned = driver.version
    origin = f" (from channel {cluster.operator.channel})" if driver.from_channel else ""
    if not pinned and not driver.branch and driver.source is DriverSource.OPERATOR:
        release = operator_version(fleet, cluster)
        pinned = default_driver(release) if release else None
        origin = f" (the default of operator {release})"
    if pinned:
        c.grouped(R.DRIVER_SPEC_MISMATCH, nodes,
                  lambda n: n.driver if n.driver and version_key(n.driver) != version_key(pinned or "") else None,
                  lambda v, ns: f"{label} expects driver {pinned}{origin} but {_plural(len(ns), 'node')} "
                                f"{_v(len(ns), 'runs', 'run')} {v}: "
                                f"{node_names(ns)}",
                  pool_path(cluster, pool, "driver", "version"))
    elif driver.branch:
        c.grouped(R.DRIVER_SPEC_MISMATCH, nodes,
                  lambda n: n.driver if n.driver and n.driver.split(".", 1)[0] != driver.branch else None,
                  lambda v, ns: f"{label} pins driver branch {driver.branch} but {_plural(len(ns), 'node')} "
                                f"{_v(len(ns), 'runs', 'run')} "
                                f"{v}: {node_names(ns)}",
                  pool_path(cluster, pool, "driver", "branch"))
    failed = [n for n in nodes if n.upgrade_state == UPGRADE_FAILED]
    if failed:
        c.add(R.UPGRADE_FAILED, f"driver upgrade failed on {_plural(len(failed), 'node')} of {label}: "
                                f"{node_names(failed)}",
              pool_path(cluster, pool, "driver"),
              "fix the cause (driver pod logs), then relabel: "
              "kubectl label node <node> nvidia.com/gpu-driver-upgrade-state=upgrade-required --overwrite")
    c.grouped(R.UPGRADE_IN_PROGRESS, [n for n in nodes if n.upgrade_state in UPGRADE_IN_PROGRESS],
              lambda n: n.upgrade_state,
              lambda v, ns: f"driver upgrade in progress on {_plural(len(ns), 'node')} of {label} (state {v}): "
                            f"{node_names(ns)}",
              pool_path(cluster, pool, "driver"))
    host = pool.driver.source is DriverSource.HOST

    def owner(n: NodeFacts) -> str | None:
        value = n.deploy.get("driver")
        if value is None:
            return None
        if host and value == "true":
            return "the operator deploys its driver container (nvidia.com/gpu.deploy.driver=true)"
        if not host and value == PREINSTALLED:
            return "the operator found a preinstalled host driver (nvidia.com/gpu.deploy.driver=pre-installed)"
        return None

    c.grouped(R.DRIVER_OWNER_MISMATCH, nodes, owner,
              lambda v, ns: f"{label} declares driver source {pool.driver.source.value} but on "
                            f"{_plural(len(ns), 'node')} {v}: {node_names(ns)}",
              pool_path(cluster, pool, "driver", "source"))


def _check_operands(c: _Collector, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    label = _pool_label(pool)
    for operand in expected_operands(cluster, pool):
        off = [n for n in nodes if n.deploy.get(operand) == "false"]
        if off:
            c.add(R.OPERAND_DISABLED,
                  f"{operand} is switched off by nvidia.com/gpu.deploy.{operand}=false on "
                  f"{_plural(len(off), 'node')} of {label}: {node_names(off)}",
                  pool_path(cluster, pool), f"remove the label override: kubectl label node <node> "
                                            f"nvidia.com/gpu.deploy.{operand}-")


def _check_mig(c: _Collector, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    label = _pool_label(pool)
    path = pool_path(cluster, pool, "mig")
    failed = [n for n in nodes if n.mig_state == "failed"]
    if failed:
        c.add(R.MIG_FAILED, f"MIG configuration failed (nvidia.com/mig.config.state=failed) on "
                            f"{_plural(len(failed), 'node')} of {label}: {node_names(failed)}",
              path, "read the nvidia-mig-manager pod logs on these nodes; GPUs with running processes cannot be "
                    "repartitioned")
    c.grouped(R.MIG_PENDING, [n for n in nodes if n.mig_state in ("pending", "rebooting")],
              lambda n: n.mig_state,
              lambda v, ns: f"MIG configuration {v} on {_plural(len(ns), 'node')} of {label}: {node_names(ns)}",
              path)
    want = expected_mig_config(pool)

    def differs(n: NodeFacts) -> str | None:
        have = n.mig_config
        if pool.mig.strategy is MigStrategy.NONE:
            return have if have not in (None, MIG_DISABLED) else None
        if want is None:
            return (have or "<unset>") if have in (None, MIG_DISABLED) else None
        return (have or "<unset>") if have != want else None

    expected = want or "a MIG-enabled config (custom layout)"
    c.grouped(R.MIG_CONFIG_MISMATCH, nodes, differs,
              lambda v, ns: f"{label} expects nvidia.com/mig.config={expected} but {_plural(len(ns), 'node')} "
                            f"{_v(len(ns), 'carries', 'carry')} {v}: {node_names(ns)}",
              pool_path(cluster, pool, "mig", "layout" if pool.mig.layout else "strategy"),
              "gpuspec render sets the MIG config through the operator; a hand-set node label overrides it")


def _check_sharing(c: _Collector, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    """GS783: nodes of a sharing pool whose device-plugin config label names another config than the pool's."""
    if pool.sharing.mode is SharingMode.NONE:
        return
    want = pool.sharing.config_name or pool.name
    label = _pool_label(pool)

    def differs(n: NodeFacts) -> str | None:
        have = n.labels.get(DEVICE_PLUGIN_CONFIG)
        return have if have is not None and have != want else None

    c.grouped(OP.SHARING_CONFIG_MISMATCH, nodes, differs,
              lambda v, ns: f"{label} expects {DEVICE_PLUGIN_CONFIG}={want} but {_plural(len(ns), 'node')} "
                            f"{_v(len(ns), 'carries', 'carry')} {v}: {node_names(ns)}",
              pool_path(cluster, pool, "sharing", "configName" if pool.sharing.config_name else "mode"),
              "keep the nodes' config name with sharing.configName (the first sync would relabel the nodes and "
              "restart their device plugin)")


def _check_nodes(c: _Collector, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> int:
    label = _pool_label(pool)
    not_ready = [n for n in nodes if not n.ready]
    c.grouped(R.NODE_NOT_READY, not_ready, lambda n: f"NotReady ({n.ready_reason or 'no reason given'})",
              lambda v, ns: f"{_plural(len(ns), 'node')} of {label} {_v(len(ns), 'is', 'are')} {v}: {node_names(ns)}",
              pool_path(cluster, pool, "nodes"))

    def cordon(n: NodeFacts) -> str | None:
        if not n.unschedulable:
            return None
        if n.upgrade_state in UPGRADE_IN_PROGRESS or n.upgrade_state == UPGRADE_FAILED:
            return f"cordoned by the driver upgrade (state {n.upgrade_state})"
        return "cordoned (spec.unschedulable)"

    c.grouped(R.NODE_NOT_READY, [n for n in nodes if n.ready], cordon,
              lambda v, ns: f"{_plural(len(ns), 'node')} of {label} {_v(len(ns), 'is', 'are')} {v}: {node_names(ns)}",
              pool_path(cluster, pool, "nodes"))
    for taint in pool.taints:
        lacking = [n for n in nodes if (taint.key, taint.value, taint.effect) not in n.taints]
        if lacking:
            c.add(R.TAINT_MISSING,
                  f"{_plural(len(lacking), 'node')} of {label} {_v(len(lacking), 'lacks', 'lack')} the taint "
                  f"{taint.key}={taint.value}:{taint.effect}: {node_names(lacking)}",
                  pool_path(cluster, pool, "taints"))
    ready = sum(1 for n in nodes if n.ready and not n.unschedulable and n.advertised > 0)
    # An autoscaled pool is in line anywhere between its autoscaler's bounds (nodes being prepared included).
    auto = pool.autoscaling
    low, high = (auto.min, auto.max) if auto is not None else (pool.nodes, pool.nodes)
    declared = f"autoscales between {low} and {high} nodes" if auto is not None else f"declares {pool.nodes} nodes"
    if ready < low:
        c.add(R.POOL_SHORT,
              f"{label} {declared}; ready, schedulable and advertising GPUs: {ready} "
              f"({len(nodes)} matched by its nodeSelector)",
              pool_path(cluster, pool, *(("autoscaling", "min") if auto is not None else ("nodes",))))
    elif len(nodes) > high:
        c.add(R.POOL_OVER, f"{label} {declared} but its nodeSelector matches {len(nodes)}",
              pool_path(cluster, pool, *(("autoscaling", "max") if auto is not None else ("nodes",))))
    return ready


def _check_pool(c: _Collector, fleet: Fleet, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> PoolSummary:
    want = expected_resources(pool)
    ready = _check_nodes(c, cluster, pool, nodes)
    gpu_nodes = [n for n in nodes if n.has_gpus]
    non_gpu = [n for n in nodes if not n.has_gpus]
    if non_gpu:
        c.add(R.NO_GPUS_ADVERTISED,
              f"{_plural(len(non_gpu), 'node')} matched by {_pool_label(pool)} "
              f"{_v(len(non_gpu), 'shows', 'show')} no NVIDIA GPU at all "
              f"(no GPU labels, no GPU resources): {node_names(non_gpu)}",
              pool_path(cluster, pool, "nodeSelector"),
              "the nodeSelector may match CPU nodes, or NFD has not labelled these nodes")
    _check_hardware(c, cluster, pool, gpu_nodes)
    _check_resources(c, cluster, pool, gpu_nodes, want)
    _check_driver(c, fleet, cluster, pool, gpu_nodes)
    _check_operands(c, cluster, pool, gpu_nodes)
    _check_mig(c, cluster, pool, gpu_nodes)
    _check_sharing(c, cluster, pool, gpu_nodes)
    advertised: dict[str, int] = defaultdict(int)
    for n in nodes:
        for name, count in n.allocatable.items():
            advertised[name] += count
    return PoolSummary(pool.name, pool.nodes, len(nodes), ready, pool.nodes * pool.gpu.count,
                       sum(n.gpu_count or 0 for n in nodes), want, dict(advertised))


def _condition_text(resource: OperatorResource) -> str:
    bad = [c for c in resource.status.conditions if (c.type == "Ready" and c.status != "True")
           or (c.type == "Error" and c.status == "True")]
    parts = [f"{c.type}={c.status}" + (f" {c.reason}" if c.reason else "") + (f": {c.message}" if c.message else "")
             for c in bad]
    return f" ({'; '.join(parts)})" if parts else ""


def _check_operator(c: _Collector, fleet: Fleet, cluster: Cluster, resources: Sequence[OperatorResource],
                    nodes: Sequence[NodeFacts], members: dict[str, list[Pool]], expect_policy: bool) -> None:
    policies = [r for r in resources if r.kind == "ClusterPolicy"]
    if expect_policy and not policies:
        c.add(R.OPERATOR_RESOURCE_MISSING, "the ClusterPolicy input holds no ClusterPolicy: the GPU Operator is "
                                           "not installed or the export is incomplete", ("operator",))
    for r in resources:
        state = r.status.state or "<no state>"
        if state == "ready":
            continue
        if state in ("ignored", "disabled"):
            c.add(R.OPERATOR_RESOURCE_MISSING, f"{r.kind} {r.metadata.name!r} is {state}{_condition_text(r)}",
                  ("operator",))
            continue
        rule = R.CLUSTERPOLICY_NOT_READY if r.kind == "ClusterPolicy" else R.NVIDIADRIVER_NOT_READY
        c.add(rule, f"{r.kind} {r.metadata.name!r} is {state}{_condition_text(r)}", ("operator",),
              "kubectl -n " + cluster.operator.namespace + " get pods; kubectl describe "
              + r.kind.lower() + " " + r.metadata.name)
    by_name = {n.name: n for n in nodes}
    for r in resources:
        if r.kind != "NVIDIADriver" or not r.spec.version:
            continue
        selected = [n for n in by_name.values() if matches(r.spec.node_selector, n.labels) and n.has_gpus]
        for pool in cluster.pools:
            version = effective_driver(fleet, cluster, pool).version
            if not version:
                continue
            in_pool = [n for n in selected if pool in members.get(n.name, [])]
            if in_pool and r.spec.version not in (version, version.split(".", 1)[0]):
                c.add(R.NVIDIADRIVER_VERSION_MISMATCH,
                      f"NVIDIADriver {r.metadata.name!r} installs {r.spec.version} on "
                      f"{_plural(len(in_pool), 'node')} of pool {pool.name!r}, which pins {version}: "
                      f"{node_names(in_pool)}",
                      pool_path(cluster, pool, "driver", "version"))


def audit_cluster(fleet: Fleet, cluster: Cluster, nodes: Sequence[NodeFacts],
                  resources: Sequence[OperatorResource] = (), expect_policy: bool = False) -> AuditResult:
    """Compare ``nodes`` (and operator resources) with ``cluster``'s spec; return findings and a pool summary.

    ``expect_policy`` says a ClusterPolicy export was given, so its absence is a finding.
    """
    c = _Collector(cluster)
    members: dict[str, list[Pool]] = {n.name: [p for p in cluster.pools if matches(p.node_selector, n.labels)]
                                      for n in nodes}
    unmatched = [n for n in nodes if not members[n.name] and n.has_gpus]
    if unmatched:
        c.add(R.UNMATCHED_GPU_NODE,
              f"{_plural(len(unmatched), 'node')} with NVIDIA GPUs {_v(len(unmatched), 'matches', 'match')} "
              f"no pool's nodeSelector: "
              f"{node_names(unmatched)}",
              ("pools",), "add a pool for them, or label them so an existing pool's nodeSelector matches",
              at_key=True)
    idle_outside = [n for n in unmatched if n.labelled_gpu and n.advertised == 0]
    if idle_outside:
        c.add(R.NO_GPUS_ADVERTISED,
              f"{_plural(len(idle_outside), 'node')} outside every pool {_v(len(idle_outside), 'carries', 'carry')} "
              f"GPU labels but {_v(len(idle_outside), 'advertises', 'advertise')} no allocatable GPUs: "
              f"{node_names(idle_outside)}",
              ("pools",),
              "check the driver, container-toolkit and device-plugin pods on these nodes "
              "(kubectl -n <operator namespace> get pods -o wide), and add a pool for them",
              at_key=True)
    overlaps: dict[tuple[int, ...], list[NodeFacts]] = defaultdict(list)
    for n in nodes:
        if len(members[n.name]) > 1:
            overlaps[tuple(cluster.pool_position(p) for p in members[n.name])].append(n)
    for indexes, ns in sorted(overlaps.items()):
        names = " and ".join(repr(cluster.pools[i].name) for i in indexes)
        for index in indexes[1:]:
            c.add(R.MULTI_POOL_NODE, f"{_plural(len(ns), 'node')} {_v(len(ns), 'matches', 'match')} "
                                     f"the nodeSelectors of pools {names}: "
                                     f"{node_names(ns)}",
                  ("pools", index, "nodeSelector"), "make the pools' nodeSelectors disjoint")
    summaries = [
        _check_pool(c, fleet, cluster, pool, [n for n in nodes if pool in members[n.name]]) for pool in cluster.pools
    ]
    _check_operator(c, fleet, cluster, resources, nodes, members, expect_policy)
    c.findings.extend(audit_hosts(cluster, nodes, members))
    gpu_nodes = sum(1 for n in nodes if n.has_gpus)
    return AuditResult(c.findings, summaries, gpu_nodes, len(unmatched))


def _advertised_text(summary: PoolSummary) -> str:
    want = summary.expected
    names = sorted(set(want.counts) | {k for k, v in summary.advertised.items() if v})
    if not names:
        return "0"
    parts = []
    for name in names:
        per_node = want.counts.get(name)
        expected = "?" if per_node is None and name in want.counts else str((per_node or 0) * summary.declared)
        short = name.removeprefix("nvidia.com/")
        parts.append(f"{summary.advertised.get(name, 0)}/{expected} {short}")
    return ", ".join(parts)


def summary_table(cluster: Cluster, result: AuditResult) -> str:
    """The per-pool summary as a text table: declared/matched/ready nodes, GPUs, advertised vs expected resources."""
    header = ("POOL", "NODES", "MATCHED", "READY", "GPUS", "GPUS SEEN", "ADVERTISED/EXPECTED")
    rows = [header] + [
        (s.pool, str(s.declared), str(s.matched), str(s.ready), str(s.gpus_declared), str(s.gpus_seen),
         one_line(_advertised_text(s)))
        for s in result.pools
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    lines = [f"cluster {cluster.name}: {result.gpu_nodes} GPU nodes, {result.unmatched} matched by no pool"]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1])
    return "\n".join(lines)
