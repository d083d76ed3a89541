"""Reference and consistency checks on a typed fleet (the GS110-GS115 entries of the validate stage)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from gpuspec.catalogue.entry import Entry
from gpuspec.catalogue.validate import (
    DUPLICATE_NAME,
    FILE_NAME_MISMATCH,
    MIG_LAYOUT_CHOICE,
    SHARING_SETTINGS,
    UNRESOLVED_REFERENCE,
    VERSION_XOR_CHANNEL,
)
from gpuspec.findings import DocPath, Finding
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import MigStrategy, SharingMode

#: PriorityClasses every Kubernetes cluster has.
BUILTIN_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})



#: Most names a hint lists (a fleet may have thousands).
_MAX_NAMES = 10


def _names(names: set[str]) -> str:
    """Up to :data:`_MAX_NAMES` of ``names``, sorted, and how many more there are."""
    shown = sorted(names)[:_MAX_NAMES]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")

def _error(entry: Entry, message: str, file: str, path: DocPath, hint: str | None = None) -> Finding:
    return entry.finding(message, file, path, hint)


def _duplicates(names: Iterable[str], file: str, path: DocPath, what: str, key: str = "name") -> Iterator[Finding]:
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            yield _error(DUPLICATE_NAME, f"{what} {name!r} is defined more than once", file, (*path, index, key))
        seen.add(name)


def _fleet_settings(fleet: Fleet, policy_packs: set[str] | None) -> Iterator[Finding]:
    settings, file = fleet.settings, fleet.settings_file
    yield from _duplicates((m.name for m in settings.mirrors), file, ("mirrors",), "mirror")
    yield from _duplicates((c.name for c in settings.channels), file, ("channels",), "channel")
    if policy_packs is not None:
        for index, pack in enumerate(settings.policy.packs):
            if pack not in policy_packs:
                yield _error(UNRESOLVED_REFERENCE, f"policy pack {pack!r} does not exist", file,
                             ("policy", "packs", index),
                             f"packs found: {_names(policy_packs) or 'none'}")


def _cluster(fleet: Fleet, cluster: Cluster) -> Iterator[Finding]:
    file = cluster.source_file
    stem = Path(file).stem
    if cluster.name != stem:
        yield _error(FILE_NAME_MISMATCH, f"cluster name {cluster.name!r} differs from its file name {stem!r}",
                     file, ("metadata", "name"), f"rename the file to {cluster.name}.yaml or the cluster to {stem}")
    op = cluster.operator
    if (op.version is None) == (op.channel is None):
        yield VERSION_XOR_CHANNEL.finding("set exactly one of operator.version and operator.channel",
                                          file, ("operator",), at_key=True)
    if op.channel is not None and fleet.channel(op.channel) is None:
        yield _error(UNRESOLVED_REFERENCE, f"channel {op.channel!r} is not defined in fleet.yaml", file,
                     ("operator", "channel"))
    if cluster.mirror is not None and fleet.mirror(cluster.mirror) is None:
        yield _error(UNRESOLVED_REFERENCE, f"mirror {cluster.mirror!r} is not defined in fleet.yaml", file,
                     ("mirror",))
    pools = {p.name for p in cluster.pools}
    yield from _duplicates((p.name for p in cluster.pools), file, ("pools",), "pool")
    yield from _duplicates((t.name for t in cluster.tenants), file, ("tenants",), "tenant")
    yield from _duplicates((c.name for c in cluster.priority_classes), file, ("priorityClasses",), "PriorityClass")
    canary = cluster.rollout.canary_pool
    if canary is not None and canary not in pools:
        yield _error(UNRESOLVED_REFERENCE, f"canary pool {canary!r} is not a pool of this cluster", file,
                     ("rollout", "canaryPool"), f"pools: {_names(pools)}")
    classes = {c.name for c in cluster.priority_classes} | BUILTIN_PRIORITY_CLASSES
    namespaces: dict[str, str] = {}
    for t_index, tenant in enumerate(cluster.tenants):
        for p_index, pool in enumerate(tenant.pools):
            if pool not in pools:
                yield _error(UNRESOLVED_REFERENCE, f"tenant {tenant.name!r} refers to unknown pool {pool!r}", file,
                             ("tenants", t_index, "pools", p_index), f"pools: {_names(pools)}")
        if tenant.priority_class is not None and tenant.priority_class not in classes:
            yield _error(UNRESOLVED_REFERENCE,
                         f"PriorityClass {tenant.priority_class!r} is not declared in priorityClasses", file,
                         ("tenants", t_index, "priorityClass"))
        for n_index, namespace in enumerate(tenant.namespaces):
            owner = namespaces.setdefault(namespace, tenant.name)
            if owner != tenant.name:
                yield _error(DUPLICATE_NAME, f"namespace {namespace!r} belongs to tenant {owner!r} already", file,
                             ("tenants", t_index, "namespaces", n_index))
            if namespace == cluster.operator.namespace:
                yield _error(DUPLICATE_NAME, f"namespace {namespace!r} is the operator namespace", file,
                             ("tenants", t_index, "namespaces", n_index))
    for p_index, pool_spec in enumerate(cluster.pools):
        mig = pool_spec.mig
        if mig.strategy is MigStrategy.NONE and (mig.layout or mig.custom):
            yield _error(MIG_LAYOUT_CHOICE, "a MIG layout is set but mig.strategy is none", file,
                         ("pools", p_index, "mig", "strategy"), "set strategy single or mixed, or drop the layout")
        if mig.strategy is not MigStrategy.NONE and (mig.layout is None) == (mig.custom is None):
            yield _error(MIG_LAYOUT_CHOICE, "set exactly one of mig.layout and mig.custom", file,
                         ("pools", p_index, "mig"))
        sharing = pool_spec.sharing
        if sharing.mode is SharingMode.NONE and sharing.replicas > 1:
            yield _error(SHARING_SETTINGS, "sharing.replicas is set but sharing.mode is none", file,
                         ("pools", p_index, "sharing", "replicas"))
        if sharing.mode is not SharingMode.NONE and sharing.replicas < 2:
            yield _error(SHARING_SETTINGS, f"sharing mode {sharing.mode.value} needs replicas of 2 or more", file,
                         ("pools", p_index, "sharing", "replicas"))


def reference_findings(fleet: Fleet, policy_packs: set[str] | None = None) -> list[Finding]:
    """Findings for names that clash, references that do not resolve and settings that contradict each other.

    ``policy_packs`` is the set of pack names available in policies/; None skips that check.
    """
    findings = list(_fleet_settings(fleet, policy_packs))
    for cluster in fleet.clusters:
        findings.extend(_cluster(fleet, cluster))
    return findings
