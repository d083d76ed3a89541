"""Group node selectors that one node can match, in time near-linear in the number of selectors.

Two selectors overlap when one is a subset of the other (every node of the
narrower pool also matches the wider one); in ``strict`` mode also when they
merely do not contradict each other (no shared key with different values).
Overlap is closed transitively into groups, so n pools with one selector give
one group, not n(n-1)/2 pairs.

Subsets are found by looking each selector's own subsets up in a hash map
(2^k lookups for a selector of k labels, k is small); selectors with more
than :data:`MAX_ENUMERATED_LABELS` labels are compared directly.  Strict mode
first splits the selectors by the value of a key they all carry (such
selectors can only overlap within one value), then walks the remaining
compatibility graph once, removing each selector from the unvisited set as
it is reached.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import combinations

#: Selectors with more labels than this are compared pairwise instead of enumerating their subsets.
MAX_ENUMERATED_LABELS = 10

Selector = frozenset[tuple[str, str]]


class _Groups:
    """Union-find over indexes."""

    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        root = item
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[item] != root:
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _subset_links(distinct: Sequence[Selector], groups: _Groups) -> None:
    index = {selector: i for i, selector in enumerate(distinct)}
    large = [i for i, s in enumerate(distinct) if len(s) > MAX_ENUMERATED_LABELS]
    for i, selector in enumerate(distinct):
        if len(selector) > MAX_ENUMERATED_LABELS:
            continue
        items = sorted(selector)
        for size in range(len(items)):
            for subset in combinations(items, size):
                j = index.get(frozenset(subset))
                if j is not None:
                    groups.union(i, j)
    for i in large:
        for j, other in enumerate(distinct):
            if i != j and (other <= distinct[i] or distinct[i] <= other):
                groups.union(i, j)


def _compatible(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    small, big = (a, b) if len(a) <= len(b) else (b, a)
    return all(big.get(k, v) == v for k, v in small.items())


def _strict_links(members: list[int], maps: Sequence[Mapping[str, str]], groups: _Groups) -> None:
    if len(members) < 2:
        return
    common = set(maps[members[0]])
    for m in members[1:]:
        common &= maps[m].keys()
        if not common:
            break
    if common:
        key = min(common)
        parts: dict[str, list[int]] = defaultdict(list)
        for m in members:
            parts[maps[m][key]].append(m)
        if len(parts) > 1:
            for part in parts.values():
                _strict_links(part, maps, groups)
            return
    unvisited = set(members)
    while unvisited:
        start = unvisited.pop()
        queue = [start]
        while queue:
            current = queue.pop()
            reached = [m for m in unvisited if _compatible(maps[current], maps[m])]
            for m in reached:
                unvisited.discard(m)
                groups.union(current, m)
            queue.extend(reached)


def overlapping_groups(selectors: Sequence[Mapping[str, str]], strict: bool = False) -> list[list[int]]:
    """Indexes of the selectors that overlap, as groups of two or more, each sorted, in order of first index."""
    distinct: list[Selector] = []
    slot: dict[Selector, int] = {}
    of_index: list[int] = []
    for selector in selectors:
        key = frozenset(selector.items())
        if key not in slot:
            slot[key] = len(distinct)
            distinct.append(key)
        of_index.append(slot[key])
    groups = _Groups(len(distinct))
    if strict:
        maps = [dict(s) for s in distinct]
        _strict_links(list(range(len(distinct))), maps, groups)
    else:
        _subset_links(distinct, groups)
    members: dict[int, list[int]] = defaultdict(list)
    for index, d in enumerate(of_index):
        members[groups.find(d)].append(index)
    return sorted((m for m in members.values() if len(m) > 1), key=lambda m: m[0])
