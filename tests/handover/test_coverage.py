"""Handover documents of clusters that exercise every renderer branch (host-only drivers, precompiled, MPS,
NVIDIADriver mode, Flux and Argo CD, mirrors, older releases): every document renders, keeps its sections, and
names exactly the images each cluster pulls."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.handover.documents import HandoverSettings, rule_settings
from gpuspec.pipeline.render import render_fleet
from gpuspec.render.inputs import read_input_digests
from tests.render.fleets import GOLDEN_SETTINGS, coverage_clusters, load, write_fleet

from .helpers import section, tables, unquote
from .test_escaping import _structure


@pytest.mark.parametrize("tag", ["v24.6.2", "v26.7.0"])
def test_every_kind_of_cluster(tag: str, tmp_path: Path) -> None:
    fleet_dir = write_fleet(tmp_path, coverage_clusters(tag), settings=GOLDEN_SETTINGS)
    fleet = load(fleet_dir)
    settings = HandoverSettings(fleet_dir, {}, rule_settings(fleet, tmp_path / "policies"))
    out = render_fleet(fleet, read_input_digests(fleet_dir, tmp_path / "policies"), jobs=1, handover=settings)
    assert sorted(p for p in out.files if p.startswith("handover/")) == sorted(
        [f"handover/{c.name}.md" for c in fleet.clusters] + ["handover/README.md"])
    for cluster in fleet.clusters:
        doc = out.files[f"handover/{cluster.name}.md"].decode("utf-8")
        assert ("heading", "Acceptance") in _structure(doc)
        rows = tables(section(doc, "Pinned versions and image sources"))[0]
        assert sorted(unquote(r["Pulled from"]) for r in rows) == sorted(set(out.images[cluster.name].values()))
        assert f"GPU Operator | `{tag}`" in doc
        if all(p.driver.source.value == "host" for p in cluster.pools):
            assert "Every pool's driver is preinstalled on the host image" in doc
