"""Path patterns that select spec nodes for custom rules: ``clusters[*].pools[*]``, ``fleet.mirrors[dc-north]``.

Grammar: dot-separated steps; a step is a key (or ``*`` for every key)
followed by any number of ``[…]`` item selectors: ``*`` (every item), an index
(``0``) or a name (the item whose ``name`` or ``metadata.name`` equals it).
The first step is ``fleet`` (fleet.yaml) or ``clusters`` (the cluster files).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuspec.findings import DocPath

if TYPE_CHECKING:
    from gpuspec.model.fleet import Fleet

_STEP = re.compile(r"^(?P<key>\*|[A-Za-z_][A-Za-z0-9_\-]*)(?P<items>(\[[^\[\]]+\])*)$")
_ITEM = re.compile(r"\[([^\[\]]+)\]")


class SelectorError(ValueError):
    """A path pattern that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step: a key (``*`` = any) and its item selectors."""

    key: str
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Selected:
    """A node a pattern selected: its file, document path and (dumped) data."""

    file: str
    path: DocPath
    node: Any


def parse_selector(pattern: str) -> list[Step]:
    """Parse ``pattern`` into steps; raise SelectorError when it is malformed."""
    steps: list[Step] = []
    for part in pattern.strip().split("."):
        match = _STEP.match(part.strip())
        if not match:
            raise SelectorError(f"{part!r} is not a key with optional [*], [index] or [name] selectors")
        steps.append(Step(match["key"], tuple(i.strip() for i in _ITEM.findall(match["items"]))))
    if not steps or steps[0].key not in ("fleet", "clusters"):
        raise SelectorError(f"{pattern!r} must start with 'fleet' or 'clusters'")
    if steps[0].key == "fleet" and steps[0].items:
        raise SelectorError("'fleet' is one document; select inside it, e.g. fleet.mirrors[*]")
    return steps


def item_name(item: Any) -> str | None:
    if isinstance(item, dict):
        if isinstance(item.get("name"), str):
            return str(item["name"])
        meta = item.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            return str(meta["name"])
    return None


def _items(node: Any, selector: str) -> Iterator[tuple[int, Any]]:
    if not isinstance(node, list):
        return
    for index, item in enumerate(node):
        if selector == "*" or (selector.isdigit() and int(selector) == index) or item_name(item) == selector:
            yield index, item


def _walk(node: Any, path: DocPath, steps: list[Step]) -> Iterator[tuple[DocPath, Any]]:
    if not steps:
        yield path, node
        return
    step, rest = steps[0], steps[1:]
    if not isinstance(node, dict):
        return
    keys = list(node) if step.key == "*" else [step.key] if step.key in node else []
    for key in keys:
        yield from _walk_items(node[key], (*path, key), step.items, rest)


def _walk_items(node: Any, path: DocPath, items: tuple[str, ...], rest: list[Step]) -> Iterator[tuple[DocPath, Any]]:
    if not items:
        yield from _walk(node, path, rest)
        return
    for index, item in _items(node, items[0]):
        yield from _walk_items(item, (*path, index), items[1:], rest)


def select(fleet: Fleet, steps: list[Step]) -> Iterator[Selected]:
    """Every node of the fleet's effective spec (defaults filled in) that ``steps`` select."""
    first, rest = steps[0], steps[1:]
    if first.key == "fleet":
        data = fleet.settings.model_dump(mode="json", by_alias=True, exclude_none=True)
        for path, node in _walk(data, (), rest):
            yield Selected(fleet.settings_file, path, node)
        return
    clusters = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in fleet.clusters]
    selectors = first.items or ("*",)
    for index, _ in _items(clusters, selectors[0]):
        cluster = fleet.clusters[index]
        for path, node in _walk_items(clusters[index], (), selectors[1:], rest):
            yield Selected(cluster.source_file, path, node)
