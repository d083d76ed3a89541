"""The node-by-node migration of hand-configured GPU nodes onto the spec, pool by pool (pure; runs nothing).

For every node of the cluster that is configured by hand today (a host-installed driver, hand-set labels or
labels that switch an operand off, a device plugin outside the operator, a MIG config label or taint the pool
does not have, or a node of a `managed: false` pool), the exact `kubectl` commands that move it onto its pool and
a one-step rollback (:mod:`gpuspec.audit.migrate_steps`).

Batches are per pool: never more nodes of a pool at once than its ``maxUnavailable`` (the rollout's value scaled
over the pool's GPU nodes, rounded up as the upgrade controller rounds), less the pool's nodes that are out of
service already (not ready, cordoned, a driver upgrade or MIG reconfiguration failed or under way), and never a
whole pool.  Every node audit flags (:mod:`gpuspec.audit.node_flags`) gets its steps or is listed as left out,
with the reason: a condition the migration must not go on top of, a pool with no room, or nothing of the node
to migrate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gpuspec.audit.facts import NodeFacts
from gpuspec.audit.migrate_steps import NodeMigration, drain_command, migration_reasons, node_migration
from gpuspec.audit.node_flags import Flag, node_flags
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.cluster_specs import DrainSpec
from gpuspec.model.types import IntOrPercent

__all__ = ["LeftOut", "MigrationPlan", "NodeMigration", "PoolBudget", "drain_command", "format_plan",
           "migration_plan", "pool_budget", "scaled_max_unavailable"]


@dataclass(frozen=True)
class LeftOut:
    """A node audit flags or that is configured by hand, which this plan does not migrate, and why."""

    node: str
    pool: str
    why: str


@dataclass(frozen=True)
class PoolBudget:
    """How many nodes of one pool may be migrated at once, and how that was derived."""

    pool: str
    nodes: int
    size: int
    rule: str


@dataclass(frozen=True)
class Batch:
    """Nodes of one pool migrated together."""

    pool: str
    nodes: tuple[NodeMigration, ...]


@dataclass
class MigrationPlan:
    """Every node to migrate in per-pool batches, the pools' budgets, and the nodes left out."""

    cluster: str
    budgets: list[PoolBudget] = field(default_factory=list)
    batches: list[Batch] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    @property
    def nodes(self) -> int:
        """How many nodes the plan migrates."""
        return sum(len(b.nodes) for b in self.batches)


def scaled_max_unavailable(value: IntOrPercent, total: int) -> int:
    """``maxUnavailable`` as the upgrade controller scales it over ``total`` nodes (a percentage rounds up), at
    least 1."""
    return max(1, _scaled(value, total))


def _scaled(value: IntOrPercent, total: int) -> int:
    if isinstance(value, int):
        return value
    return math.ceil(float(int(value.rstrip("%"))) * float(total) / 100)


def pool_budget(pool: Pool, value: IntOrPercent, total: int, out_of_service: Sequence[str]) -> PoolBudget:
    """At most how many of the pool's ``total`` GPU nodes may be taken at once: ``maxUnavailable`` over the pool,
    never the whole pool, less the nodes already out of service."""
    limit = _scaled(value, total)
    rule = f"maxUnavailable {value} of {total} GPU node(s) = {limit}" + (
        ", rounded up" if isinstance(value, str) and limit * 100 != int(value.rstrip('%')) * total else "")
    size = min(limit, total - 1)
    if size < limit:
        rule += f"; never all {total}" if total > 1 else "; it is the pool's only node"
    if out_of_service:
        rule += f"; less {len(out_of_service)} out of service ({', '.join(out_of_service)})"
    return PoolBudget(pool.name, total, max(0, size - len(out_of_service)), rule)


def _pool_resource(pool: Pool) -> str:
    from gpuspec.audit.expect import expected_resources

    counts = expected_resources(pool).counts
    return sorted(counts)[0] if counts else "nvidia.com/gpu"


def _listed(flags: Sequence[Flag]) -> str:
    return "; ".join(str(f) for f in flags)


def migration_plan(cluster: Cluster, nodes: Sequence[NodeFacts], members: dict[str, list[Pool]], image: str,
                   pinned: Callable[[Pool], str | None] | None = None) -> MigrationPlan:
    """The per-pool batches of hand-configured nodes of ``cluster`` with their procedures, and every node left out.

    ``members`` maps a node to the pools whose nodeSelector matches it (a GPU node of no pool is listed in
    ``unmatched``); ``pinned`` gives the driver version a pool expects (for audit's driver check).
    """
    rollout = cluster.rollout
    drain = rollout.drain or DrainSpec()
    plan = MigrationPlan(cluster.name)
    canary = rollout.canary_pool
    order = sorted(cluster.pools, key=lambda p: (0 if p.name == canary else 1, p.wave, p.name))
    plan.unmatched = sorted(n.name for n in nodes if not members.get(n.name) and n.has_gpus)
    for pool in order:
        in_pool = sorted((n for n in nodes if members.get(n.name) and members[n.name][0] is pool and n.has_gpus),
                         key=lambda n: n.name)
        if not in_pool:
            continue
        flags = {n.name: node_flags(n, cluster, members[n.name], pinned(pool) if pinned else None) for n in in_pool}
        down = [n.name for n in in_pool if any(f.unavailable for f in flags[n.name])]
        budget = pool_budget(pool, rollout.max_unavailable, len(in_pool), down)
        plan.budgets.append(budget)
        todo: list[NodeMigration] = []
        for node in in_pool:
            node_flags_ = flags[node.name]
            reasons = migration_reasons(node, cluster, pool)
            blocking = [f for f in node_flags_ if f.blocks]
            if blocking:
                plan.left_out.append(LeftOut(node.name, pool.name, f"{_listed(blocking)}: fix this first, then run "
                                                                   "gpuspec migrate again"))
                continue
            if not reasons:
                if node_flags_:
                    plan.left_out.append(LeftOut(node.name, pool.name, f"{_listed(node_flags_)}: nothing of the node "
                                                                       "is configured by hand, so there is nothing to "
                                                                       "migrate; see gpuspec audit"))
                continue
            notes = [str(f) for f in node_flags_ if not f.handled]
            todo.append(node_migration(node, cluster, pool, reasons, _pool_resource(pool), image, drain, notes))
        if budget.size <= 0:
            plan.left_out += [LeftOut(m.node, pool.name, _waits(pool, budget, down)) for m in todo]
            continue
        plan.batches += [Batch(pool.name, tuple(todo[i:i + budget.size])) for i in range(0, len(todo), budget.size)]
    return plan


def _waits(pool: Pool, budget: PoolBudget, down: Sequence[str]) -> str:
    """Why a node to migrate waits: its pool has no room to take it out now."""
    if down:
        what = (f"migrate it once {', '.join(down)} {'is' if len(down) == 1 else 'are'} back in service "
                "(audit says why each is out)")
    elif budget.nodes == 1:
        what = ("it is the pool's only node, and draining it takes the whole pool down: add a node to the pool "
                "first, or migrate it by hand in a maintenance window that allows the pool's outage")
    else:
        what = "raise rollout.maxUnavailable, or add nodes to the pool"
    return f"waits: pool {pool.name} has no room to take a node out ({budget.rule}); {what}"


def _node_text(m: NodeMigration, markdown: bool) -> list[str]:
    lines: list[str] = []
    if markdown:
        lines += [f"#### Node `{m.node}` (pool `{m.pool}`)", "", "Why: " + "; ".join(m.reasons) + ".", ""]
        if m.notes:
            lines += ["Audit also says (left as it is): " + "; ".join(m.notes) + ".", ""]
        for number, step in enumerate(m.steps, start=1):
            lines.append(f"{number}. {step.title}" + (" — **host step, on the node itself**" if step.host else ""))
            lines += ["", "   ```sh", *(f"   {c}" for c in step.commands), "   ```", ""]
        lines += ["Rollback (one step; every label the procedure touched restored as it was):", "", "```sh",
                  m.rollback, "```", ""]
        return lines
    lines += [f"  node {m.node} (pool {m.pool})", "    why: " + "; ".join(m.reasons)]
    if m.notes:
        lines.append("    audit also says (left as it is): " + "; ".join(m.notes))
    for number, step in enumerate(m.steps, start=1):
        lines.append(f"    {number}. {step.title}" + (" [HOST STEP: run on the node]" if step.host else ""))
        lines += [f"       {c}" for c in step.commands]
    lines += ["    rollback:", f"       {m.rollback}", ""]
    return lines


def format_plan(plan: MigrationPlan, markdown: bool = False) -> str:
    """The plan as text (``markdown`` False) or as a Markdown section."""
    head = (f"{plan.nodes} node(s) of cluster {plan.cluster} to migrate, pool by pool, in batches within each "
            "pool's maxUnavailable and never a whole pool. gpuspec runs nothing: run each batch, check it, then "
            "the next.")
    lines = [f"## Node-by-node migration: cluster `{plan.cluster}`", "", head, ""] if markdown else [head, ""]
    for b in plan.budgets:
        at_once = f"at most {b.size} node(s) at a time" if b.size > 0 else "no node now"
        text = f"pool {b.pool}: {at_once} ({b.rule})"
        lines.append(f"- {text}" if markdown else text)
    lines.append("")
    if not plan.batches:
        lines += ["Nothing to migrate now: every node of a pool is configured by the operator and the spec, or "
                  "left out below.", ""]
    for index, batch in enumerate(plan.batches, start=1):
        names = ", ".join(m.node for m in batch.nodes)
        lines += ([f"### Batch {index} (pool `{batch.pool}`): {names}", ""] if markdown
                  else [f"batch {index} (pool {batch.pool}): {names}"])
        for m in batch.nodes:
            lines += _node_text(m, markdown)
    if plan.left_out:
        title = f"Left out ({len(plan.left_out)} node(s)), because:"
        lines += ([f"### {title}", ""] if markdown else [title])
        for item in plan.left_out:
            lines.append(f"- `{item.node}` (pool `{item.pool}`): {item.why}" if markdown
                         else f"  node {item.node} (pool {item.pool}): {item.why}")
        lines.append("")
    if plan.unmatched:
        text = "GPU nodes matched by no pool (not migrated; add a pool first): " + ", ".join(plan.unmatched)
        lines += ["", text] if markdown else [text]
    return "\n".join(lines).rstrip() + "\n"
