"""Apply time-boxed policy exceptions: drop the findings they cover, report expired and unused ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from gpuspec.catalogue.engine import EXCEPTION_EXPIRED, EXCEPTION_UNUSED
from gpuspec.findings import EXTERNAL, Finding, Suppressed
from gpuspec.policy.load import LocatedException, Policy
from gpuspec.spec.models import Fleet

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


def _scope_problem(fleet: Fleet, located: LocatedException) -> str | None:
    exc = located.exception
    if exc.cluster == ANY_CLUSTER:
        return None
    cluster = fleet.cluster(exc.cluster)
    if cluster is None:
        return f"cluster {exc.cluster!r} does not exist"
    if exc.pool is not None and cluster.pool(exc.pool) is None:
        return f"cluster {exc.cluster!r} has no pool {exc.pool!r}"
    return None


def apply_exceptions(
    fleet: Fleet, findings: Sequence[Finding], policy: Policy, today: date,
    suppressed: list[Suppressed] | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """Split ``findings`` into those no live exception covers, and the exception findings (expired, unused).

    The covered findings, with the exception's owner and reason, are appended to ``suppressed`` when given.
    """
    live = [e for e in policy.exceptions if e.exception.expires >= today]
    used: set[int] = set()
    kept: list[Finding] = []
    for finding in findings:
        scope = finding_scope(fleet, finding)
        hit = next((i for i, e in enumerate(live) if covers(e, finding, scope)), None)
        if hit is None:
            kept.append(finding)
        else:
            used.add(hit)
            if suppressed is not None:
                exc = live[hit].exception
                suppressed.append(Suppressed(finding, EXTERNAL, f"{exc.reason} (policy exception, owner {exc.owner}, "
                                                                f"expires {exc.expires.isoformat()})"))
    problems: list[Finding] = []
    for located in policy.exceptions:
        exc, place = located.exception, located.place
        rules = ", ".join(exc.rules)
        if exc.expires < today:
            problems.append(EXCEPTION_EXPIRED.finding(
                f"exception for {rules} in {exc.cluster} (owner {exc.owner}) expired on {exc.expires.isoformat()}",
                place.file, (*place.path, "expires"),
                hint="fix the findings it covered, or renew it with a new expiry date and reason",
            ))
    for index, located in enumerate(live):
        if index in used or not all(policy.enabled(r) for r in located.exception.rules):
            continue
        exc, place = located.exception, located.place
        why = _scope_problem(fleet, located)
        where = exc.cluster + (f"/{exc.pool}" if exc.pool else "")
        problems.append(EXCEPTION_UNUSED.finding(
            f"exception for {', '.join(exc.rules)} in {where} matches no finding" + (f": {why}" if why else ""),
            place.file, place.path,
            hint="remove the exception, or fix its rules/cluster/pool",
        ))
    return kept, problems
