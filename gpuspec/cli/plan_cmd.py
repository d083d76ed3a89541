"""`gpuspec plan --base REV`: what a change to the fleet does, cluster by cluster and wave by wave."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import (
    emit_report,
    exit_code,
    fleet_argument,
    output_option,
    policies_option,
    today_option,
    write_report,
)
from gpuspec.plan.build import build_plan
from gpuspec.plan.markdown import render_markdown
from gpuspec.plan.output import render_json, render_text

RENDERERS = {"text": render_text, "json": render_json, "markdown": render_markdown}


@click.command("plan")
@click.option(
    "--base", "base_rev", required=True, metavar="REV",
    help="Git revision to compare the working tree with (branch, tag or commit, e.g. origin/main).",
)
@fleet_argument
@click.option(
    "--format", "output_format", type=click.Choice(list(RENDERERS)), default="text", show_default=True,
    help="text for terminals, json for tools, markdown for a pull-request comment.",
)
@output_option
@policies_option
@today_option
def plan_command(base_rev: str, fleet_dir: Path, output_format: str, output_file: Path | None, policies_dir: Path,
                 today: date | None) -> None:
    """Show what changes between the fleet at REV and the working tree.

    Reads the fleet at REV straight from git objects (no checkout; works in a
    shallow clone once REV is fetched). For every cluster and pool it lists
    operator, driver, MIG, sharing, OS, Kubernetes, mirror, pool and tenant
    changes, classifies their disruption (none, operand restart, driver
    reload, MIG repartition), orders them by rollout wave (canary first) and
    says how to roll each back.

    Either revision may hold clusters outside the support matrix that policy
    exceptions accept. The working tree's exceptions are checked as in every
    command: an expired or unfilled one, or one naming a finding that cannot
    be accepted, is printed on standard error after the plan and exits 1.

    Exit 0 after printing the plan, 1 when an exception of the working tree
    is in error, 2 when REV or either fleet is unusable.
    Use `gpuspec lint --base REV` to gate changes (GS8xx rules).
    """
    from gpuspec.pipeline.validate import exception_findings

    plan = build_plan(fleet_dir, base_rev)
    text = render_markdown(plan, fleet_dir) if output_format == "markdown" else RENDERERS[output_format](plan)
    write_report(text, output_file)
    problems = exception_findings(fleet_dir, policies_dir, today)
    if problems:
        emit_report(problems, "text", "plan", err=True)
    raise SystemExit(exit_code(problems) if problems else exitcodes.OK)
