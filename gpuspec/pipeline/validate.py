"""The validate stage: load the fleet, then run schema, reference and support-matrix checks."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from gpuspec.findings import Finding
from gpuspec.loader.fleetload import LoadResult, load_fleet
from gpuspec.rules.matrix import matrix_findings
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
    return [matrix_findings]


def validate_fleet(fleet_dir: Path, policies_dir: Path | None = None,
                   only: Collection[str] | None = None) -> ValidationResult:
    """Load ``fleet_dir`` and return every schema, reference and support-matrix finding.

    ``only``: validate just the cluster files with these names (see :func:`load_fleet`).
    """
    load = load_fleet(fleet_dir, only)
    if load.fleet is None:
        return ValidationResult(load, list(load.findings))
    findings = reference_findings(load.fleet, policy_pack_names(policies_dir))
    for check in fleet_checks():
        findings.extend(check(load.fleet))
    return ValidationResult(load, findings)
