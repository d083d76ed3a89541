"""The render pipeline as one call: validate, compile, serialize (the CLI and tests share it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpuspec.findings import Finding, Severity
from gpuspec.render.compile import compile_fleet
from gpuspec.render.inputs import read_input_digests
from gpuspec.render.plan import RenderPlan
from gpuspec.render.serialize import serialize
from gpuspec.validate.run import ValidationResult, validate_fleet


@dataclass
class Prepared:
    """The validation result and, when the fleet is valid, its render plan."""

    validation: ValidationResult
    plan: RenderPlan | None

    @property
    def errors(self) -> list[Finding]:
        """Findings at error severity (any one blocks rendering)."""
        return [f for f in self.validation.findings if f.severity.rank >= Severity.ERROR.rank]


def prepare(fleet_dir: Path, policies_dir: Path | None, only: Iterable[str] | None = None) -> Prepared:
    """Validate ``fleet_dir``; when usable and free of errors, compile its render plan."""
    validation = validate_fleet(fleet_dir, policies_dir)
    fleet = validation.fleet
    if fleet is None or any(f.severity.rank >= Severity.ERROR.rank for f in validation.findings):
        return Prepared(validation, None)
    return Prepared(validation, compile_fleet(fleet, read_input_digests(fleet_dir, policies_dir), only))


def expected_bytes(plan: RenderPlan) -> dict[str, bytes]:
    """Every output file's exact bytes, keyed by path relative to the output folder."""
    return {path: serialize(spec, digest) for path, (digest, spec) in plan.files().items()}
