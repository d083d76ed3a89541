"""Handover documents are kept in the user cache, in shards: reused while a cluster's inputs are unchanged."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gpuspec.handover import documents as documents_module
from gpuspec.handover.documents import (
    DocumentCache,
    HandoverSettings,
    cluster_document,
    document_path,
    document_shard,
)
from gpuspec.pipeline.render import prepare
from gpuspec.render.inputs import read_input_digests

from .helpers import copy_example


def _render(root: Path) -> tuple[dict[str, bytes], dict[str, str]]:
    prepared = prepare(root / "fleet", root / "policies")
    assert prepared.rendered is not None
    inputs = read_input_digests(root / "fleet", root / "policies")
    digests = {name: inputs.for_cluster(f"clusters/{name}.yaml") for name in prepared.rendered.summaries}
    return prepared.rendered.files, digests


def test_documents_come_from_the_cache_until_the_cluster_changes(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    rendered: list[str] = []

    def counting(ctx: Any, plan: Any, settings: Any) -> tuple[bytes, dict[str, Any]]:
        rendered.append(plan.name)
        return cluster_document(ctx, plan, settings)

    monkeypatch.setattr(documents_module, "cluster_document", counting)
    root = copy_example(tmp_path)
    files, digests = _render(root)
    assert sorted(rendered) == ["infer-north", "train-east"]
    for name, digest in digests.items():
        hit = DocumentCache(HandoverSettings(root / "fleet"), document_shard(name)).get(name, digest)
        assert hit is not None and hit[0] == files[document_path(name)]
    rendered.clear()
    assert _render(root)[0] == files and rendered == []
    # A changed cluster gets a new document; the other one comes from the cache.
    spec = root / "fleet/clusters/train-east.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("nodes: 32", "nodes: 30"), encoding="utf-8")
    changed, _ = _render(root)
    assert rendered == ["train-east"]
    assert changed[document_path("infer-north")] == files[document_path("infer-north")]
    assert "30 × 8 = 240" in changed[document_path("train-east")].decode("utf-8")


def test_no_cache_means_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    root = copy_example(tmp_path)
    _, digests = _render(root)
    settings = HandoverSettings(root / "fleet")
    assert all(DocumentCache(settings, document_shard(name)).get(name, digest) is None
               for name, digest in digests.items())


def test_documents_too_large_for_one_entry_are_not_encoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    stored: list[object] = []
    monkeypatch.setattr(documents_module.usercache, "store", lambda path, value: stored.append(value))
    settings = HandoverSettings(tmp_path / "fleet")
    cache = DocumentCache(settings, 0)
    monkeypatch.setattr(documents_module.usercache, "MAX_ENTRY_BYTES", 1000)
    cache.put("small", "d1", b"x" * 400, {})
    cache.save()
    assert len(stored) == 1
    cache = DocumentCache(settings, 0)
    cache.put("small", "d1", b"x" * 400, {})
    cache.put("large", "d2", b"x" * 700, {})
    cache.save()
    assert len(stored) == 1  # 1,100 bytes of documents: the entry would be refused, so it is not built


def test_workers_read_and_store_whole_shards_and_the_parent_none(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.handover.documents import rule_settings
    from gpuspec.pipeline.render import render_fleet
    from gpuspec.render.inputs import read_input_digests
    from tests.render.fleets import coverage_clusters, load, write_fleet

    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    fleet_dir = write_fleet(tmp_path, coverage_clusters("v26.7.0"))
    fleet = load(fleet_dir)
    settings = HandoverSettings(fleet_dir, {}, rule_settings(fleet, tmp_path / "policies"))
    inputs = read_input_digests(fleet_dir, tmp_path / "policies")
    opened = tmp_path / "opened"
    parent = os.getpid()
    real_init = DocumentCache.__init__

    def recording(self: DocumentCache, settings: HandoverSettings, shard: int) -> None:
        with opened.open("a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {shard}\n")
        real_init(self, settings, shard)

    monkeypatch.setattr(DocumentCache, "__init__", recording)
    first = render_fleet(fleet, inputs, jobs=2, handover=settings)
    records = [line.split() for line in opened.read_text(encoding="utf-8").splitlines()]
    shards = sorted({document_shard(c.name) for c in fleet.clusters})
    assert len(shards) > 1 and sorted(int(shard) for _, shard in records) == shards  # each shard opened once
    assert str(parent) not in {pid for pid, _ in records}
    assert len({pid for pid, _ in records}) == 2

    def refused(*args: Any) -> Any:
        if os.getpid() != parent:  # a worker: every document must come from the cache now
            raise AssertionError("rendered a cached document")
        return cluster_document(*args)

    monkeypatch.setattr(documents_module, "cluster_document", refused)
    again = render_fleet(fleet, inputs, jobs=2, handover=settings)
    assert again.files == first.files
