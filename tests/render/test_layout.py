"""render/layout.py knows where each rendered file belongs: the base check of a pull request relies on it."""

from __future__ import annotations

from pathlib import Path

from gpuspec.pipeline.render import prepare
from gpuspec.render.layout import cluster_of, is_fleetwide

REPO = Path(__file__).resolve().parents[2]


def test_every_rendered_file_belongs_to_its_cluster_or_to_the_fleet() -> None:
    prepared = prepare(REPO / "fleet", REPO / "policies")
    assert prepared.rendered is not None
    owned = {rel: name for name, paths in prepared.rendered.paths.items() for rel in paths}
    assert owned and len(prepared.rendered.paths) == 2
    for rel in prepared.rendered.files:
        if rel in owned:
            assert cluster_of(rel) == owned[rel] and not is_fleetwide(rel), rel
        else:
            assert cluster_of(rel) is None and is_fleetwide(rel), rel
    committed = [p.relative_to(REPO / "rendered").as_posix() for p in (REPO / "rendered").rglob("*") if p.is_file()]
    assert all(cluster_of(rel) is not None or is_fleetwide(rel) for rel in committed)


def test_paths_outside_the_layout_belong_to_no_cluster() -> None:
    for rel in ("render-proof.yaml", "clusters/x.yaml", "gitops/argocd/_bootstrap/a.yaml", "handover/README.md",
                "gitops/other/x/y.yaml", "notes/x/y.md"):
        assert cluster_of(rel) is None, rel
    assert not is_fleetwide("render-proof.yaml") and not is_fleetwide("gitops/argocd/_bootstrap/x/y.yaml")
    assert cluster_of("handover/lab.md") == "lab" and cluster_of("gitops/flux/lab/release/source.yaml") == "lab"
