"""The layout of the output folder: which cluster each rendered file belongs to, and which files are fleet-wide.

A cluster's files lie under ``clusters/<name>/``, ``gitops/<tool>/<name>/`` and in ``handover/<name>.md``; the
fleet-wide files are the bootstrap objects (``gitops/<tool>/_bootstrap/``: ``_`` cannot start a cluster name),
the handover index (``handover/README.md``: a cluster name has no capitals) and the generator stamp.
"""

from __future__ import annotations

from gpuspec.render.bootstrap import BOOTSTRAP_DIR
from gpuspec.render.generator import STAMP_PATH

#: The handover folder and its fleet index (the same names as :mod:`gpuspec.handover.documents`, which lies above).
_HANDOVER = "handover/"
_INDEX = f"{_HANDOVER}README.md"
_GITOPS_TOOLS = ("argocd", "flux")


def cluster_of(rel: str) -> str | None:
    """The cluster whose output holds the file ``rel`` (relative to the output folder); None for a fleet-wide
    file or a path outside the layout."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] == "clusters":
        return parts[1]
    if len(parts) >= 4 and parts[0] == "gitops" and parts[1] in _GITOPS_TOOLS and parts[2] != BOOTSTRAP_DIR:
        return parts[2]
    if len(parts) == 2 and rel.startswith(_HANDOVER) and rel != _INDEX and rel.endswith(".md"):
        return parts[1][: -len(".md")]
    return None


def is_fleetwide(rel: str) -> bool:
    """True when ``rel`` is one of the files rendered from the whole fleet (bootstrap objects, handover index,
    generator stamp)."""
    parts = rel.split("/")
    bootstrap = len(parts) == 4 and parts[0] == "gitops" and parts[1] in _GITOPS_TOOLS and parts[2] == BOOTSTRAP_DIR
    return bootstrap or rel in (_INDEX, STAMP_PATH)
