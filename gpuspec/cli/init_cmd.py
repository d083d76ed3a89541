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
@click.option("--source", default=None, metavar="SOURCE",
              help="Where the fleet repository's CI installs gpuspec from: gpuspec==X.Y.Z, "
                   "git+https://github.com/OWNER/gpuspec@COMMIT (also pins the action and the pre-commit hooks to "
                   "that commit) or the path or URL of a gpuspec wheel. Default: where this gpuspec was released "
                   "from.")
@click.option("--force", is_flag=True, help="Write into a folder that is not empty (replaces files of the same names).")
def init_command(target: Path, name: str | None, repo_url: str | None, source: str | None, force: bool) -> None:
    """Create a fleet repository in DIR (default: the current folder) that validates, lints and renders at once.

    Writes fleet/fleet.yaml (commented: git source, channels, policy packs, an
    optional mirror), fleet/clusters/example.yaml (a commented example
    cluster to copy or replace), policies/site.yaml (a pack extending
    default), a GitHub workflow and a pre-commit configuration using
    gpuspec's action and hooks, a .gitignore and a README. The CI files install
    gpuspec from --source (default: where this gpuspec was released from) and
    pin the action and the hooks by commit; a gpuspec that knows no source
    writes no CI file and says so. Refuses a folder that is not empty
    unless --force. Exit 0 when written, 2 when refused.
    """
    from gpuspec.model.patterns import DNS_LABEL_PATTERN
    from gpuspec.origin import SourceError, parse_source
    from gpuspec.pipeline.scaffold import DEFAULT_REPO_URL, fleet_name, skeleton, write_skeleton

    chosen = name or fleet_name(target)
    if not re.match(DNS_LABEL_PATTERN, chosen):
        raise click.BadParameter(f"{chosen!r} is not a DNS label (lower-case letters, digits, '-')",
                                 param_hint="--name")
    try:
        origin = parse_source(source) if source is not None else None
    except SourceError as bad:
        raise click.BadParameter(str(bad), param_hint="--source") from None
    files = skeleton(chosen, repo_url or DEFAULT_REPO_URL, origin)
    written = write_skeleton(target, files, force=force)
    click.echo(f"wrote fleet repository {chosen} into {target} ({len(written)} files):")
    for path in written:
        click.echo(f"  {path}")
    for path, reason in files.skipped.items():
        click.echo(f"not written: {path} ({reason}): this gpuspec does not know where it was released from; "
                   "run `gpuspec init --force --source git+https://github.com/OWNER/gpuspec@COMMIT` "
                   "(docs/github-action.md)", err=True)
    click.echo("next: edit fleet/fleet.yaml (git.repoURL), add your clusters (gpuspec import), then "
               "`gpuspec lint` and `gpuspec render`")
    raise SystemExit(exitcodes.OK)
