"""Plan records for what the operator rolls that the spec-field records of a cluster do not already say (pure).

The records of :mod:`gpuspec.rollout.diff` are named after the spec field that changed.  This module asks the operator's
question instead -- which operand pod templates change (:mod:`gpuspec.rollout.podtemplates`) -- and adds a derived
``pod-templates`` record wherever that is more disruptive than the cluster's records claim: a driver DaemonSet whose
pod template changes reloads the driver on every node it runs on, whatever field caused it.
"""

from __future__ import annotations

from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.rollout.drivers import DriverLoss, cluster_driver_losses
from gpuspec.rollout.impact import reload_procedure
from gpuspec.rollout.podtemplates import Roll, cluster_inputs, rolls
from gpuspec.rollout.records import Change, ChangeKind, Disruption


def _claims(own: list[Change]) -> tuple[bool, set[str], bool]:
    """What the cluster's records already claim: a driver reload everywhere, on which pools, an operand restart."""
    reload = Disruption.DRIVER_RELOAD.rank
    everywhere = any(c.pool is None and c.disruption.rank >= reload for c in own)
    pools = {c.pool for c in own if c.pool is not None and c.disruption.rank >= reload}
    restart = any(c.disruption.rank >= Disruption.OPERAND_RESTART.rank for c in own)
    return everywhere, pools, restart


def _record(new: Cluster, pool: str | None, summary: str, disruption: Disruption, impact: str,
            details: tuple[str, ...], pools: tuple[str, ...] = ()) -> Change:
    spec_pool = new.pool(pool) if pool else None
    return Change(
        ChangeKind.POD_TEMPLATES, new.name, pool, summary, None, None, disruption, impact,
        "Revert the spec; the same DaemonSets roll again (and the same drivers reload).",
        new.rollout.wave, spec_pool.wave if spec_pool else None, bool(pool and pool == new.rollout.canary_pool),
        new.source_file, (), None, True, details, pools=() if pool else pools,
    )


def template_changes(base: Fleet, old: Cluster, head: Fleet, new: Cluster, own: list[Change]) -> list[Change]:
    """Derived records for the operand DaemonSets that roll from ``old`` to ``new`` beyond what ``own`` claims."""
    before, after = cluster_inputs(base, old), cluster_inputs(head, new)
    if before is None or after is None:
        return []
    found = rolls(before, after)
    if not found:
        return [_loss_record(new, loss) for loss in cluster_driver_losses(base, old, head, new)]
    everywhere, claimed, restart = _claims(own)
    existing = {p.name for p in old.pools}
    others = tuple(r.text() for r in found if not r.driver)
    removals = [_loss_record(new, loss) for loss in cluster_driver_losses(base, old, head, new)]
    reloads: list[Change] = []
    for roll in found:
        pools = [p for p in roll.reload_pools if p in existing and p not in claimed and not everywhere]
        if roll.driver and pools:
            reloads.append(_driver_record(new, roll, pools, (roll.text(), *(() if reloads else others))))
    if reloads or restart:
        return [*removals, *reloads]
    names = ", ".join(r.name for r in found)
    return [*removals, _record(
        new, None, f"operand DaemonSets roll: {names}", Disruption.OPERAND_RESTART,
        f"the pod templates of {names} change, so their pods restart on every node they run on (GPU workloads keep "
        "their GPUs; the driver is not reloaded)", tuple(r.text() for r in found),
    )]


def _loss_record(new: Cluster, loss: DriverLoss) -> Change:
    """A pool whose driver pods the change takes away at once (the record GS814 refuses, as the plan shows it)."""
    return _record(
        new, loss.pool, f"pool {loss.pool} loses its driver at once: {loss.why}", Disruption.DRIVER_LOST,
        loss.describe() + f" -- {loss.way_out} (GS814)", (), (loss.pool,),
    )


def _driver_record(new: Cluster, roll: Roll, pools: list[str], details: tuple[str, ...]) -> Change:
    single = len(roll.reload_pools) == 1 and roll.name.startswith("NVIDIADriver ") and "default" not in roll.name
    pool = pools[0] if single else None
    nodes = sum(p.nodes for p in new.pools if p.name in pools)
    where = None if single else f"{nodes} node(s) of pool(s) {', '.join(pools)}"
    procedure = reload_procedure(new, new.pool(pools[0]) if single else None, where)
    return _record(
        new, pool, f"driver reload: the pod template of {roll.name} changes ({', '.join(roll.changed)})",
        Disruption.DRIVER_RELOAD,
        "the upgrade controller replaces a node's driver pod when its driver DaemonSet's pod template changes: "
        + procedure, details, tuple(pools),
    )
