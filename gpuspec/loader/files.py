"""Where a fleet's files are and how their paths are shown (no YAML, no models: cheap to import)."""

from __future__ import annotations

import os
from pathlib import Path

FLEET_FILE = "fleet.yaml"
CLUSTERS_DIR = "clusters"
YAML_SUFFIXES = (".yaml", ".yml")


def display_path(path: Path) -> str:
    """The path as a user should see it: relative to the working directory when below it."""
    text = os.fspath(path)
    if not os.path.isabs(text) and not text.startswith("..") and os.path.normpath(text) == text:
        return text  # below the working directory already, as relpath would give it (without its two abspaths)
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def repository_path(path: str) -> str:
    """A fleet file's path from the folder that holds the fleet directory (the repository root of the
    standard layout), e.g. ``fleet/clusters/a.yaml``, whatever the working directory or the path given.

    Rendered output names source files this way, so it does not depend on where gpuspec was run from.
    """
    resolved = Path(os.path.abspath(path))
    parts = resolved.parts
    if len(parts) >= 3 and parts[-2] == CLUSTERS_DIR:
        return "/".join(parts[-3:])
    return "/".join(parts[-2:]) if len(parts) >= 2 else resolved.name


def cluster_files(fleet_dir: Path) -> list[Path]:
    """The cluster spec files of a fleet directory, sorted by name."""
    clusters_dir = fleet_dir / CLUSTERS_DIR
    if not clusters_dir.is_dir():
        return []
    # Names, not paths, are sorted: the same order (one folder) at a fraction of pathlib's comparisons.
    with os.scandir(clusters_dir) as entries:
        names = sorted(e.name for e in entries if e.name.endswith(YAML_SUFFIXES) and not e.name.startswith("."))
    return [clusters_dir / name for name in names]


def shard_name(file: str) -> str | None:
    """What chooses a fleet file's shard in the per-cluster caches (see :class:`gpuspec.usercache.ShardedMemo`):
    a cluster file's name without its suffix; None for a file outside clusters/ (fleet.yaml)."""
    head, base = os.path.split(file)
    if os.path.basename(head) != CLUSTERS_DIR:
        return None
    return base.rsplit(".", 1)[0]
