"""`gpuspec acceptance report`: the validation-stage report of a cluster's acceptance Jobs, from their export."""

from __future__ import annotations

from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import DEFAULT_RENDERED, format_option, output_option, outside_git, write_report


@click.group("acceptance")
def acceptance_group() -> None:
    """Acceptance evidence: report what the acceptance Jobs of the rendered revision proved."""


@acceptance_group.command("report")
@click.option("--cluster", "cluster_name", required=True, help="Cluster whose rendered acceptance Jobs are expected.")
@click.option("--jobs", "jobs_source", required=True, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get jobs,pods -n gpuspec-acceptance -o json` (- for standard input).")
@click.option("--rendered", "rendered_dir", default=str(DEFAULT_RENDERED), show_default=True,
              type=click.Path(path_type=Path, file_okay=False), callback=outside_git,
              help="Rendered output folder holding clusters/<cluster>/acceptance/.")
@format_option(["text", "json", "markdown"])
@output_option
def report_command(cluster_name: str, jobs_source: str, rendered_dir: Path, output_format: str,
                   output_file: Path | None) -> None:
    """Report per pool and check: passed, failed, timed out, running or not run for this revision.

    The expected checks are the Jobs committed in rendered/clusters/<cluster>/acceptance/ (their names end
    in a content hash; an exported Job of the same pool and check with another name ran for an older
    revision). For each: its status, time to readiness (per pod, scheduled to ready or to completion)
    against its budget, the bus bandwidth its containers reported against its floor, the nodes it ran on.
    Exit 0 when every check of this revision passed, 1 when one failed or did not run, 2 on bad input.
    """
    from gpuspec.acceptance.expected import read_rendered
    from gpuspec.acceptance.exports import parse_export
    from gpuspec.acceptance.output import render
    from gpuspec.acceptance.report import acceptance_report
    from gpuspec.audit.inventory import read_input

    rendered = read_rendered(rendered_dir, cluster_name)
    export = parse_export(*read_input(jobs_source))
    report = acceptance_report(rendered, export)
    write_report(render(report, output_format), output_file)
    raise SystemExit(exitcodes.OK if report.passed else exitcodes.FINDINGS)
