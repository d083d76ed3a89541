"""`gpuspec init [DIR]`: a new fleet repository that validates, lints and renders at once."""

from __future__ import annotations

import re
from pathlib import Path

import click

from gpuspec import exitcodes


@click.command("init")
@click.argument("target", required=False, default=".", type=click.Path(path_type=Path))
@click.option("--name", default=None, metavar="NAME", help="Fleet name (default: from the folder's name).")
@click.option("--repo-url", default=None, metavar="URL",
              help="URL of the git repository Argo CD / Flux sync rendered/ from (default: a placeholder to edit).")
@click.option("--force", is_flag=True, help="Write into a folder that is not empty (replaces files of the same names).")
def init_command(target: Path, name: str | None, repo_url: str | None, force: bool) -> None:
    """Create a fleet repository in DIR (default: the current folder) that validates, lints and renders at once.

    Writes fleet/fleet.yaml (commented: git source, channels, policy packs, an
    optional mirror), fleet/clusters/example.yaml (a commented example
    cluster to copy or replace), policies/site.yaml (a pack extending
    default), a GitHub workflow and a pre-commit configuration using
    gpuspec's action and hooks, a .gitignore and a README. Refuses a folder that is not empty
    unless --force. Exit 0 when written, 2 when refused.
    """
    from gpuspec.model.models import DNS_LABEL_PATTERN
    from gpuspec.pipeline.scaffold import DEFAULT_REPO_URL, fleet_name, skeleton, write_skeleton

    chosen = name or fleet_name(target)
    if not re.match(DNS_LABEL_PATTERN, chosen):
        raise click.BadParameter(f"{chosen!r} is not a DNS label (lower-case letters, digits, '-')",
                                 param_hint="--name")
    written = write_skeleton(target, skeleton(chosen, repo_url or DEFAULT_REPO_URL), force=force)
    click.echo(f"wrote fleet repository {chosen} into {target} ({len(written)} files):")
    for path in written:
        click.echo(f"  {path}")
    click.echo("next: edit fleet/fleet.yaml (git.repoURL), add your clusters (gpuspec import), then "
               "`gpuspec lint` and `gpuspec render`")
    raise SystemExit(exitcodes.OK)
