"""`verify --shard K/N`: every cluster in exactly one shard, always the same one; shards verify only theirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.errors import GpuspecError
from gpuspec.verify.shard import Shard, parse_shard, shard_of

from .test_verify_run import _run, lab  # noqa: F401  (the fixture)


def test_every_cluster_in_exactly_one_shard_and_assignment_is_stable() -> None:
    names = [f"cluster-{i:04d}" for i in range(1000)]
    shards = [Shard(k, 8) for k in range(1, 9)]
    counts = [sum(1 for n in names if s.holds(n)) for s in shards]
    assert sum(counts) == 1000 and all(sum(s.holds(n) for s in shards) == 1 for n in names)
    assert min(counts) > 90 and max(counts) < 160  # roughly balanced
    before = {n: shard_of(n, 8) for n in names[:500]}
    assert {n: shard_of(n, 8) for n in names[:500]} == before  # independent of the other clusters
    assert shard_of("train-east", 8) == shard_of("train-east", 8)


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1", "1/2/3", ""])
def test_bad_shard_is_a_clear_error(text: str) -> None:
    with pytest.raises(GpuspecError, match="--shard"):
        parse_shard(text)


def test_shards_together_verify_every_cluster_once(lab: Path, helm_bin: Path) -> None:  # noqa: F811
    whole = _run(lab, helm_bin)
    assert whole.findings == []
    names = sorted(c.name for c in whole.clusters)
    seen: list[str] = []
    for k in (1, 2, 3):
        part = _run(lab, helm_bin, shard=parse_shard(f"{k}/3"))
        assert part.findings == []
        seen += [c.name for c in part.clusters]
    assert sorted(seen) == names and len(names) == 2
