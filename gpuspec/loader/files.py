"""Where a fleet's files are and how their paths are shown (no YAML, no models: cheap to import)."""

from __future__ import annotations

import os
from pathlib import Path

FLEET_FILE = "fleet.yaml"
CLUSTERS_DIR = "clusters"
YAML_SUFFIXES = (".yaml", ".yml")


def display_path(path: Path) -> str:
    """The path as a user should see it: relative to the working directory when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def cluster_files(fleet_dir: Path) -> list[Path]:
    """The cluster spec files of a fleet directory, sorted by name."""
    clusters_dir = fleet_dir / CLUSTERS_DIR
    if not clusters_dir.is_dir():
        return []
    return sorted(
        p for p in clusters_dir.iterdir() if p.name.endswith(YAML_SUFFIXES) and not p.name.startswith(".")
    )
