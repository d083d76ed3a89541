"""`gpuspec lint`: schema, references and every rule through the policy packs — the CI gate."""

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
    prepare_report,
    publish_report,
    today_option,
)
from gpuspec.findings import Severity


@click.command("lint")
@fleet_argument
@policies_option
@click.option("--pack", "packs", multiple=True, metavar="NAME",
              help="Policy pack to apply (repeatable); default: the packs fleet.yaml selects.")
@format_option()
@output_option
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
              help="Exit 1 when a finding has this severity or a higher one.")
@today_option
@click.option("--base", "base_rev", metavar="REV", default=None,
              help="Also run the change-set rules (GS8xx) on the change from git revision REV to the working tree.")
@click.option("--omit-suppressed", is_flag=True, default=False,
              help="Leave findings that an inline suppression or a policy exception covers out of the SARIF report "
                   "(GitHub code scanning shows SARIF results with suppressions as open alerts).")
def lint_command(
    fleet_dir: Path, policies_dir: Path, packs: tuple[str, ...], output_format: str, output_file: Path | None,
    fail_on: str, today: date | None, base_rev: str | None, omit_suppressed: bool,
) -> None:
    """Lint the fleet: schema, references, support matrix and policy rules.

    Rules run with the severities, parameters, exceptions and custom rules of
    the policy packs. Findings can be suppressed inline with
    `# gpuspec: ignore GS604 -- reason`. Exit 0 when clean, 1 when a finding
    is at or above --fail-on, 2 when the fleet or a policy pack is unusable.
    """
    # Without --base, a report whose inputs are all unchanged since the last run is replayed (see resultcache).
    cached = None if base_rev is not None else resultcache.entry("lint", fleet_dir, policies_dir, packs, today)
    report = cached.load() if cached else None
    rule_docs = None
    if report is None:
        from gpuspec.catalogue import CATALOGUE
        from gpuspec.pipeline.lint import lint_fleet

        result = lint_fleet(fleet_dir, policies_dir, packs or None, today, base_rev)
        if base_rev is not None and result.compared is not None:
            from gpuspec.pipeline.upgrade.hints import name_the_way_out  # only when change-set rules collide

            result.findings = name_the_way_out(result.findings, *result.compared, fleet_dir, policies_dir, base_rev,
                                               today)
        summary = f"policy packs: {', '.join(result.packs)}" if result.packs else None
        report = prepare_report(result.findings, summary, raw=result.raw, suppressed=result.suppressed,
                                successful=result.usable)
        rule_docs = result.rule_docs
        if cached and all(rule_id in CATALOGUE for rule_id in rule_docs):  # custom rules' entries: not stored
            cached.store(report)
    publish_report(report, output_format, "lint", output_file, rule_docs, omit_suppressed=omit_suppressed)
    if not report.usable:
        raise SystemExit(exitcodes.INPUT_ERROR)
    raise SystemExit(exit_code(report.findings, Severity(fail_on)))
