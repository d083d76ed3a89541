"""What drafting a cluster spec shares: the pool key and draft pool, and the commented YAML helpers of the draft."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap

from gpuspec.audit.facts import NodeFacts

TODO = "TODO: review"


@dataclass(frozen=True, order=True)
class PoolKey:
    """What makes nodes one pool: identical GPUs, OS, kernel, driver, MIG and sharing."""

    product: str
    count: int
    os_id: str
    os_version: str
    kernel: str
    driver: str
    driver_host: bool
    mig_strategy: str
    mig_config: str
    sharing: str
    replicas: int


@dataclass
class DraftPool:
    """A proposed pool: its nodes, name and selector."""

    key: PoolKey
    nodes: list[NodeFacts]
    name: str = ""
    selector: dict[str, str] = field(default_factory=dict)
    selector_proposed: bool = False
    product_known: bool = True
    taints: list[tuple[str, str, str]] = field(default_factory=list)


def as_int(text: str | None, default: int) -> int:
    """``text`` as an integer, ``default`` when absent or not a number."""
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def majority(values: Sequence[Any]) -> Any:
    """The most common value (ties: the one that sorts first as text)."""
    counts: dict[Any, int] = defaultdict(int)
    for value in values:
        counts[value] += 1
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[0][0]


def cmap(*items: tuple[str, Any]) -> CommentedMap:
    """A commented map of ``items``, in order."""
    cm = CommentedMap()
    for key, value in items:
        cm[key] = value
    return cm


def todo(cm: CommentedMap, key: str, text: str = TODO) -> None:
    """Mark ``key`` of ``cm`` ``# TODO: review`` (with ``text``)."""
    cm.yaml_add_eol_comment(text if text.startswith("TODO") else f"{TODO}: {text}", key)


def from_cluster(cm: CommentedMap, key: str, origin: str) -> None:
    """Say after ``key`` of ``cm`` where in the cluster its value was read."""
    cm.yaml_add_eol_comment(f"from the cluster: {origin}", key)
