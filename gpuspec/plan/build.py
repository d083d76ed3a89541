"""Load the base (from git) and the head (working tree) fleets and turn their difference into a Plan."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuspec.errors import GpuspecError
from gpuspec.loader.fleetload import load_fleet
from gpuspec.plan.diff import diff_fleets
from gpuspec.plan.fleetrev import RevisionFleet, describe_finding, load_fleet_at
from gpuspec.plan.gitread import relative_to_repo, repo_root
from gpuspec.plan.model import Plan
from gpuspec.spec.models import Fleet


@dataclass(frozen=True)
class Comparison:
    """A base fleet read from git and the head fleet read from the working tree of the same repository."""

    repo_root: Path
    fleet_rel: str
    base: RevisionFleet
    head: Fleet

    @property
    def base_fleet(self) -> Fleet:
        """The usable base fleet (a GpuspecError when the base is unusable)."""
        return self.base.require()


def load_head(fleet_dir: Path) -> Fleet:
    """The working-tree fleet, or a GpuspecError naming its first problems when it does not load."""
    result = load_fleet(fleet_dir)
    if result.fleet is not None:
        return result.fleet
    lines = [describe_finding(f) for f in result.findings[:5]]
    if len(result.findings) > len(lines):
        lines.append(f"... and {len(result.findings) - len(lines)} more")
    raise GpuspecError(
        f"the fleet in {fleet_dir} is unusable:\n  " + "\n  ".join(lines),
        hint="run `gpuspec validate` and fix these first",
    )


def compare(fleet_dir: Path, base_rev: str, head: Fleet | None = None, *, repo: Path | None = None) -> Comparison:
    """Read the fleet at ``base_rev`` from git and the head fleet from ``fleet_dir`` (or take ``head`` as given).

    ``repo`` is the git work tree (None: the one that contains ``fleet_dir``).
    """
    if fleet_dir.exists() and not fleet_dir.is_dir():
        raise GpuspecError(f"{fleet_dir} is not a directory; expected a fleet directory")
    if not fleet_dir.is_dir():
        raise GpuspecError(f"fleet directory {fleet_dir} does not exist",
                           hint="run gpuspec in a fleet repository or pass the fleet directory")
    root = repo_root(fleet_dir) if repo is None else repo_root(repo)
    fleet_rel = relative_to_repo(root, fleet_dir)
    base = load_fleet_at(root, base_rev, fleet_rel)
    return Comparison(root, fleet_rel, base, head if head is not None else load_head(fleet_dir))


def build_plan(fleet_dir: Path, base_rev: str) -> Plan:
    """The plan of every change from the fleet at ``base_rev`` to the working tree's fleet in ``fleet_dir``."""
    comparison = compare(fleet_dir, base_rev)
    base = comparison.base_fleet
    return Plan(base_rev, comparison.base.commit, diff_fleets(base, comparison.head))
