"""Which findings the fleet accepts: the one decision validate, lint, render, handover and plan share.

Two things accept a finding:

* a **policy exception** (``exceptions:`` of a pack): rules, cluster (optionally pool), owner, reason and the
  last day it applies.  It accepts findings of the support matrix (GS2xx/GS3xx) and of the policy rules;
* an **inline suppression** (``# gpuspec: ignore GS604 -- reason``): no owner, no end date, so it accepts only
  findings of the policy rules (GS4xx–GS7xx, custom rules), never a support-matrix finding.  The findings it
  can cover come from lint alone, so validate and render need not read the directives.

Nothing accepts a structural finding (schema, YAML, references: GS1xx; the lint engine's own GS0xx; a
credential in the spec, GS405; verify and audit): an exception or suppression that names one is GS008.  An
exception whose owner, reason or expiry is still a ``TODO`` placeholder accepts nothing and is GS009; one
past its expiry accepts nothing and is GS003.  All three are errors in every command, whatever a pack says.

"Today", the day expiry is judged against, is the date in UTC unless the command is given ``--today``; the
life-cycle checks (GS202/GS203) judge at the pack's ``asOf`` (default: the support-matrix data date), so the
rendered output never depends on the day it is rendered.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpuspec.catalogue import CATALOGUE, POLICY_STAGES
from gpuspec.catalogue.engine import (
    EXCEPTION_EXPIRED,
    EXCEPTION_NOT_ACCEPTABLE,
    EXCEPTION_PLACEHOLDER,
    EXCEPTION_UNUSED,
)
from gpuspec.findings import EXTERNAL, IN_SOURCE, Finding, Suppressed
from gpuspec.loader.files import repository_path
from gpuspec.loader.positions import locate_findings
from gpuspec.model.fleet import Fleet
from gpuspec.policy.exceptions import covers, finding_scope, scope_problem
from gpuspec.policy.load import LocatedException, Place, Policy
from gpuspec.policy.pack_models import PLACEHOLDER_PATTERN
from gpuspec.policy.suppress import Suppression, apply_suppressions

#: Findings on a credential written in the spec: nothing may carry one into rendered/.
CREDENTIAL_IDS = frozenset({"GS405"})
#: The stage whose findings only an owned, dated exception accepts.
MATRIX_STAGE = "support matrix"

_PLACEHOLDER = re.compile(PLACEHOLDER_PATTERN)


def utc_today() -> dt.date:
    """Today's date in UTC: the default day exceptions expire against, the same on every machine."""
    return dt.datetime.now(dt.UTC).date()


def is_placeholder(value: object) -> bool:
    """True when ``value`` is a text still to be filled in (``TODO``, ``"TODO: review"``, any letter case)."""
    return isinstance(value, str) and _PLACEHOLDER.match(value) is not None


def refusal(rule_id: str) -> str | None:
    """Why no exception can accept findings of ``rule_id`` (None: it can; custom rules always can)."""
    entry = CATALOGUE.get(rule_id)
    if entry is None:
        return None
    if rule_id in CREDENTIAL_IDS:
        return "a credential in the spec is never accepted: move it into a Secret and name the Secret"
    if entry.stage == "lint engine":
        return "findings about policy packs, exceptions and suppressions are never accepted: fix them"
    if entry.input_error or entry.stage not in POLICY_STAGES:
        return (f"{entry.stage} findings (schema, YAML, references, verify, audit) are structural errors and "
                "never accepted: fix the spec")
    return None


def inline_refusal(rule_id: str) -> str | None:
    """Why an inline suppression cannot accept findings of ``rule_id`` (None: it can)."""
    why = refusal(rule_id)
    if why is None and rule_id in CATALOGUE and CATALOGUE[rule_id].stage == MATRIX_STAGE:
        return ("support-matrix findings are accepted only by a policy exception with an owner and an expiry "
                "date (exceptions: in a pack under policies/)")
    return why


@dataclass(frozen=True)
class Accepted:
    """A finding an exception or suppression accepts, with who answers for it and until when."""

    finding: Finding
    kind: str
    reason: str
    owner: str | None = None
    expires: dt.date | None = None
    #: Where the exception or directive is written.
    source: Place | None = None

    def suppressed(self) -> Suppressed:
        """The finding as reports mark it suppressed (SARIF), with its justification."""
        if self.kind == EXTERNAL and self.expires is not None:
            text = f"{self.reason} (policy exception, owner {self.owner}, expires {self.expires.isoformat()})"
            return Suppressed(self.finding, EXTERNAL, text)
        return Suppressed(self.finding, self.kind, self.reason)

    def record(self) -> dict[str, Any]:
        """Plain data of the acceptance, as ``deviations.yaml`` and the handover documents show it."""
        f = self.finding
        out: dict[str, Any] = {"rule": f.rule_id, "message": f.message, "path": f.spec_path or "",
                               "reason": self.reason}
        if self.owner is not None:
            out["owner"] = self.owner
        if self.expires is not None:
            out["expires"] = self.expires.isoformat()
        if self.source is not None:
            out["acceptedBy"] = {"file": repository_path(self.source.file),
                                 "path": ".".join(str(p) for p in self.source.path)}
        return out


@dataclass
class Decision:
    """The outcome: findings still reported (with the acceptance problems), and the accepted ones (both located)."""

    findings: list[Finding]
    accepted: list[Accepted]
    #: The exceptions that accept findings today (refused ids dropped), in pack order.
    live: list[LocatedException] = field(default_factory=list)

    @property
    def suppressed(self) -> list[Suppressed]:
        """The accepted findings as reports mark them suppressed."""
        return [a.suppressed() for a in self.accepted]


def _where(exc: LocatedException) -> str:
    e = exc.exception
    return e.cluster + (f"/{e.pool}" if e.pool else "")


def exception_problems(policy: Policy, today: dt.date) -> tuple[list[LocatedException], list[Finding]]:
    """The exceptions that accept findings today (refused ids dropped), and the problems of the others.

    Independent of the fleet: GS008 for every id no exception may name, GS009 for every placeholder, GS003 for
    every exception past its expiry.
    """
    live: list[LocatedException] = []
    problems: list[Finding] = []
    for located in policy.exceptions:
        exc, place = located.exception, located.place
        rules: list[str] = []
        for index, rule_id in enumerate(exc.rules):
            why = refusal(rule_id)
            if why is None:
                rules.append(rule_id)
                continue
            problems.append(EXCEPTION_NOT_ACCEPTABLE.finding(
                f"exception in {_where(located)} names {rule_id}, which cannot be accepted: {why}",
                place.file, (*place.path, "rules", index),
                hint=f"remove {rule_id} from the exception" + (" (and the exception, when nothing is left)"
                                                               if len(exc.rules) > 1 else "")))
        todo = [key for key, value in (("owner", exc.owner), ("reason", exc.reason), ("expires", exc.expires))
                if is_placeholder(value)]
        for key in todo:
            problems.append(EXCEPTION_PLACEHOLDER.finding(
                f"exception for {', '.join(exc.rules)} in {_where(located)} has no {key} yet "
                f"({getattr(exc, key)!r}); it accepts nothing until it is filled in",
                place.file, (*place.path, key),
                hint={"owner": "name the team or person who answers for the exception",
                      "reason": "say why the finding is acceptable for now",
                      "expires": "write the last day it applies, YYYY-MM-DD"}[key]))
        if todo:
            continue
        assert isinstance(exc.expires, dt.date)
        if exc.expires < today:
            problems.append(EXCEPTION_EXPIRED.finding(
                f"exception for {', '.join(exc.rules)} in {_where(located)} (owner {exc.owner}) expired on "
                f"{exc.expires.isoformat()} (today is {today.isoformat()})",
                place.file, (*place.path, "expires"),
                hint="fix the findings it covered, or renew it with a new expiry date and reason"))
            continue
        if rules:
            live.append(LocatedException(exc.model_copy(update={"rules": rules}), place))
    return live, problems


def _suppression_problems(suppressions: Sequence[Suppression]) -> tuple[list[Suppression], list[Finding]]:
    """The directives with the ids they may name, and GS008 for every id they may not."""
    kept: list[Suppression] = []
    problems: list[Finding] = []
    for s in suppressions:
        allowed = []
        for rule_id in s.rules:
            why = inline_refusal(rule_id)
            if why is None:
                allowed.append(rule_id)
            else:
                problems.append(EXCEPTION_NOT_ACCEPTABLE.finding(
                    f"inline suppression names {rule_id}, which it cannot accept: {why}", s.file, (),
                    line=s.line, column=s.column))
        if allowed or not s.rules:
            kept.append(replace(s, rules=tuple(allowed), used=set()))
    return kept, problems


def decide(
    fleet: Fleet,
    findings: Sequence[Finding],
    policy: Policy,
    today: dt.date,
    *,
    suppressions: Sequence[Suppression] | None = None,
    known: Callable[[str], bool] | None = None,
    report_unused: bool = False,
    ran: Callable[[str], bool] | None = None,
) -> Decision:
    """Split ``findings`` into those reported and those accepted, and add the problems of the acceptances.

    ``suppressions``: the inline directives to honour (lint reads them; None: none — validate and render
    produce no finding a directive may accept).  ``known`` says which ids a directive may name at all (others
    are GS007).  ``report_unused``: report exceptions and directives that accept nothing (GS004, GS006), and
    each rule of a used exception that accepts nothing (GS004 at that rule) — only where every enabled rule ran
    (lint); ``ran`` says which ids ran (default: the enabled ones).
    """
    live, problems = exception_problems(policy, today)
    used: dict[int, set[str]] = {}
    kept: list[Finding] = []
    accepted: list[Accepted] = []
    for finding in findings:
        scope = finding_scope(fleet, finding)
        hit = next((i for i, e in enumerate(live) if covers(e, finding, scope, fleet)), None)
        if hit is None:
            kept.append(finding)
            continue
        used.setdefault(hit, set()).add(finding.rule_id)
        exc = live[hit].exception
        assert isinstance(exc.expires, dt.date)
        accepted.append(Accepted(finding, EXTERNAL, exc.reason, exc.owner, exc.expires, live[hit].place))
    if report_unused:
        problems.extend(_unused_exceptions(fleet, policy, live, used, ran or policy.enabled))
    located_kept = locate_findings(kept)
    accepted = _located(accepted)
    if suppressions:
        directives, refused = _suppression_problems(suppressions)
        problems.extend(refused)
        inline: list[Suppressed] = []
        located_kept, directive_problems = apply_suppressions(
            located_kept, directives, known or (lambda _r: True),
            policy.enabled if report_unused else (lambda _r: False), inline)
        problems.extend(directive_problems)
        accepted.extend(Accepted(s.finding, IN_SOURCE, s.justification) for s in inline)
    accepted.sort(key=lambda a: a.finding.sort_key())
    return Decision(sorted([*located_kept, *locate_findings(problems)], key=Finding.sort_key), accepted, live)


def _unused_exceptions(fleet: Fleet, policy: Policy, live: Sequence[LocatedException], used: dict[int, set[str]],
                       ran: Callable[[str], bool]) -> list[Finding]:
    """GS004 for every live exception that accepts nothing, and for every rule of a used exception that accepts
    nothing while its other rules still do (at that rule's line: ``rules: [GS202, GS302]`` once GS302 is fixed)."""
    problems: list[Finding] = []
    written = {located.place: located.exception.rules for located in policy.exceptions}
    for index, located in enumerate(live):
        rules = located.exception.rules
        hits = used.get(index)
        if hits is None:
            if not all(ran(r) for r in rules):
                continue
            why = scope_problem(fleet, located)
            problems.append(EXCEPTION_UNUSED.finding(
                f"exception for {', '.join(rules)} in {_where(located)} matches no finding"
                + (f": {why}" if why else ""),
                located.place.file, located.place.path, hint="remove the exception, or fix its rules/cluster/pool"))
            continue
        original = written.get(located.place, rules)
        for rule_id in rules:
            if rule_id in hits or not ran(rule_id):
                continue
            position = original.index(rule_id) if rule_id in original else rules.index(rule_id)
            problems.append(EXCEPTION_UNUSED.finding(
                f"exception for {', '.join(rules)} in {_where(located)} accepts no {rule_id} finding any more "
                f"(its other rules still match: {', '.join(sorted(hits))})",
                located.place.file, (*located.place.path, "rules", position),
                hint=f"remove {rule_id} from the exception's rules"))
    return problems


def _key(finding: Finding) -> tuple[Any, ...]:
    return finding.rule_id, finding.file, finding.path, finding.message, finding.at_key


def _located(accepted: list[Accepted]) -> list[Accepted]:
    """``accepted`` with their findings located (locating sorts, so each is matched back by its identity)."""
    located = {_key(f): f for f in locate_findings([a.finding for a in accepted])}
    return [replace(a, finding=located[_key(a.finding)]) for a in accepted]
