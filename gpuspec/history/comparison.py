"""The fleet at two revisions: a base read from git and the head read from the working tree of one repository."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpuspec.errors import GpuspecError
from gpuspec.history.gitread import changed_paths, relative_to_repo, repo_root, resolve_commit
from gpuspec.history.revision import RevisionFleet, describe_finding, load_fleet_at
from gpuspec.loader.files import CLUSTERS_DIR, FLEET_FILE
from gpuspec.loader.fleetload import load_fleet
from gpuspec.model.fleet import Fleet


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


def load_head(fleet_dir: Path, only: Collection[str] | None = None) -> Fleet:
    """The working-tree fleet (or its cluster files named in ``only``), or a GpuspecError naming its first
    problems when it does not load."""
    result = load_fleet(fleet_dir, only)
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


def changed_cluster_files(root: Path, commit: str, fleet_rel: str) -> set[str] | None:
    """Names of the cluster files (``x.yaml``) that differ between ``commit`` and the working tree, or None
    when fleet.yaml differs (then every cluster may be affected)."""
    prefix = PurePosixPath(fleet_rel) if fleet_rel else PurePosixPath()
    clusters_dir = (prefix / CLUSTERS_DIR).as_posix()
    names: set[str] = set()
    for path in changed_paths(root, commit):
        pure = PurePosixPath(path)
        if path == (prefix / FLEET_FILE).as_posix():
            return None
        if pure.parent.as_posix() == clusters_dir:
            names.add(pure.name)
    return names


def compare_changed(fleet_dir: Path, base_rev: str) -> Comparison:
    """Like :func:`compare`, but when fleet.yaml is unchanged both sides hold only the cluster files that
    differ (git knows which): unchanged clusters cannot contribute a change, so they are not parsed."""
    if not fleet_dir.is_dir():
        return compare(fleet_dir, base_rev)
    root = repo_root(fleet_dir)
    fleet_rel = relative_to_repo(root, fleet_dir)
    names = changed_cluster_files(root, resolve_commit(root, base_rev), fleet_rel)
    if names is None:
        return compare(fleet_dir, base_rev)
    base = load_fleet_at(root, base_rev, fleet_rel, names)
    return Comparison(root, fleet_rel, base, load_head(fleet_dir, names))
