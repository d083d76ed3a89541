"""Keep only the values the pinned chart reads (pure).

The values gpuspec derives name every operand's image, mirror-rewritten on an air-gapped cluster, so that enabling
an operand later cannot pull from a public registry.  Some chart releases never read those values while the
operand is off: at v24.9.2 ``templates/clusterpolicy.yaml`` writes ``gds.repository``/``image``/``version`` only
inside ``if .Values.gds.enabled``.  Written anyway, they are values that mean nothing, and ``gpuspec verify`` with
the real chart refuses them (GS930: never reaches the ClusterPolicy; GS931: no template reads the key).

:func:`drop_unread` removes, from the values of one cluster, every leaf the chart-intent data of the release says
no template line writes with these values (every line's ``if`` is false) or no template reads at all -- the same
judgement verify makes (:func:`gpuspec.matrix.chartintent.expected_fields`).  Values set by the cluster's
``overrides`` are never removed (verify reports them to whoever wrote them).  Releases without packaged
chart-intent data are left as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from gpuspec.matrix.chartintent import chart_intent, expected_fields
from gpuspec.matrix.chartspec import defaults_tree
from gpuspec.matrix.chartvalues import chart_index

#: Top-level keys of subcharts and Helm's globals: their templates are not in the intent data.
NOT_JUDGED = frozenset({"global", "node-feature-discovery"})
#: Passes at most: dropping a value can make a guard of another value false (a fixpoint comes after one or two).
MAX_PASSES = 3


@functools.cache
def _defaults(tag: str) -> tuple[dict[str, Any], frozenset[str]]:
    """The chart's values.yaml defaults of ``tag`` as a tree, and its subchart names (empty when unknown)."""
    index = chart_index(tag)
    if index is None:
        return {}, frozenset()
    return defaults_tree(index), frozenset(index.subcharts)


def unread_paths(values: Mapping[str, Any], tag: str) -> list[str]:
    """Dotted leaf paths of ``values`` that the chart of release ``tag`` writes nowhere with these values, or
    reads nowhere (sorted; empty without intent data for ``tag``)."""
    intent = chart_intent(tag)
    if intent is None:
        return []
    defaults, subcharts = _defaults(tag)
    expected = expected_fields(values, defaults, intent, skip_roots=NOT_JUDGED | subcharts)
    return sorted({n.values_path for n in expected.not_rendered} | set(expected.unread))


def _covered(path: str, kept: Iterable[str]) -> bool:
    return any(path == k or path.startswith(k + ".") or k.startswith(path + ".") for k in kept)


def _remove(tree: dict[str, Any], path: str) -> None:
    """Delete the leaf at ``path`` and every map that is empty because of it."""
    parts = path.split(".")
    trail: list[tuple[dict[str, Any], str]] = []
    node: Any = tree
    for part in parts[:-1]:
        if not isinstance(node, dict) or not isinstance(node.get(part), dict):
            return
        trail.append((node, part))
        node = node[part]
    if not isinstance(node, dict) or parts[-1] not in node:
        return
    del node[parts[-1]]
    for parent, key in reversed(trail):
        if parent[key]:
            break
        del parent[key]


def drop_unread(values: dict[str, Any], tag: str, overridden: Iterable[str] = ()) -> list[str]:
    """Remove from ``values`` (in place) what the chart of ``tag`` never reads with them; return the removed paths.

    ``overridden``: the paths the cluster's ``overrides`` set, which stay whatever the chart does with them.
    """
    kept = list(overridden)
    removed: list[str] = []
    for _ in range(MAX_PASSES):
        drop = [p for p in unread_paths(values, tag) if not _covered(p, kept)]
        if not drop:
            break
        for path in drop:
            _remove(values, path)
        removed += drop
    return sorted(removed)
