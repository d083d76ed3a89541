"""`gpuspec plan --base REV`: what a change to the fleet does, cluster by cluster and wave by wave."""

from __future__ import annotations

from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import fleet_argument, output_option, write_report
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
def plan_command(base_rev: str, fleet_dir: Path, output_format: str, output_file: Path | None) -> None:
    """Show what changes between the fleet at REV and the working tree.

    Reads the fleet at REV straight from git objects (no checkout; works in a
    shallow clone once REV is fetched). For every cluster and pool it lists
    operator, driver, MIG, sharing, OS, Kubernetes, mirror, pool and tenant
    changes, classifies their disruption (none, operand restart, driver
    reload, MIG repartition), orders them by rollout wave (canary first) and
    says how to roll each back.

    Exit 0 after printing the plan, 2 when REV or either fleet is unusable.
    Use `gpuspec lint --base REV` to gate changes (GS8xx rules).
    """
    plan = build_plan(fleet_dir, base_rev)
    text = render_markdown(plan, fleet_dir) if output_format == "markdown" else RENDERERS[output_format](plan)
    write_report(text, output_file)
    raise SystemExit(exitcodes.OK)
