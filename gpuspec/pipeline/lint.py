"""The lint pipeline: validate the fleet, run every enabled rule under the policy, apply exceptions and suppressions."""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from gpuspec.catalogue import CATALOGUE
from gpuspec.catalogue.engine import RULE_CRASHED
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Finding, Suppressed
from gpuspec.loader.fleetload import LoadResult, load_fleet
from gpuspec.loader.positions import locate_findings
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.policy.acceptance import decide, utc_today
from gpuspec.policy.custom import custom_entry, custom_findings
from gpuspec.policy.load import Place, Policy, load_policy
from gpuspec.policy.suppress import read_suppressions
from gpuspec.rules.base import RuleContext, report_problems, run_rule
from gpuspec.rules.overrides import override_findings
from gpuspec.rules.percluster import ClusterRule, cluster_problems
from gpuspec.rules.references import reference_findings
from gpuspec.rules.registry import RULES, all_rules
from gpuspec.rules.secrets import mark_sensitive

if TYPE_CHECKING:  # the change-set machinery is imported only for lint --base
    from gpuspec.rollout.records import Change
    from gpuspec.rules.changeset import ChangeSetContext


@dataclass
class LintResult:
    """Located findings of a lint run, whether the input was usable, and metadata of the rules that fired."""

    findings: list[Finding]
    usable: bool
    rule_docs: dict[str, Entry] = field(default_factory=dict)
    packs: list[str] = field(default_factory=list)
    raw: dict[str, object] = field(default_factory=dict)
    #: Findings an inline suppression or a policy exception covers (located), with its reason.
    suppressed: list[Suppressed] = field(default_factory=list)
    #: With change-set rules: the base and head fleets they judged (the caller may name the way out of collisions).
    compared: tuple[Fleet, Fleet] | None = None
    #: With change-set rules: the rollout model's records of the change they judged (what happens on which nodes).
    changes: tuple[Change, ...] = ()


def default_as_of() -> date:
    """The support-matrix data date: the reproducible default for life-cycle checks."""
    from gpuspec.matrix.query import data_date

    return data_date()


def _run_rules(
    fleet: Fleet, raw: dict[str, object], policy: Policy, changeset: ChangeSetContext | None = None
) -> list[Finding]:
    as_of = policy.as_of or default_as_of()
    findings: list[Finding] = []
    shared: dict[object, object] = {}  # one memo per run, see RuleContext.shared
    rules = RULES if changeset is None else all_rules()
    # The rules that judge one cluster at a time, judged so (unchanged clusters' problems from the user cache).
    judged = cluster_problems(fleet, [ClusterRule(rule_id, rule, policy.rules[rule_id].params)
                                      for rule_id, rule in rules.items()
                                      if rule.per_cluster and not rule.needs_base and policy.rules[rule_id].enabled],
                              as_of, raw)
    for rule_id, rule in rules.items():
        config = policy.rules[rule_id]
        if not config.enabled:
            continue
        outcome = judged.get(rule_id)
        if isinstance(outcome, list):
            findings.extend(report_problems(rule, outcome, config.severity))
            continue
        ctx: RuleContext
        if rule.needs_base:
            if changeset is None:
                continue
            ctx = replace(changeset, params=config.params, as_of=as_of, raw=raw, shared=shared)
        else:
            ctx = RuleContext(fleet=fleet, params=config.params, as_of=as_of, raw=raw, shared=shared)
        try:
            if outcome is not None:
                raise outcome
            findings.extend(run_rule(rule, ctx, config.severity))
        except Exception as exc:  # a broken rule must not hide the others' findings
            if os.environ.get("GPUSPEC_DEBUG"):
                traceback.print_exception(exc)
            findings.append(RULE_CRASHED.finding(
                f"rule {rule_id} failed: {type(exc).__name__}: {exc}", fleet.settings_file, (),
                "this is a bug in gpuspec; set GPUSPEC_DEBUG=1 for the traceback and report it",
            ))
    for located in policy.custom_rules:
        config = policy.rules[located.rule.id]
        if config.enabled:
            findings.extend(custom_findings(fleet, located, config.severity))
    return findings


def _restamp(findings: Sequence[Finding], policy: Policy) -> list[Finding]:
    """Give findings the severity the policy sets (engine findings GS004–GS007; GS003, GS008 and GS009 are fixed),
    and drop those of disabled ids."""
    out: list[Finding] = []
    for finding in findings:
        config = policy.rules.get(finding.rule_id)
        if config is None:
            out.append(finding)
        elif config.enabled:
            out.append(finding.with_severity(config.severity))
    return out


def _docs(findings: Sequence[Finding], policy: Policy) -> dict[str, Entry]:
    """The entries of the ids in ``findings``: the catalogue's, and the policy's custom rules."""
    docs: dict[str, Entry] = {}
    custom = {c.rule.id: c for c in policy.custom_rules}
    for finding in findings:
        rule_id = finding.rule_id
        if rule_id in docs:
            continue
        if rule_id in CATALOGUE:
            docs[rule_id] = CATALOGUE[rule_id]
        elif rule_id in custom:
            docs[rule_id] = custom_entry(custom[rule_id])
    return docs


def lint_fleet(
    fleet_dir: Path,
    policies_dir: Path,
    packs: Sequence[str] | None = None,
    today: date | None = None,
    base_rev: str | None = None,
) -> LintResult:
    """Lint ``fleet_dir`` under the policy packs ``packs`` (default: those fleet.yaml selects) from ``policies_dir``.

    ``today`` is the date exceptions expire against (default: today in UTC); which findings are accepted is
    decided by :func:`gpuspec.policy.acceptance.decide`, as in every other command.  With ``base_rev`` the
    change-set rules (GS8xx) also run, on the change from that git revision to the working tree, under
    the same policy (severities, parameters, exceptions, suppressions).
    """
    return lint_load(load_fleet(fleet_dir), fleet_dir, policies_dir, packs, today, base_rev)


def lint_load(
    load: LoadResult,
    fleet_dir: Path,
    policies_dir: Path,
    packs: Sequence[str] | None = None,
    today: date | None = None,
    base_rev: str | None = None,
    base_fleet: Fleet | None = None,
    context: Sequence[Cluster] = (),
) -> LintResult:
    """Lint an already loaded fleet as :func:`lint_fleet` does; with ``base_fleet`` (and no ``base_rev``) the
    change-set rules judge the change from that in-memory fleet (``gpuspec upgrade`` checks its steps so), with
    ``context`` the clusters outside both that the step leaves as they are."""
    fleet = load.fleet
    if fleet is None:
        return LintResult(mark_sensitive(locate_findings(load.findings), load.raw), usable=False, rule_docs={},
                          raw=load.raw)
    if packs:
        policy = load_policy(policies_dir, list(packs))
    else:
        names = fleet.settings.policy.packs
        places = [Place(fleet.settings_file, ("policy", "packs", i)) for i in range(len(names))]
        policy = load_policy(policies_dir, names, places)
    findings = reference_findings(fleet, None)
    findings += override_findings(fleet)
    if not policy.usable:
        located = mark_sensitive(locate_findings([*findings, *policy.findings]), load.raw)
        return LintResult(located, usable=False, rule_docs=_docs(located, policy), packs=policy.packs, raw=load.raw)

    changeset: ChangeSetContext | None = None
    if base_rev is not None:
        from gpuspec.rules.changeset import changeset_context

        changeset = changeset_context(None, base_rev, fleet_dir, policies_dir=policies_dir, head=fleet,
                                      exceptions=policy.exceptions)
    elif base_fleet is not None:
        from gpuspec.rules.changeset_memory import memory_changeset_context

        changeset = memory_changeset_context(base_fleet, fleet, exceptions=policy.exceptions, context=context)
    findings.extend(_run_rules(fleet, load.raw, policy, changeset))
    custom_ids = {c.rule.id for c in policy.custom_rules}

    def known(rule_id: str) -> bool:
        """Rules ``gpuspec rules`` lists and custom rules."""
        return rule_id in policy.rules or rule_id in custom_ids

    def ran(rule_id: str) -> bool:
        """Rules that ran: the enabled ones, the change-set rules only with a base."""
        entry = CATALOGUE.get(rule_id)
        return policy.enabled(rule_id) and (changeset is not None or entry is None or entry.stage != "change set")

    decision = decide(fleet, findings, policy, today or utc_today(), suppressions=read_suppressions(load.raw),
                      known=known, report_unused=True, ran=ran)
    kept = _restamp(decision.findings, policy)
    result = mark_sensitive(kept, load.raw)
    suppressed = decision.suppressed
    docs = _docs([*result, *(s.finding for s in suppressed)], policy)
    compared = (changeset.base, fleet) if base_rev is not None and changeset and changeset.base is not None else None
    return LintResult(result, usable=True, rule_docs=docs, packs=policy.packs, raw=load.raw, suppressed=suppressed,
                      compared=compared, changes=changeset.changes if changeset is not None else ())
