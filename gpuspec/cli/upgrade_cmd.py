"""`gpuspec upgrade`: the pull requests that take clusters to a target, each one lint-clean after the last."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import fleet_argument, output_option, policies_option, today_option, write_report
from gpuspec.errors import GpuspecError
from gpuspec.loader.fleetload import display_path
from gpuspec.pipeline.upgrade.model import Target
from gpuspec.pipeline.upgrade.output import RENDERERS


@click.command("upgrade")
@click.option("--cluster", "clusters", multiple=True, metavar="NAME", help="Cluster to upgrade (repeatable).")
@click.option(
    "--wave",
    type=click.IntRange(0, 99),
    default=None,
    metavar="N",
    help="Upgrade every cluster of fleet wave N (rollout.wave).",
)
@click.option("--channel", default=None, metavar="NAME", help="Upgrade a channel and the clusters that follow it.")
@click.option("--operator", default=None, metavar="vX.Y.Z", help="Target GPU Operator release, e.g. v26.7.0.")
@click.option(
    "--driver-branch",
    "driver_branch",
    default=None,
    metavar="NNN",
    help="Target driver branch of every operator-managed pool, e.g. 595.",
)
@click.option("--kubernetes", default=None, metavar="1.NN", help="Target Kubernetes minor, e.g. 1.35.")
@click.option(
    "--pool",
    "pools",
    multiple=True,
    metavar="NAME",
    help="Move the driver of these pools only (repeatable; the canary pool still goes first).",
)
@click.option(
    "--from",
    "from_rev",
    default=None,
    metavar="REV",
    help="Plan from the fleet at this git revision instead of the working tree.",
)
@click.option(
    "--apply",
    "apply_step",
    type=click.IntRange(1, None),
    default=None,
    metavar="N",
    help="Write step N's spec edits into the working tree (to commit as that step's pull request).",
)
@click.option("--force", is_flag=True, help="With --apply: edit files that have uncommitted changes.")
@fleet_argument
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(RENDERERS)),
    default="text",
    show_default=True,
    help="text for terminals, json for tools, markdown for an issue or pull request.",
)
@output_option
@policies_option
@today_option
def upgrade_command(
    clusters: tuple[str, ...],
    wave: int | None,
    channel: str | None,
    operator: str | None,
    driver_branch: str | None,
    kubernetes: str | None,
    pools: tuple[str, ...],
    from_rev: str | None,
    apply_step: int | None,
    force: bool,
    fleet_dir: Path,
    output_format: str,
    output_file: Path | None,
    policies_dir: Path,
    today: date | None,
) -> None:
    """Plan the pull requests that take clusters to a GPU Operator release, driver branch or Kubernetes minor.

    Select the clusters with --cluster (repeatable), --wave or --channel and
    give any of --operator, --driver-branch and --kubernetes. The plan is the
    shortest sequence of spec changes in which every step passes `gpuspec
    lint --base` of the step before: one layer per change, operator release
    lines one at a time, the driver before the operator when the new line
    drops the running branch, the NVIDIADriver management switch alone, the
    canary pool first, then pool waves, then fleet waves; of the plans as
    short, the one that drains the fewest GPU nodes. Each step says what
    it edits, what restarts on which nodes, and what must hold before it
    starts. --apply N writes step N into the working tree in place (comments
    and formatting kept); the working tree must be at the state before step N
    (plan with --from REV to number steps from an earlier commit).

    Exit 0 when the plan reaches the target (or --apply wrote the step), 1
    when no path exists (the output names the rule that blocks each next
    step), 2 for a usage or input error.
    """
    from gpuspec.pipeline.upgrade.apply import apply_step as write_step
    from gpuspec.pipeline.upgrade.apply import texts_at
    from gpuspec.pipeline.upgrade.planner import plan_upgrade

    texts = texts_at(fleet_dir, from_rev) if from_rev else None
    plan = plan_upgrade(
        fleet_dir,
        policies_dir,
        Target(operator, driver_branch, kubernetes, pools),
        clusters=clusters,
        wave=wave,
        channel=channel,
        today=today,
        texts=texts,
    )
    if apply_step is None:
        write_report(RENDERERS[output_format](plan), output_file)
        raise SystemExit(exitcodes.OK if plan.found else exitcodes.FINDINGS)
    if not plan.found:
        write_report(RENDERERS[output_format](plan), output_file, err=True)
        raise SystemExit(exitcodes.FINDINGS)
    if apply_step > len(plan.steps):
        raise GpuspecError(f"--apply {apply_step}: the plan has {len(plan.steps)} step(s)")
    step = plan.steps[apply_step - 1]
    written = write_step(fleet_dir, step, force=force)
    names = ", ".join(display_path(p) for p in written) or "nothing (the files already hold it)"
    click.echo(
        f"step {step.number}: {step.title}\nwrote {names}\ncommit it as one pull request; "
        f"`gpuspec lint --base HEAD` checks it, `gpuspec render` renders it"
    )
    raise SystemExit(exitcodes.OK)
