"""The handover facts of who owns a cluster: owner teams per role and pool, tenant teams, alert receivers and
the Alertmanager route that delivers the cluster's alerts to them (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuspec.model.ownership import ROLES, Team, team_index
from gpuspec.model.resolve import cluster_owners, pool_owner
from gpuspec.render.alerts import alert_owner, split_pools
from gpuspec.render.context import ClusterContext

#: What each ownership role covers, as the documents say it.
ROLE_TEXT: Mapping[str, str] = {
    "platform": "GPU Operator stack: the operator namespace, ClusterPolicy and NVIDIADrivers (through git), "
    "reviews of the cluster's spec, the operator alerts",
    "hardware": "GPU nodes: drivers on the nodes, firmware, ECC and XID faults, the hardware alerts",
    "observability": "metrics, alert rules and dashboards of the GPUs",
}


def team_facts(team: Team | None, name: str | None) -> dict[str, Any]:
    """One team as the documents show it (``known`` false when the spec names an undeclared team)."""
    if team is None:
        return {
            "name": name or "",
            "known": False,
            "contact": "",
            "on_call": "",
            "escalation": [],
            "groups": [],
            "code_owners": [],
            "receiver": "",
        }
    return {
        "name": team.name,
        "known": True,
        "description": team.description or "",
        "contact": team.contact or "",
        "on_call": team.on_call or "",
        "escalation": list(team.escalation),
        "groups": list(team.groups),
        "code_owners": list(team.code_owners),
        "receiver": team.receiver or "",
    }


def ownership_facts(ctx: ClusterContext) -> dict[str, Any]:
    """Owner teams of the cluster per role, pools whose hardware owner differs, and the tenants' teams."""
    index = team_index(ctx.fleet.settings.teams)
    owners = cluster_owners(ctx.fleet, ctx.cluster)
    roles = []
    for role in ROLES:
        name = owners.get(role)
        roles.append(
            {
                "role": role,
                "covers": ROLE_TEXT[role],
                "team": team_facts(index.get(name or ""), name),
                "owned": bool(name),
            }
        )
    pools = []
    for pool in ctx.cluster.pools:
        name = pool_owner(ctx.fleet, ctx.cluster, pool)
        if name != owners.hardware:
            pools.append({"pool": pool.name, "team": team_facts(index.get(name or ""), name)})
    tenants = [
        {"tenant": t.name, "namespaces": list(t.namespaces), "team": team_facts(index.get(t.team or ""), t.team)}
        for t in ctx.cluster.tenants
    ]
    return {"roles": roles, "pools": pools, "tenants": tenants, "unowned": [r["role"] for r in roles if not r["owned"]]}


def receiver_of(ctx: ClusterContext, team: str) -> str:
    """The Alertmanager receiver of ``team`` (empty when it names none or is undeclared)."""
    found = team_index(ctx.fleet.settings.teams).get(team)
    return (found.receiver or "") if found is not None else ""


def alertmanager_route(ctx: ClusterContext, rules: Sequence[Mapping[str, Any]]) -> list[str]:
    """The lines of an Alertmanager route subtree that sends this cluster's alerts to the owners' receivers
    (empty when no owner team names a receiver)."""
    teams = sorted({str(r["team"]) for r in rules if r["team"]})
    routed = [(t, receiver) for t in teams if (receiver := receiver_of(ctx, t))]
    if not routed:
        return []
    lines = [
        "routes:",
        f"  - matchers: ['cluster=\"{ctx.name}\"']",
        "    group_by: [alertname, cluster, pool]",
        "    routes:",
    ]
    for team, receiver in routed:
        lines += [f"      - matchers: ['team=\"{team}\"']", f"        receiver: {receiver}"]
    return lines


def alert_scope(ctx: ClusterContext, alert: str, pool: str) -> str:
    """Which pools' nodes a rendered alert covers: its pool, every pool, or every pool but those split off."""
    if pool:
        return pool
    split = [p.name for p in split_pools(ctx)]
    if alert_owner(alert) == "hardware" and split:
        return "all except " + ", ".join(split)
    return "all"
