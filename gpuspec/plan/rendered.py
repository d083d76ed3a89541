"""The rendered files a change touches: every file of the rendered folder that differs between the base revision
and the working tree, as a reviewer sees them in the pull request's diff.

``gpuspec plan`` lists them beside the spec changes, and on their own ("rendered only") when the rollout model
sees no change of the spec's meaning (a label, an acceptance setting, a comment a template prints), so a plan
never says "no fleet changes" over a diff of rendered/.  Which files differ comes from git (the paths
:func:`gpuspec.history.gitread.changed_paths` names, no file read); which cluster each belongs to from the
output layout.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuspec.history.gitread import list_tree
from gpuspec.render.layout import cluster_of

#: How a rendered file differs from the base's.
ADDED, REMOVED, CHANGED = "added", "removed", "changed"


@dataclass(frozen=True)
class RenderedChange:
    """One file of the rendered folder that the change adds, removes or changes."""

    #: Path relative to the rendered folder (``clusters/train-east/gpu-operator.values.yaml``).
    path: str
    status: str
    #: The cluster whose output holds it; None for a fleet-wide file.
    cluster: str | None

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        return {"path": self.path, "status": self.status, "cluster": self.cluster}


def rendered_changes(repo_root: Path, base_commit: str, rendered_rel: str,
                     changed: Sequence[str]) -> list[RenderedChange]:
    """The files under ``rendered_rel`` (repository-relative) among ``changed`` (repository-relative paths that
    differ between ``base_commit`` and the working tree), by cluster (fleet-wide files first), then path."""
    prefix = f"{rendered_rel.rstrip('/')}/" if rendered_rel else ""
    inside = [p for p in changed if p.startswith(prefix)]
    if not inside:
        return []
    in_base = {e.path for e in list_tree(repo_root, base_commit, rendered_rel)}
    out = []
    for path in inside:
        if path not in in_base:
            status = ADDED
        elif not os.path.lexists(repo_root / path):
            status = REMOVED
        else:
            status = CHANGED
        rel = path[len(prefix):]
        out.append(RenderedChange(rel, status, cluster_of(rel)))
    return sorted(out, key=lambda c: (c.cluster is not None, c.cluster or "", c.path))


def by_cluster(changes: Sequence[RenderedChange]) -> dict[str, list[RenderedChange]]:
    """``changes`` grouped by cluster (``(fleet)`` for the fleet-wide files), in their order."""
    out: dict[str, list[RenderedChange]] = {}
    for change in changes:
        out.setdefault(change.cluster or "(fleet)", []).append(change)
    return out
