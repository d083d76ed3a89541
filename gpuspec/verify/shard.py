"""``verify --shard K/N``: split a fleet's clusters over N CI jobs, each cluster always in the same shard.

A cluster's shard depends only on its name (sha256 of the name modulo N), so adding or removing other
clusters never moves it, and the N shards together cover every cluster exactly once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from gpuspec.errors import GpuspecError

_SHARD = re.compile(r"\s*([0-9]{1,6})\s*/\s*([0-9]{1,6})\s*\Z")


class _Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=_Named)


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @property
    def first(self) -> bool:
        """True for shard 1, which also checks the objects that belong to no single cluster."""
        return self.index == 1

    def holds(self, name: str) -> bool:
        """True when the cluster called ``name`` belongs to this shard."""
        return shard_of(name, self.count) == self.index

    def select(self, items: Iterable[T]) -> list[T]:
        """The items (clusters) whose ``name`` falls into this shard, in their order."""
        return [item for item in items if self.holds(item.name)]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(name: str, count: int) -> int:
    """The 1-based shard of the cluster called ``name`` among ``count`` shards."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % count + 1


def parse_shard(text: str) -> Shard:
    """``K/N`` (1 ≤ K ≤ N) as a Shard; a GpuspecError for anything else."""
    match = _SHARD.match(text)
    if not match:
        raise GpuspecError(f"--shard {text!r} is not K/N (for example 2/8)")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise GpuspecError(f"--shard {text!r}: K must be between 1 and N, and N at least 1")
    return Shard(index, count)
