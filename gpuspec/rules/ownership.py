"""Ownership rules (GS610–GS612): production clusters have owners, ownership names declared teams, the owners of
production clusters can be paged and bound."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpuspec.catalogue import ownership as cat
from gpuspec.findings import DocPath
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.ownership import ROLES, team_index
from gpuspec.model.resolve import cluster_owners, pool_owner, pool_path
from gpuspec.rules.base import Problem, Rule, RuleContext


def is_production(cluster: Cluster, labels: Mapping[str, object]) -> bool:
    """Whether ``cluster`` carries every one of ``labels`` (an empty mapping marks every cluster)."""
    return all(cluster.metadata.labels.get(k) == str(v) for k, v in labels.items())


def _owner_path(cluster: Cluster, role: str) -> DocPath:
    """Where a cluster's owner of ``role`` is (or would be) written."""
    if cluster.ownership is not None and cluster.ownership.get_role(role) is not None:
        return ("ownership", role)
    return ("ownership",) if cluster.ownership is not None else ("metadata", "name")


def _team_uses(fleet: Fleet) -> Iterator[tuple[str, str, DocPath, str]]:
    """Every team name the spec uses: (team, file, doc path, where in words)."""
    fleet_owners = fleet.settings.ownership
    for role in ROLES:
        name = fleet_owners.get_role(role)
        if name:
            yield name, fleet.settings_file, ("ownership", role), f"fleet ownership.{role}"
    for cluster in fleet.clusters:
        if cluster.ownership is not None:
            for role in ROLES:
                name = cluster.ownership.get_role(role)
                if name:
                    yield name, cluster.source_file, ("ownership", role), f"{cluster.name!r} ownership.{role}"
        for pool in cluster.pools:
            if pool.ownership.hardware:
                yield (
                    pool.ownership.hardware,
                    cluster.source_file,
                    pool_path(cluster, pool, "ownership", "hardware"),
                    f"pool {pool.name!r} of {cluster.name!r}",
                )
        for index, tenant in enumerate(cluster.tenants):
            if tenant.team:
                yield tenant.team, cluster.source_file, ("tenants", index, "team"), f"tenant {tenant.name!r}"


class ProductionHasOwners(Rule):
    """A production cluster has an owner team for each role the policy requires."""

    entry = cat.PRODUCTION_HAS_OWNERS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per production cluster and required role without an owner."""
        labels = dict(self.param(ctx, "production_labels"))
        roles = [r for r in self.param(ctx, "roles") if r in ROLES]
        for cluster in ctx.fleet.clusters:
            if not is_production(cluster, labels):
                continue
            owners = cluster_owners(ctx.fleet, cluster)
            for role in roles:
                if owners.get(role) is None:
                    yield Problem(
                        f"production cluster {cluster.name!r} has no {role} owner",
                        cluster.source_file,
                        _owner_path(cluster, role),
                        hint=f"set ownership.{role} to a team from fleet.yaml's teams (here, or fleet-wide in "
                        "fleet.yaml)",
                    )


class OwnerTeamDeclared(Rule):
    """Every team named in ``ownership`` and ``tenants[].team`` is declared in fleet.yaml's ``teams``."""

    entry = cat.OWNER_TEAM_DECLARED

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per use of an undeclared team name."""
        index = team_index(ctx.fleet.settings.teams)
        for name, file, path, where in _team_uses(ctx.fleet):
            if name not in index:
                known = ", ".join(sorted(index)) or "none"
                yield Problem(
                    f"{where} names team {name!r}, which fleet.yaml's teams do not declare",
                    file,
                    path,
                    hint=f"declared teams: {known}",
                )


class OwnersReachable(Rule):
    """The platform and hardware owners of a production cluster have an on-call rotation and groups."""

    entry = cat.OWNERS_REACHABLE

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per owner team of a production cluster without ``onCall`` or ``groups``."""
        labels = dict(self.param(ctx, "production_labels"))
        index = team_index(ctx.fleet.settings.teams)
        reported: set[str] = set()
        production = [c for c in ctx.fleet.clusters if is_production(c, labels)]
        for cluster in production:
            owners = cluster_owners(ctx.fleet, cluster)
            named = [("platform", owners.platform), ("hardware", owners.hardware)]
            named += [(f"hardware of pool {p.name!r}", pool_owner(ctx.fleet, cluster, p)) for p in cluster.pools]
            for role, name in named:
                team = index.get(name or "")
                if team is None or team.name in reported:
                    continue
                missing = [what for what, ok in (("onCall", team.on_call), ("groups", team.groups)) if not ok]
                if missing:
                    reported.add(team.name)
                    position = ctx.fleet.settings.teams.index(team)
                    yield Problem(
                        f"team {team.name!r} owns production cluster {cluster.name!r} ({role}) but has no "
                        + " and no ".join(missing),
                        ctx.fleet.settings_file,
                        ("teams", position, "name"),
                        hint="set onCall (the rotation that answers pages) and groups (who gets the operations role)",
                    )


RULES: list[Rule] = [ProductionHasOwners(), OwnerTeamDeclared(), OwnersReachable()]
