"""`gpuspec codeowners`: the CODEOWNERS section of the fleet repository, from the spec's ownership."""

from __future__ import annotations

from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import fleet_argument, policies_option
from gpuspec.cli.render_cmd import report_findings
from gpuspec.errors import GpuspecError
from gpuspec.escaping import terminal


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise GpuspecError(
            f"{path} is not inside the repository root {root}",
            hint="pass --root, the folder that holds .github/ (or CODEOWNERS)",
        ) from None


def _target(root: Path, file: Path | None) -> Path:
    from gpuspec.render.codeowners import LOCATIONS

    if file is not None:
        return file if file.is_absolute() else root / file
    for location in LOCATIONS:
        if (root / location).is_file():
            return root / location
    return root / LOCATIONS[0]


#: GitHub ignores a CODEOWNERS file larger than 3 MB; gpuspec reads no more.
MAX_CODEOWNERS_BYTES = 3 * 1024 * 1024


def _read(path: Path) -> str:
    """The text of the CODEOWNERS file ``path`` ('' when absent), read as every file read by name is."""
    from gpuspec.loader.safefile import safe_read

    data = safe_read(path, MAX_CODEOWNERS_BYTES, expected="a CODEOWNERS file", missing_ok=True)
    try:
        return "" if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise GpuspecError(f"{path}: cannot read: not UTF-8 text") from None


def _write(path: Path, text: str) -> None:
    """Replace the CODEOWNERS file ``path`` with ``text``: never through a link, never into .git (safe_write)."""
    from gpuspec.loader.safefile import safe_write

    safe_write(path, text, parents=True)


@click.command("codeowners")
@fleet_argument
@policies_option
@click.option(
    "--rendered",
    "rendered_dir",
    default="rendered",
    show_default=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder of the rendered output.",
)
@click.option(
    "--root",
    "root",
    default=None,
    type=click.Path(path_type=Path, file_okay=False),
    help="Repository root CODEOWNERS paths are relative to (default: the folder above FLEET_DIR).",
)
@click.option(
    "--file",
    "file",
    default=None,
    type=click.Path(path_type=Path, dir_okay=False),
    help="CODEOWNERS file (default: the first of .github/CODEOWNERS, CODEOWNERS, docs/CODEOWNERS that "
    "exists, else .github/CODEOWNERS).",
)
@click.option("--write", "mode", flag_value="write", help="Write gpuspec's section into the file (the rest is kept).")
@click.option(
    "--check",
    "mode",
    flag_value="check",
    help="Exit 1 when the file lacks gpuspec's current section (missing or stale).",
)
def codeowners_command(
    fleet_dir: Path, policies_dir: Path, rendered_dir: Path, root: Path | None, file: Path | None, mode: str | None
) -> None:
    """Print the CODEOWNERS section that makes each cluster's owners review its files.

    The fleet's platform team owns fleet/, policies/ and rendered/; each cluster's
    spec file, rendered folders and handover document are owned by its platform
    team and the hardware teams of the cluster and its pools (each team's
    `codeOwners` in fleet.yaml). --write puts the section between gpuspec's
    marker lines in the repository's CODEOWNERS (other lines are kept); --check
    exits 1 when that section is missing or stale, for CI. Bad input exits 2.
    """
    from gpuspec.loader.fleetload import load_fleet
    from gpuspec.render.codeowners import codeowners_section, section_in, splice

    result = load_fleet(fleet_dir)
    if result.fleet is None:
        report_findings(result.findings, "codeowners", raw=result.raw)
        raise SystemExit(exitcodes.INPUT_ERROR)
    folder = fleet_dir if fleet_dir.is_dir() else fleet_dir.parent
    repo = root if root is not None else folder.resolve().parent
    section = codeowners_section(
        result.fleet, _relative(folder, repo), _relative(policies_dir, repo), _relative(rendered_dir, repo)
    )
    target = _target(repo, file)
    if mode is None:
        click.echo("\n".join(terminal(line) for line in section))
        raise SystemExit(exitcodes.OK)
    existing = _read(target)
    if mode == "check":
        found = section_in(existing)
        if found == section:
            click.echo(f"codeowners: {terminal(str(target))} has gpuspec's current section")
            raise SystemExit(exitcodes.OK)
        state = "has no gpuspec section" if found is None else "has a stale gpuspec section"
        click.echo(f"codeowners: {terminal(str(target))} {state}; run `gpuspec codeowners --write`", err=True)
        raise SystemExit(exitcodes.FINDINGS)
    updated = splice(existing, section)
    if updated != existing:
        _write(target, updated)
        click.echo(f"codeowners: wrote gpuspec's section to {terminal(str(target))}")
    else:
        click.echo(f"codeowners: {terminal(str(target))} is up to date")
    raise SystemExit(exitcodes.OK)
