"""How many GPU nodes a change takes out of service: what the upgrade planner minimises among equally short plans.

A node counts once per change for every pool a record drains: a driver reload or a MIG repartition (the upgrade
controller or mig-manager drains it node by node under the upgrade policy), and a driver lost at once (the whole
pool is drained before the change syncs, which weighs more: it is counted first).  Operand restarts keep GPU pods
running and count nothing."""

from __future__ import annotations

from collections.abc import Iterable

from gpuspec.model.fleet import Fleet
from gpuspec.rollout.impact import managed_pools
from gpuspec.rollout.records import Change, Disruption


def drained_pools(head: Fleet, base: Fleet, changes: Iterable[Change]) -> dict[tuple[str, str], int]:
    """(cluster, pool) → nodes, for every pool whose nodes the change drains (a pool counted once however many
    records drain it); pools are read in ``head``, or in ``base`` for a pool the change removes."""
    out: dict[tuple[str, str], int] = {}
    for change in changes:
        if change.cluster is None or change.disruption.rank < Disruption.DRIVER_RELOAD.rank:
            continue
        cluster = head.cluster(change.cluster) or base.cluster(change.cluster)
        if cluster is None:
            continue
        if change.pool is not None:
            names = [change.pool]
        elif change.pools:
            names = list(change.pools)
        else:
            names = [p.name for p in managed_pools(cluster)]
        for name in names:
            pool = cluster.pool(name)
            if pool is None:
                old = base.cluster(change.cluster)
                pool = old.pool(name) if old is not None else None
            if pool is not None:
                out[(change.cluster, name)] = pool.nodes
    return out


def drain_cost(head: Fleet, base: Fleet, changes: Iterable[Change]) -> tuple[int, int]:
    """What the change costs in drained GPU nodes, to compare changes by: first the nodes whose driver goes at
    once (a whole pool drained before the change syncs), then every node it drains (each once)."""
    records = list(changes)
    lost = [c for c in records if c.disruption is Disruption.DRIVER_LOST]
    return sum(drained_pools(head, base, lost).values()), sum(drained_pools(head, base, records).values())
