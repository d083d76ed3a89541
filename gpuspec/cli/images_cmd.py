"""`gpuspec images`: every image each cluster pulls, as a list or as skopeo copy commands for mirroring."""

from __future__ import annotations

import shlex
from datetime import date
from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import fleet_argument, policies_option, today_option
from gpuspec.cli.render_cmd import prepared_or_exit
from gpuspec.errors import GpuspecError


@click.command("images")
@fleet_argument
@policies_option
@click.option("--cluster", "clusters", multiple=True, metavar="NAME",
              help="Only this cluster (repeatable); default every cluster.")
@click.option("--format", "output_format", type=click.Choice(["list", "skopeo"]), default="list", show_default=True,
              help="list: the references clusters pull (mirror-rewritten); skopeo: copy commands upstream → mirror.")
@today_option
def images_command(fleet_dir: Path, policies_dir: Path, clusters: tuple[str, ...], output_format: str,
                   today: date | None) -> None:
    """Print every image:tag the clusters pull, sorted and de-duplicated.

    Driver images are listed once per node OS (and per kernel for precompiled
    drivers). With --format skopeo, print one `skopeo copy` command per image
    an air-gapped cluster needs mirrored; online clusters need none.
    """
    prepared = prepared_or_exit(fleet_dir, policies_dir, "images", render=False, only=clusters or None,
                                today=today)
    assert prepared.rendered is not None
    images = prepared.rendered.images
    known = set(images)
    unknown = sorted(set(clusters) - known)
    if unknown:
        raise GpuspecError(f"no cluster named {', '.join(unknown)} in {fleet_dir}",
                           hint=f"clusters: {', '.join(sorted(known))}")
    selected = [images[name] for name in sorted(known) if not clusters or name in clusters]
    if output_format == "list":
        refs = sorted({pulled for pairs in selected for pulled in pairs.values()})
        for ref in refs:
            click.echo(ref)
        raise SystemExit(exitcodes.OK)
    copies = sorted({(up, pulled) for pairs in selected for up, pulled in pairs.items() if up != pulled})
    if not copies:
        click.echo("# no air-gapped cluster selected: nothing to mirror")
    for upstream, pulled in copies:
        click.echo(f"skopeo copy --all {shlex.quote('docker://' + upstream)} {shlex.quote('docker://' + pulled)}")
    raise SystemExit(exitcodes.OK)
