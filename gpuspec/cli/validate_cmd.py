"""`gpuspec validate`: schema, references and support matrix."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli import resultcache
from gpuspec.cli.common import (
    exit_code,
    fleet_argument,
    format_option,
    output_option,
    policies_option,
    publish_report,
    today_option,
    validation_parts,
    validation_report,
)
from gpuspec.cli.resultcache import Report


@click.command("validate")
@fleet_argument
@policies_option
@format_option(["text", "json"])
@output_option
@today_option
def validate_command(fleet_dir: Path, policies_dir: Path, output_format: str, output_file: Path | None,
                     today: date | None) -> None:
    """Check the fleet spec against its schema, its references and NVIDIA's support matrix.

    Findings of the support matrix that a policy exception (owner, reason,
    expiry) accepts are not errors; an expired or unfilled exception is.
    Exit 0 when valid, 1 when there are errors, 2 when the input is unusable
    (YAML or schema problems, an unusable policy pack).
    """
    # A report whose inputs are all unchanged since the last run is replayed (see resultcache).
    cached = resultcache.entry("validate", fleet_dir, policies_dir, (), today)
    report = cached.load()
    if report is None:
        report = _validate(fleet_dir, policies_dir, today)
        cached.store(report)
    publish_report(report, output_format, "validate", output_file)
    if not report.usable:
        raise SystemExit(exitcodes.INPUT_ERROR)
    raise SystemExit(exit_code(report.findings))


def _validate(fleet_dir: Path, policies_dir: Path, today: date | None) -> Report:
    """The report of validating the fleet: a large one a chunk of clusters at a time, in bounded memory."""
    from gpuspec.pipeline.chunked import validate_in_chunks
    from gpuspec.pipeline.validate import validate_fleet

    merged = validate_in_chunks(fleet_dir, policies_dir, today, validation_parts)
    if merged is None:
        return validation_report(validate_fleet(fleet_dir, policies_dir, today=today))
    return Report(merged.findings, merged.suppressed, None, merged.usable)
