"""`gpuspec tools install`: the pinned helm and kubectl for `verify`, and the CRDs of the fleet's platform releases."""

from __future__ import annotations

from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.errors import GpuspecError


@click.group("tools")
def tools_group() -> None:
    """External tools and schemas that `verify` uses (helm, kubectl with built-in kustomize, platform CRDs)."""


def _declared_platform(fleet_dir: Path) -> dict[str, str]:
    """The platform releases fleet.yaml declares; {} without a fleet folder."""
    if not (fleet_dir / "fleet.yaml").is_file():
        return {}
    from gpuspec.loader.fleetload import load_fleet

    load = load_fleet(fleet_dir)
    if load.fleet is None:
        raise GpuspecError(f"{fleet_dir} is not a usable fleet, so its platform releases are unknown",
                           hint="run `gpuspec validate`, or pass --no-crds")
    return load.fleet.settings.platform.declared()


@tools_group.command("install")
@click.option("--dest", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for the binaries (default: tools/bin in the user cache, $XDG_CACHE_HOME/gpuspec).")
@click.option("--force", is_flag=True, help="Re-install even when the pinned binaries are already there.")
@click.option("--fleet", "fleet_dir", type=click.Path(path_type=Path, file_okay=False), default=Path("fleet"),
              show_default=True, help="Fleet whose fleet.yaml `platform:` names the releases to fetch CRDs of.")
@click.option("--no-crds", is_flag=True, help="Install only helm and kubectl.")
@click.option("--no-binaries", is_flag=True, help="Fetch only the platform CRDs.")
def install_command(dest: Path | None, force: bool, fleet_dir: Path, no_crds: bool, no_binaries: bool) -> None:
    """Install the pinned helm and kubectl, and the pinned CRDs of the fleet's platform releases.

    Every download is checked against its pinned sha256. gpuspec finds the binaries there without further
    setup (after --helm/--kubectl, GPUSPEC_HELM/GPUSPEC_KUBECTL and a repository's .tools/bin, before PATH),
    and `verify` loads the CRDs of the Argo CD, Flux and Prometheus Operator releases fleet.yaml declares
    (`platform:`). Binaries: Linux amd64 only; elsewhere install helm >= 3.14 and kubectl yourself. Offline,
    vendor the CRDs and use `verify --crds DIR`. Exit 0 when installed or already present, 2 when a download
    or a hash check fails.
    """
    from gpuspec.tools.crd_pins import PROJECTS, CrdInstallError, install_release
    from gpuspec.tools.install import BINARIES, InstallError, install, user_tools_dir

    if not no_binaries:
        target = dest or user_tools_dir()
        try:
            done = install(target, force=force)
        except InstallError as exc:
            raise GpuspecError(str(exc)) from None
        versions = ", ".join(f"{name} {pin[2]}" for name, pin in BINARIES.items())
        click.echo(f"{'installed' if done else 'already installed'}: {versions} in {target}")
    if no_crds:
        raise SystemExit(exitcodes.OK)
    cache_root = user_tools_dir().parent.parent
    for project, version in sorted(_declared_platform(fleet_dir).items()):
        try:
            fetched = install_release(cache_root, project, version)
        except CrdInstallError as exc:
            raise GpuspecError(f"{PROJECTS.get(project, project)} CRDs: {exc}") from None
        click.echo(f"{'installed' if fetched else 'already installed'}: CRDs of {PROJECTS[project]} {version}")
    raise SystemExit(exitcodes.OK)
