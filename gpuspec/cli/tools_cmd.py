"""`gpuspec tools install`: the pinned, hash-checked helm and kubectl for `verify`, in the user cache."""

from __future__ import annotations

from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.errors import GpuspecError


@click.group("tools")
def tools_group() -> None:
    """External tools that `verify` drives (helm, kubectl with built-in kustomize)."""


@tools_group.command("install")
@click.option("--dest", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for the binaries (default: tools/bin in the user cache, $XDG_CACHE_HOME/gpuspec).")
@click.option("--force", is_flag=True, help="Re-install even when the pinned binaries are already there.")
def install_command(dest: Path | None, force: bool) -> None:
    """Install the pinned helm and kubectl, checking every download against its pinned sha256.

    gpuspec finds them there without further setup (after --helm/--kubectl, GPUSPEC_HELM/GPUSPEC_KUBECTL
    and a repository's .tools/bin, before PATH). Linux amd64 only; elsewhere install helm >= 3.14 and
    kubectl yourself. Exit 0 when installed or already present, 2 when the download or a hash check fails.
    """
    from gpuspec.tools.install import BINARIES, InstallError, install, user_tools_dir

    target = dest or user_tools_dir()
    try:
        done = install(target, force=force)
    except InstallError as exc:
        raise GpuspecError(str(exc)) from None
    versions = ", ".join(f"{name} {pin[2]}" for name, pin in BINARIES.items())
    click.echo(f"{'installed' if done else 'already installed'}: {versions} in {target}")
    raise SystemExit(exitcodes.OK)
