"""The validate stage: load the fleet, then run schema, reference and support-matrix checks."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuspec.catalogue.validate import UNRESOLVED_REFERENCE
from gpuspec.findings import Finding, Severity
from gpuspec.loader.fleetload import LoadResult, load_fleet
from gpuspec.model.fleet import Fleet
from gpuspec.policy.acceptance import Accepted, decide, exception_problems, utc_today
from gpuspec.policy.load import BUILTIN_DEFAULT, BUILTIN_PACKS_DIR, LocatedException, Place, Policy, load_policy
from gpuspec.policy.records import exception_records, suppression_records
from gpuspec.rules.airgap import NoCredentialsInSpec
from gpuspec.rules.base import RuleContext, run_rule
from gpuspec.rules.consumers import consumer_findings
from gpuspec.rules.matrix import matrix_findings
from gpuspec.rules.overrides import override_findings
from gpuspec.rules.references import reference_findings

#: Further checks run on a usable fleet, judged at a date (the support-matrix checks register here).
FleetCheck = Callable[[Fleet, dt.date | None], list[Finding]]


@dataclass
class ValidationResult:
    """The loaded fleet (None when unusable) and every finding of the validate stage."""

    load: LoadResult
    findings: list[Finding] = field(default_factory=list)
    #: The findings a policy exception accepts (located), with owner and expiry.
    accepted: list[Accepted] = field(default_factory=list)
    #: False when a policy pack of the fleet cannot be used (its findings are in ``findings``).
    policy_usable: bool = True
    #: The policy exceptions that accept findings today (whatever validate saw of their rules).
    exceptions: list[LocatedException] = field(default_factory=list)
    #: Custom rule id → title (the policy's own rules, which suppressions and exceptions may name).
    custom_rules: dict[str, str] = field(default_factory=dict)

    @property
    def fleet(self) -> Fleet | None:
        """The typed fleet, or None when the input was unusable."""
        return self.load.fleet

    def accepted_records(self, fleet: Fleet, cluster: str) -> list[dict[str, Any]]:
        """Records of everything ``cluster`` accepts (for its rendered output and ``deviations``): the findings
        exceptions accept, in report order; every other rule of its live exceptions; its inline suppressions
        (:mod:`gpuspec.policy.records`)."""
        accepted = [a for a in self.accepted
                    if a.finding.file is not None and (c := fleet.cluster_from_file(a.finding.file)) is not None
                    and c.name == cluster]
        records = exception_records(cluster, accepted, self.exceptions, self.custom_rules)
        spec = fleet.cluster(cluster)
        if spec is not None:
            records += suppression_records(spec, self.custom_rules, self.custom_rules)
        return records

    @property
    def usable(self) -> bool:
        """True when the fleet and its policy packs loaded (else the command exits 2)."""
        return self.load.usable and self.policy_usable


def policy_pack_names(policies_dir: Path | None) -> set[str] | None:
    """Names of the policy packs available: the files in ``policies_dir`` plus the built-in ``default``.

    None when there is no such folder (then pack references are not checked).
    """
    if policies_dir is None or not policies_dir.is_dir():
        return None
    return {p.stem for p in policies_dir.iterdir() if p.suffix in (".yaml", ".yml")} | {"default"}


def fleet_checks() -> list[FleetCheck]:
    """The checks that run on every usable fleet after the reference checks."""
    return [matrix_findings, lambda fleet, _when: override_findings(fleet),
            lambda fleet, _when: consumer_findings(fleet)]


def credential_findings(fleet: Fleet, raw: Mapping[str, Any]) -> list[Finding]:
    """GS405 at error severity for every credential written in the spec, whatever the policy says.

    A credential in the spec (a password-like key, a token, URL ``user:password@``) would be copied into
    rendered/ and into logs, so validate (and therefore render and images) refuses it; lint reports the
    same rule through the policy.
    """
    return run_rule(NoCredentialsInSpec(), RuleContext(fleet=fleet, raw=dict(raw)), Severity.ERROR)


def fleet_policy(fleet: Fleet, policies_dir: Path | None) -> Policy:
    """The merged policy of the packs ``fleet.yaml`` selects (``policies_dir`` None: the built-in default)."""
    if policies_dir is None:
        return load_policy(BUILTIN_PACKS_DIR, [BUILTIN_DEFAULT])
    names = fleet.settings.policy.packs
    places: list[Place | None] = [Place(fleet.settings_file, ("policy", "packs", i)) for i in range(len(names))]
    return load_policy(policies_dir, names, places)


def validate_fleet(fleet_dir: Path, policies_dir: Path | None = None,
                   only: Collection[str] | None = None, today: dt.date | None = None, *,
                   cached: bool | None = None) -> ValidationResult:
    """Load ``fleet_dir`` and return every schema, reference, credential and support-matrix finding.

    The support matrix judges life-cycles at the policy's ``asOf``; the findings its exceptions accept are
    returned apart (see :func:`gpuspec.policy.acceptance.decide`; ``today``: the day they expire against,
    default today in UTC).  ``only``: validate just the cluster files with these names; ``cached``: whether the
    files' parsed data and checks may come from (and go to) the user cache (see :func:`load_fleet`).
    """
    load = load_fleet(fleet_dir, only, cached=cached)
    if load.fleet is None:
        return ValidationResult(load, list(load.findings))
    fleet = load.fleet
    findings = reference_findings(fleet, policy_pack_names(policies_dir))
    findings.extend(credential_findings(fleet, load.raw))
    missing_pack = any(f.rule_id == UNRESOLVED_REFERENCE.id and f.path[:2] == ("policy", "packs") for f in findings)
    policy = Policy() if missing_pack else fleet_policy(fleet, policies_dir)
    if not policy.usable:
        return ValidationResult(load, [*findings, *policy.findings], policy_usable=False)
    for check in fleet_checks():
        findings.extend(check(fleet, policy.as_of))
    decision = decide(fleet, findings, policy, today or utc_today())
    return ValidationResult(load, decision.findings, decision.accepted, exceptions=decision.live,
                            custom_rules={c.rule.id: c.rule.title for c in policy.custom_rules})


def exception_findings(fleet_dir: Path, policies_dir: Path | None, today: dt.date | None = None) -> list[Finding]:
    """The problems of the fleet's exceptions alone (refused ids, placeholders, expired), for commands that do
    not judge the spec (``plan``); policy-pack problems when a pack is unusable, none when the fleet is."""
    load = load_fleet(fleet_dir, ())
    if load.fleet is None:
        return []
    policy = fleet_policy(load.fleet, policies_dir)
    if not policy.usable:
        return list(policy.findings)
    return exception_problems(policy, today or utc_today())[1]
