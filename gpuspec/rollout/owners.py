"""Who owns what a plan changes: per affected cluster its owner teams, and the hardware team of each changed pool
(pure; from the head fleet, else the base fleet for a removed cluster)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuspec.model.fleet import Fleet
from gpuspec.model.ownership import team_index
from gpuspec.model.resolve import cluster_owners, pool_owner
from gpuspec.rollout.records import Change


def _team(fleet: Fleet, name: str | None) -> dict[str, str] | None:
    if not name:
        return None
    team = team_index(fleet.settings.teams).get(name)
    return {
        "team": name,
        "on_call": (team.on_call or "") if team else "",
        "contact": (team.contact or "") if team else "",
    }


def affected_owners(head: Fleet, base: Fleet, changes: Sequence[Change]) -> dict[str, dict[str, Any]]:
    """Cluster name → ``{"platform", "hardware": {team, on_call, contact} | None, "pools": {pool: team}}`` for
    every cluster the changes touch (pools: the changed pools whose hardware team differs from the cluster's)."""
    out: dict[str, dict[str, Any]] = {}
    for change in changes:
        if not change.cluster:
            continue
        fleet = head if head.cluster(change.cluster) is not None else base
        cluster = fleet.cluster(change.cluster)
        if cluster is None:
            continue
        owners = cluster_owners(fleet, cluster)
        entry = out.setdefault(
            change.cluster,
            {
                "platform": _team(fleet, owners.platform),
                "hardware": _team(fleet, owners.hardware),
                "pools": {},
            },
        )
        pool = cluster.pool(change.pool) if change.pool else None
        if pool is not None:
            team = pool_owner(fleet, cluster, pool)
            if team and team != owners.hardware:
                entry["pools"][pool.name] = _team(fleet, team)
    return out


def owners_text(entry: dict[str, Any]) -> str:
    """One line naming a cluster's owners: ``platform gpu-platform (on call: …), hardware …; pool p: team``."""
    parts = []
    for role in ("platform", "hardware"):
        team = entry.get(role)
        if team:
            parts.append(f"{role} {team['team']}" + (f" (on call: {team['on_call']})" if team["on_call"] else ""))
        else:
            parts.append(f"{role}: no owner")
    text = ", ".join(parts)
    pools = [f"pool {name}: {team['team']}" for name, team in sorted(entry.get("pools", {}).items()) if team]
    return text + ("; " + "; ".join(pools) if pools else "")
