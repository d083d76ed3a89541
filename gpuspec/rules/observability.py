"""Observability and label rules (GS7xx): telemetry and alerts on, node selectors that are ours and disjoint."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import observability as cat
from gpuspec.model.resolve import pool_path
from gpuspec.rules import labels_workload
from gpuspec.rules.base import Problem, Rule, RuleContext
from gpuspec.rules.overlap import overlapping_groups


class DcgmExporterOn(Rule):
    """The DCGM exporter runs (``operator.operands.dcgmExporter.enabled``)."""

    entry = cat.DCGM_EXPORTER_ON
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster with the DCGM exporter off."""
        for cluster in ctx.fleet.clusters:
            if not cluster.operator.operands.dcgm_exporter.enabled:
                yield Problem("the DCGM exporter is off", cluster.source_file,
                              ("operator", "operands", "dcgmExporter", "enabled"),
                              hint="set operator.operands.dcgmExporter.enabled: true")


class ServiceMonitorOn(Rule):
    """The DCGM exporter has a ServiceMonitor (``dcgmExporter.serviceMonitor``), so Prometheus scrapes it."""

    entry = cat.SERVICE_MONITOR_ON
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose running DCGM exporter has no ServiceMonitor."""
        for cluster in ctx.fleet.clusters:
            exporter = cluster.operator.operands.dcgm_exporter
            if exporter.enabled and not exporter.service_monitor:
                yield Problem("the DCGM exporter has no ServiceMonitor", cluster.source_file,
                              ("operator", "operands", "dcgmExporter", "serviceMonitor"),
                              hint="set operator.operands.dcgmExporter.serviceMonitor: true")


class AlertsOn(Rule):
    """gpuspec renders its GPU and operator alerts (``operator.operands.alerts``)."""

    entry = cat.ALERTS_ON
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster with alerts off."""
        for cluster in ctx.fleet.clusters:
            if not cluster.operator.operands.alerts:
                yield Problem("GPU alerts are off", cluster.source_file, ("operator", "operands", "alerts"),
                              hint="set operator.operands.alerts: true")


def label_domain(key: str) -> str | None:
    """The prefix (DNS domain) of a label key, or None for an unprefixed key."""
    return key.split("/", 1)[0].lower() if "/" in key else None


class SelectorsAvoidOwnedLabels(Rule):
    """Pool node selectors do not use labels that the GPU Operator, NFD or GFD own."""

    entry = cat.SELECTORS_AVOID_OWNED_LABELS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per node-selector key in a reserved label domain."""
        reserved = [str(d).lower() for d in self.param(ctx, "reserved_domains")]
        for cluster in ctx.fleet.clusters:
            for pool in cluster.pools:
                for key in pool.node_selector:
                    domain = label_domain(key)
                    if domain and any(domain == r or domain.endswith("." + r) for r in reserved):
                        yield Problem(
                            f"pool {pool.name!r} selects nodes by {key!r}, a label the GPU Operator/NFD/GFD own",
                            cluster.source_file, pool_path(cluster, pool, "nodeSelector", key), at_key=True,
                            hint="label the nodes at provisioning time with a key of your own domain",
                        )


def selectors_overlap(a: dict[str, str], b: dict[str, str], strict: bool) -> bool:
    """True when one node could match both selectors.

    Default: one selector is a subset of the other.  ``strict``: the selectors
    share no key with different values (a node carrying both sets of labels
    matches both).
    """
    items_a, items_b = set(a.items()), set(b.items())
    if items_a <= items_b or items_b <= items_a:
        return True
    if strict:
        return all(a[k] == b[k] for k in a.keys() & b.keys())
    return False


class SelectorsDisjoint(Rule):
    """No node can belong to two pools: pool node selectors exclude each other."""

    entry = cat.SELECTORS_DISJOINT
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield one problem per group of pools whose selectors overlap (at the group's second pool)."""
        strict = bool(self.param(ctx, "strict_disjoint"))
        for cluster in ctx.fleet.clusters:
            pools = cluster.pools
            for group in overlapping_groups([p.node_selector for p in pools], strict):
                names = [pools[i].name for i in group]
                if len(names) == 2:
                    message = f"pools {names[0]!r} and {names[1]!r} have node selectors one node can match"
                else:
                    shown = ", ".join(repr(n) for n in names[:5])
                    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
                    message = (f"{len(names)} pools have overlapping node selectors (a node can match more than "
                               f"one of them): {shown}{more}")
                yield Problem(
                    message, cluster.source_file, ("pools", group[1], "nodeSelector"), at_key=True,
                    hint="give each pool a label value of its own, e.g. <domain>/gpu-pool: <pool name>",
                )


#: Labels the kubelet sets on every node (Kubernetes well-known labels).
EVERY_NODE_LABELS = frozenset(
    {"kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/arch", "beta.kubernetes.io/os"}
)


class SelectorMatchesEveryNode(Rule):
    """A pool's node selector uses only labels every node has."""

    entry = cat.SELECTOR_MATCHES_EVERY_NODE
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per pool whose selector keys are all kubelet-set labels of every node."""
        for cluster in ctx.fleet.clusters:
            for pool in cluster.pools:
                keys = set(pool.node_selector)
                if keys and keys <= EVERY_NODE_LABELS:
                    yield Problem(
                        f"pool {pool.name!r} is selected only by {', '.join(sorted(keys))}, which every node carries: "
                        "CPU nodes and other pools' nodes match too",
                        cluster.source_file, pool_path(cluster, pool, "nodeSelector"), at_key=True,
                        hint="add a label of your own, e.g. <domain>/gpu-pool: <pool name>",
                    )


RULES: list[Rule] = [
    DcgmExporterOn(),
    ServiceMonitorOn(),
    AlertsOn(),
    SelectorsAvoidOwnedLabels(),
    SelectorsDisjoint(),
    SelectorMatchesEveryNode(),
    *labels_workload.RULES,
]
