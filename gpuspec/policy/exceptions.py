"""Scopes of time-boxed policy exceptions: which cluster and pool a finding belongs to, which exception covers it.

The decision what is accepted lives in :mod:`gpuspec.policy.acceptance`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuspec.findings import Finding
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import effective_driver, operator_version
from gpuspec.policy.load import LocatedException
from gpuspec.policy.pack_models import AcceptedValues

ANY_CLUSTER = "*"


@dataclass(frozen=True, slots=True)
class Scope:
    """Which cluster and pool a finding belongs to (None: fleet.yaml, or not inside a pool)."""

    cluster: str | None
    pool: str | None


def finding_scope(fleet: Fleet, finding: Finding) -> Scope:
    """The cluster and pool of a finding, from its file and document path."""
    cluster = fleet.cluster_from_file(finding.file) if finding.file is not None else None
    if cluster is None:
        return Scope(None, None)
    path = finding.path
    pool = None
    if len(path) >= 2 and path[0] == "pools" and isinstance(path[1], int) and 0 <= path[1] < len(cluster.pools):
        pool = cluster.pools[path[1]].name
    return Scope(cluster.name, pool)


def covers(located: LocatedException, finding: Finding, scope: Scope, fleet: Fleet | None = None) -> bool:
    """True when the exception covers the finding: rule, cluster and pool match and, with ``fleet``, the cluster
    (pool) runs the values the exception is bound to (:class:`~gpuspec.policy.pack_models.AcceptedValues`)."""
    exc = located.exception
    if finding.rule_id not in exc.rules:
        return False
    if exc.cluster != ANY_CLUSTER and exc.cluster != scope.cluster:
        return False
    if exc.pool is not None and exc.pool != scope.pool:
        return False
    return fleet is None or exc.values is None or runs_values(fleet, exc.values, scope)


def runs_values(fleet: Fleet, values: AcceptedValues, scope: Scope) -> bool:
    """True when the finding's cluster (and pool) runs every value of ``values`` (a fleet.yaml finding: never)."""
    cluster = fleet.cluster(scope.cluster) if scope.cluster is not None else None
    if cluster is None:
        return False
    if values.operator is not None and _release(operator_version(fleet, cluster)) != _release(values.operator):
        return False
    if values.kubernetes is not None and cluster.kubernetes.version != values.kubernetes:
        return False
    if values.driver_branch is not None:
        pools = [p for p in cluster.pools if scope.pool is None or p.name == scope.pool]
        running = {effective_driver(fleet, cluster, p).branch for p in pools if p.driver.source.value != "host"}
        if running != {values.driver_branch}:
            return False
    return True


def _release(version: str | None) -> str | None:
    return None if version is None else version if version.startswith("v") else f"v{version}"


def scope_problem(fleet: Fleet, located: LocatedException) -> str | None:
    """Why the exception's cluster or pool does not exist in ``fleet`` (None when it does, or for ``*``)."""
    exc = located.exception
    if exc.cluster == ANY_CLUSTER:
        return None
    cluster = fleet.cluster(exc.cluster)
    if cluster is None:
        return f"cluster {exc.cluster!r} does not exist"
    if exc.pool is not None and cluster.pool(exc.pool) is None:
        return f"cluster {exc.cluster!r} has no pool {exc.pool!r}"
    return None
