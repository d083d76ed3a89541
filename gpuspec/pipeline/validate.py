"""The validate stage: load the fleet, then run schema, reference and support-matrix checks."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuspec.findings import Finding, Severity
from gpuspec.loader.fleetload import LoadResult, load_fleet
from gpuspec.rules.airgap import NoCredentialsInSpec
from gpuspec.rules.base import RuleContext, run_rule
from gpuspec.rules.matrix import matrix_findings
from gpuspec.rules.overrides import override_findings
from gpuspec.rules.references import reference_findings
from gpuspec.spec.models import Fleet

#: Further checks run on a usable fleet (the support-matrix checks register here).
FleetCheck = Callable[[Fleet], list[Finding]]


@dataclass
class ValidationResult:
    """The loaded fleet (None when unusable) and every finding of the validate stage."""

    load: LoadResult
    findings: list[Finding] = field(default_factory=list)

    @property
    def fleet(self) -> Fleet | None:
        """The typed fleet, or None when the input was unusable."""
        return self.load.fleet


def policy_pack_names(policies_dir: Path | None) -> set[str] | None:
    """Names of the policy packs available: the files in ``policies_dir`` plus the built-in ``default``.

    None when there is no such folder (then pack references are not checked).
    """
    if policies_dir is None or not policies_dir.is_dir():
        return None
    return {p.stem for p in policies_dir.iterdir() if p.suffix in (".yaml", ".yml")} | {"default"}


def fleet_checks() -> list[FleetCheck]:
    """The checks that run on every usable fleet after the reference checks."""
    return [matrix_findings, override_findings]


def credential_findings(fleet: Fleet, raw: Mapping[str, Any]) -> list[Finding]:
    """GS405 at error severity for every credential written in the spec, whatever the policy says.

    A credential in the spec (a password-like key, a token, URL ``user:password@``) would be copied into
    rendered/ and into logs, so validate (and therefore render and images) refuses it; lint reports the
    same rule through the policy.
    """
    return run_rule(NoCredentialsInSpec(), RuleContext(fleet=fleet, raw=dict(raw)), Severity.ERROR)


def validate_fleet(fleet_dir: Path, policies_dir: Path | None = None,
                   only: Collection[str] | None = None) -> ValidationResult:
    """Load ``fleet_dir`` and return every schema, reference, credential and support-matrix finding.

    ``only``: validate just the cluster files with these names (see :func:`load_fleet`).
    """
    load = load_fleet(fleet_dir, only)
    if load.fleet is None:
        return ValidationResult(load, list(load.findings))
    findings = reference_findings(load.fleet, policy_pack_names(policies_dir))
    findings.extend(credential_findings(load.fleet, load.raw))
    for check in fleet_checks():
        findings.extend(check(load.fleet))
    return ValidationResult(load, findings)
