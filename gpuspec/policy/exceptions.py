"""Scopes of time-boxed policy exceptions: which cluster and pool a finding belongs to, which exception covers it.

The decision what is accepted lives in :mod:`gpuspec.policy.acceptance`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuspec.findings import Finding
from gpuspec.model.models import Fleet
from gpuspec.policy.load import LocatedException

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


def covers(located: LocatedException, finding: Finding, scope: Scope) -> bool:
    """True when the exception covers the finding (rule, cluster and pool match)."""
    exc = located.exception
    if finding.rule_id not in exc.rules:
        return False
    if exc.cluster != ANY_CLUSTER and exc.cluster != scope.cluster:
        return False
    return exc.pool is None or exc.pool == scope.pool


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
