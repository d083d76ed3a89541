"""`gpuspec render`: validate, then compile the fleet into rendered/ (or check that rendered/ is current)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from gpuspec import __version__, exitcodes
from gpuspec.cli.common import DEFAULT_RENDERED, fleet_argument, policies_option, use_color
from gpuspec.findings import Finding
from gpuspec.loader.positions import locate_findings
from gpuspec.render.run import Prepared, prepare
from gpuspec.render.writer import check_output, write_output
from gpuspec.report.base import ReportContext
from gpuspec.report.registry import reporter


def report_findings(findings: Sequence[Finding], command: str) -> None:
    """Print findings as text on standard error (standard output stays for the diff / summary)."""
    if not findings:
        return
    context = ReportContext(tool_version=__version__, command=command, color=use_color(sys.stderr))
    click.echo(reporter("text").render(locate_findings(findings), context), err=True, nl=False)


def prepared_or_exit(fleet_dir: Path, policies_dir: Path, command: str) -> Prepared:
    """Validate and compile; on unusable input exit 2, on errors exit 1 (after printing the findings)."""
    prepared = prepare(fleet_dir, policies_dir)
    report_findings(prepared.validation.findings, command)
    if not prepared.validation.load.usable:
        raise SystemExit(exitcodes.INPUT_ERROR)
    if prepared.rendered is None:
        click.echo(f"gpuspec {command}: the fleet has errors; nothing was written", err=True)
        raise SystemExit(exitcodes.FINDINGS)
    return prepared


@click.command("render")
@fleet_argument
@policies_option
@click.option("--out", "out_dir", default=str(DEFAULT_RENDERED), show_default=True,
              type=click.Path(path_type=Path, file_okay=False), help="Output folder.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff when the output folder is stale.")
def render_command(fleet_dir: Path, policies_dir: Path, out_dir: Path, check: bool) -> None:
    """Compile the fleet into pinned Helm values, Kustomize overlays and Argo CD / Flux objects.

    Runs `validate` first: any error writes nothing (exit 1), unusable input exits 2.
    The output is byte-stable and written atomically; only changed files are
    rewritten and files of removed clusters are deleted. With --check nothing
    is written: exit 0 when the output folder is up to date, else exit 1 and
    print a unified diff.
    """
    prepared = prepared_or_exit(fleet_dir, policies_dir, "render")
    assert prepared.rendered is not None
    expected = prepared.rendered.files
    count = len(prepared.rendered.clusters)
    if check:
        drifts = check_output(out_dir, expected, out_dir.name or "rendered")
        for drift in drifts:
            click.echo(drift.diff, nl=False)
        if drifts:
            click.echo(f"gpuspec render --check: {len(drifts)} file(s) in {out_dir} are stale or hand-edited; "
                       "run `gpuspec render` and commit the result", err=True)
            raise SystemExit(exitcodes.FINDINGS)
        click.echo(f"{out_dir}: up to date ({len(expected)} files, {count} clusters)")
        raise SystemExit(exitcodes.OK)
    result = write_output(out_dir, expected)
    click.echo(
        f"rendered {count} cluster(s) into {out_dir}: {len(result.written)} written, "
        f"{len(result.unchanged)} unchanged, {len(result.deleted)} deleted"
    )
    raise SystemExit(exitcodes.OK)
