"""What a cluster accepts, as plain records: ``deviations`` (every format), ``deviations.yaml`` and the handover.

Three kinds of record, in this order:

* a **finding** an exception accepts that validate knows (the support matrix): rule, message, spec path;
* an **exception rule** whose findings validate does not see (air-gap, security, rollout, observability and
  custom rules run in lint only), or a matrix rule of a live exception with no finding in the cluster today:
  the rule, its title and the exception's scope, so an accepted GS401 is as visible as an accepted GS202;
* an **inline suppression** (``# gpuspec: ignore GS604 -- reason``) in the cluster's file: the rule, the line it
  covers and the reason (no owner, no expiry).

Every record carries ``kind`` (``exception`` or ``suppression``), ``scope``, ``reason`` and ``acceptedBy`` (the
file and the exception's place, or the directive's line); exceptions add ``owner`` and ``expires``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from typing import Any

from gpuspec.catalogue import CATALOGUE
from gpuspec.loader.files import repository_path
from gpuspec.model.cluster import Cluster
from gpuspec.policy.acceptance import MATRIX_STAGE, Accepted, inline_refusal
from gpuspec.policy.exceptions import ANY_CLUSTER
from gpuspec.policy.load import LocatedException, Place
from gpuspec.policy.suppress import Suppression, read_suppressions

EXCEPTION = "exception"
SUPPRESSION = "suppression"


def exception_scope(located: LocatedException, cluster: str) -> str:
    """The scope of an exception in words, as seen from ``cluster``: ``cluster c1``, ``pool a of cluster c1``."""
    exc = located.exception
    where = "every cluster" if exc.cluster == ANY_CLUSTER else f"cluster {cluster}"
    return f"pool {exc.pool} of {where}" if exc.pool else where


def applies_to(located: LocatedException, cluster: str) -> bool:
    """True when the exception's scope takes in ``cluster`` (its own name, or ``*``)."""
    return located.exception.cluster in (cluster, ANY_CLUSTER)


def _place(place: Place) -> dict[str, str]:
    return {"file": repository_path(place.file), "path": ".".join(str(p) for p in place.path)}


def _title(rule_id: str, custom: dict[str, str]) -> str:
    entry = CATALOGUE.get(rule_id)
    return entry.title if entry is not None else custom.get(rule_id, "custom rule")


def exception_records(cluster: str, accepted: Sequence[Accepted], live: Sequence[LocatedException],
                      custom: dict[str, str]) -> list[dict[str, Any]]:
    """Records of the findings exceptions accept in ``cluster`` (``accepted``: those validate saw there), then one
    per rule of a live exception of the cluster that accepted none of them (``custom``: custom rule id → title)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[Place, str]] = set()
    scopes = {located.place: exception_scope(located, cluster) for located in live}
    for a in accepted:
        record = {"kind": EXCEPTION, **a.record()}
        if a.source is not None:
            seen.add((a.source, a.finding.rule_id))
            record["scope"] = scopes.get(a.source, f"cluster {cluster}")
        out.append(record)
    for located in live:
        if not applies_to(located, cluster):
            continue
        exc = located.exception
        assert isinstance(exc.expires, dt.date)
        scope = scopes[located.place]
        for rule_id in exc.rules:
            if (located.place, rule_id) in seen:
                continue
            entry = CATALOGUE.get(rule_id)
            what = (f"no {rule_id} finding in {scope} today (lint reports the stale rule, GS004)"
                    if entry is not None and entry.stage == MATRIX_STAGE else
                    f"every {rule_id} finding in {scope} (lint judges it)")
            out.append({"kind": EXCEPTION, "rule": rule_id, "message": f"{_title(rule_id, custom)}: {what}",
                        "path": "", "scope": scope, "reason": exc.reason, "owner": exc.owner,
                        "expires": exc.expires.isoformat(), "acceptedBy": _place(located.place)})
    return out


def suppression_records(cluster: Cluster, known: Collection[str], custom: dict[str, str],
                        suppressions: Sequence[Suppression] | None = None) -> list[dict[str, Any]]:
    """Records of the inline suppressions in ``cluster``'s file that may accept something: a reason, and ids that
    exist (``known``: the custom rules' ids; catalogue ids always) and that a directive may name.

    ``suppressions``: the file's directives when read before (default: read now).
    """
    directives = read_suppressions([cluster.source_file]) if suppressions is None else suppressions
    out: list[dict[str, Any]] = []
    for s in sorted(directives, key=lambda d: (d.line, d.column)):
        if not s.reason:
            continue
        for rule_id in s.rules:
            if (rule_id not in CATALOGUE and rule_id not in known) or inline_refusal(rule_id) is not None:
                continue
            out.append({"kind": SUPPRESSION, "rule": rule_id, "message": _title(rule_id, custom), "path": "",
                        "scope": f"line {s.target}", "reason": s.reason,
                        "acceptedBy": {"file": repository_path(s.file), "line": s.line}})
    return out
