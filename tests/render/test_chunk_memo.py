"""A re-render of a fleet rendered in chunks validates only the cluster files that changed, and reports and
writes exactly what a render that validates every chunk does."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.fleetgen import generate
from gpuspec.cli.main import cli
from gpuspec.pipeline import chunked, render_chunked
from gpuspec.pipeline.chunkmemo import ChunkCluster
from gpuspec.render.bootstrap import BootstrapEntry

CLUSTERS = 24


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A generated fleet with two warnings (clusters on AKS, which the support matrix has no column for) and
    an accepted finding, in the working folder, rendered in chunks of about four clusters."""
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    generate(tmp_path, CLUSTERS, 2)
    clusters = tmp_path / "fleet" / "clusters"
    for name in ("cluster-0007", "cluster-0019"):
        _edit(clusters / f"{name}.yaml", lambda doc: doc["kubernetes"].update(distribution="aks"))
    _edit(clusters / "cluster-0011.yaml", lambda doc: doc["kubernetes"].update(version="1.31"))
    _edit(tmp_path / "policies" / "default.yaml", lambda pack: pack.update(exceptions=[
        {"rules": ["GS204"], "cluster": "cluster-0011", "owner": "platform", "reason": "upgrade booked",
         "expires": "2099-01-01"}]))
    monkeypatch.setattr(render_chunked, "RENDER_CHUNK_CLUSTERS", 4)
    return tmp_path


def _edit(path: Path, change: Any) -> None:
    doc = yaml.safe_load(path.read_text())
    change(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """The cluster files of each chunk validated, in order."""
    seen: list[set[str]] = []
    real = chunked.validate_chunk

    def spy(fleet_dir: Path, policies_dir: Path | None, chunk: Any, today: Any) -> Any:
        seen.append({p.name for p in chunk})
        return real(fleet_dir, policies_dir, chunk, today)

    monkeypatch.setattr(render_chunked, "validate_chunk", spy)
    return seen


def _render(*extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["render", "fleet", "--policies", "policies", *extra])
    return result.exit_code, result.stdout, result.stderr


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _full_render(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[int, str, str], dict[str, bytes]]:
    """What a render that validates every chunk writes and says (no user cache: no stamp, no memo)."""
    with monkeypatch.context() as patch:
        patch.setenv("GPUSPEC_NO_CACHE", "1")
        done = _render("--out", "full")
    return done, _tree(root / "full")


def test_a_re_render_validates_only_the_chunk_of_the_changed_cluster(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    first = _render()
    assert first[0] == 0 and first[2].count("warning GS200") == 2, first
    chunks = len(validated)
    assert chunks >= 4 and sorted(n for c in validated for n in c) == sorted(
        f"cluster-{i:04d}.yaml" for i in range(CLUSTERS))
    validated.clear()
    _edit(fleet / "fleet" / "clusters" / "cluster-0003.yaml", lambda doc: doc["pools"][0].update(nodes=9))
    again = _render()
    assert validated == [{"cluster-0003.yaml"}]  # the other clusters of its chunk are remembered
    full, written = _full_render(fleet, monkeypatch)
    assert again[0] == full[0] == 0
    assert again[2] == full[2]  # the same findings, warnings of chunks not validated included
    assert _tree(fleet / "rendered") == written
    validated.clear()
    check = _render("--check")
    assert check[0] == 0 and check[2] == again[2] and not validated  # the stamp answers: nothing validated


def test_a_change_beside_a_warned_cluster_keeps_its_warning_and_a_fixed_cluster_drops_its_own(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _render()[0] == 0
    chunk = next(c for c in validated if "cluster-0007.yaml" in c)
    neighbour = sorted(chunk - {"cluster-0007.yaml"})[0]
    validated.clear()
    _edit(fleet / "fleet" / "clusters" / neighbour, lambda doc: doc["pools"][0].update(nodes=9))
    _edit(fleet / "fleet" / "clusters" / "cluster-0019.yaml", lambda doc: doc["kubernetes"].pop("distribution"))
    again = _render()
    assert sorted(n for c in validated for n in c) == sorted([neighbour, "cluster-0019.yaml"])
    full, written = _full_render(fleet, monkeypatch)
    assert again[0] == full[0] == 0 and again[2] == full[2]
    assert again[2].count("warning GS200") == 1 and "cluster-0007" in again[2]
    assert _tree(fleet / "rendered") == written


def test_a_removed_or_added_cluster_file_validates_few_files_and_renders_as_one_run(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _render()[0] == 0
    clusters = fleet / "fleet" / "clusters"
    (clusters / "cluster-0004.yaml").unlink()
    validated.clear()
    removed = _render()
    # The chunk's other clusters are remembered (a chunk whose shards shifted by one file is validated again).
    assert sum(len(c) for c in validated) < CLUSTERS // 2
    full, written = _full_render(fleet, monkeypatch)
    assert removed[0] == full[0] == 0 and removed[2] == full[2] and _tree(fleet / "rendered") == written
    (clusters / "cluster-0099.yaml").write_text((clusters / "cluster-0005.yaml").read_text()
                                                 .replace("cluster-0005", "cluster-0099"))
    validated.clear()
    added = _render()
    assert "cluster-0099.yaml" in set().union(*validated) and sum(len(c) for c in validated) < CLUSTERS // 2
    full, written = _full_render(fleet, monkeypatch)
    assert added[0] == full[0] == 0 and added[2] == full[2] and _tree(fleet / "rendered") == written


def test_a_changed_policy_or_day_validates_every_chunk_again(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _render()[0] == 0
    chunks = len(validated)
    validated.clear()
    assert _render("--today", (dt.date.today() + dt.timedelta(days=1)).isoformat())[0] == 0
    assert len(validated) == chunks
    validated.clear()
    _edit(fleet / "policies" / "default.yaml", lambda pack: pack["exceptions"][0].update(reason="booked for Q1"))
    again = _render()
    assert len(validated) == chunks and again[0] == 0
    full, written = _full_render(fleet, monkeypatch)
    assert again[2] == full[2] and _tree(fleet / "rendered") == written


def test_a_hand_edited_output_file_sends_its_chunk_through_validation(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _render()[0] == 0
    values = fleet / "rendered" / "clusters" / "cluster-0005" / "gpu-operator.values.yaml"
    values.write_text(values.read_text() + "# edited by hand\n")
    _edit(fleet / "fleet" / "clusters" / "cluster-0020.yaml", lambda doc: doc["pools"][0].update(nodes=9))
    validated.clear()
    assert _render()[0] == 0
    assert {n for c in validated for n in c} >= {"cluster-0005.yaml", "cluster-0020.yaml"}
    assert _tree(fleet / "rendered") == _full_render(fleet, monkeypatch)[1]


def test_a_file_changed_while_its_chunk_is_validated_is_not_remembered(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    path = fleet / "fleet" / "clusters" / "cluster-0003.yaml"
    before = path.read_text()
    real = render_chunked.validate_chunk

    def edit_meanwhile(fleet_dir: Path, policies_dir: Path | None, chunk: Any, today: Any) -> Any:
        if any(p.name == path.name for p in chunk):  # after the run hashed it, before it is validated
            path.write_text(before.replace("nodes: 4", "nodes: 7", 1))
        return real(fleet_dir, policies_dir, chunk, today)

    with monkeypatch.context() as patch:
        patch.setattr(render_chunked, "validate_chunk", edit_meanwhile)
        _render()
    path.write_text(before)  # the bytes the run hashed: an entry stored under their digest would be trusted
    _edit(fleet / "fleet" / "clusters" / "cluster-0020.yaml", lambda doc: doc["pools"][0].update(nodes=9))
    validated.clear()
    assert _render()[0] == 0
    assert any("cluster-0003.yaml" in c for c in validated)


def test_an_unchanged_chunk_with_an_error_elsewhere_still_reports_as_one_run(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _render()[0] == 0
    path = fleet / "fleet" / "clusters" / "cluster-0017.yaml"
    path.write_text(path.read_text().replace("H100-SXM5-80GB", "H100-SXM5-80GX"))
    failed = _render()
    full, _ = _full_render(fleet, monkeypatch)
    assert failed == full and failed[0] == 1 and "GS210" in failed[2]


def test_a_stored_cluster_round_trips_and_a_malformed_one_is_refused() -> None:
    entry = BootstrapEntry("argocd", "gpu", "argocd", "nvcr.io/nvidia", ((("name", "in-cluster"),
                                                                          ("namespace", "gpu-operator")),),
                           ("flux-system", "fleet"))
    stored = ChunkCluster("one", "fleet/clusters/one.yaml", "[]", entry)
    assert ChunkCluster.from_data(stored.data()) == stored
    name, source, accepted, parts = stored.data()
    with pytest.raises(ValueError):
        ChunkCluster.from_data((name, source, accepted, (*parts[:5], ("flux-system",))))
    with pytest.raises(ValueError):
        ChunkCluster.from_data((name, source, 3, parts))


def _memo_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, findings: list[Any]) -> tuple[Any, list[Path]]:
    """A memo of one two-cluster chunk remembered with ``findings`` (the file of the second edited since)."""
    import os

    from gpuspec.pipeline.chunked import ChunkReport
    from gpuspec.pipeline.chunkmemo import ChunkMemo
    from gpuspec.render.filestate import file_state
    from gpuspec.render.inputs import InputDigests

    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    chunk = [Path("fleet/clusters/a.yaml"), Path("fleet/clusters/b.yaml")]
    chunk[0].parent.mkdir(parents=True)
    Path("fleet/fleet.yaml").write_text("clusters: {}\n")
    states = {"fleet.yaml": ("fleet/fleet.yaml", file_state(os.stat("fleet/fleet.yaml")))}
    for path in chunk:
        path.write_text(f"name: {path.stem}\n")
        states[f"clusters/{path.name}"] = (os.fspath(path), file_state(os.stat(path)))
    entry = BootstrapEntry("argocd", "gpu", "argocd", "nvcr.io/nvidia", (), ("flux-system", "fleet"))
    clusters = [ChunkCluster(p.stem, f"fleet/clusters/{p.name}", "[]", entry) for p in chunk]

    def memo(b_sha: str) -> ChunkMemo:
        inputs = InputDigests({"fleet.yaml": "f"}, {"clusters/a.yaml": "a", "clusters/b.yaml": b_sha}, states)
        return ChunkMemo(Path("fleet"), None, dt.date(2026, 12, 5), inputs, _memo_with)

    memo("b").put(0, chunk, ChunkReport(findings, [], True, frozenset()), clusters)
    return memo("b2"), chunk


def test_the_memo_keeps_the_unchanged_clusters_of_a_chunk_with_their_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.findings import Finding, Severity

    on_a = Finding("GS200", Severity.WARNING, "no column for aks", "fleet/clusters/a.yaml", ("kubernetes",))
    on_b = Finding("GS200", Severity.WARNING, "no column for aks", "fleet/clusters/b.yaml", ("kubernetes",))
    memo, chunk = _memo_with(tmp_path, monkeypatch, [on_a, on_b])
    known = memo.unchanged_clusters(0, chunk)
    assert list(known) == ["fleet/clusters/a.yaml"] and known["fleet/clusters/a.yaml"].findings == (on_a,)


def test_a_remembered_finding_on_fleet_yaml_keeps_no_cluster_of_its_chunk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.findings import Finding, Severity

    # A problem of fleet.yaml that some cluster of the chunk ran into: which one cannot be told.
    shared = Finding("GS201", Severity.WARNING, "operator line ends", "fleet/fleet.yaml", ("operator",))
    memo, chunk = _memo_with(tmp_path, monkeypatch, [shared])
    assert memo.unchanged_clusters(0, chunk) == {}


def test_handover_of_a_chunked_fleet_writes_the_pages_render_writes_and_serializes_nothing_else(
        fleet: Path, validated: list[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.pipeline import render

    assert _render()[0] == 0
    validated.clear()
    serialized: list[object] = []
    real = render.serialize

    def counted(spec: Any) -> bytes:
        serialized.append(spec)
        return real(spec)

    monkeypatch.setattr(render, "serialize", counted)
    done = CliRunner().invoke(cli, ["handover", "fleet", "--policies", "policies", "--output", "docs"])
    assert done.exit_code == 0, done.output
    assert len(validated) >= 4  # a chunk at a time
    assert serialized == []  # the pages need each cluster's objects, not their YAML
    assert _tree(fleet / "docs") == _tree(fleet / "rendered" / "handover")
