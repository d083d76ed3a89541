"""A fleet rendered a chunk of clusters at a time gives byte for byte the output, findings and stamp parts of
one whole-fleet render; an error in any chunk writes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.fleetgen import generate
from gpuspec.cli.common import validation_parts
from gpuspec.cli.main import cli
from gpuspec.pipeline import chunked, render_chunked
from gpuspec.pipeline.render import Rendered, balanced, prepare
from gpuspec.pipeline.render_chunked import prepare_in_chunks
from gpuspec.render.spool import OutputFiles

CLUSTERS = 24


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(folder))
    return folder


def _fleet(root: Path) -> tuple[Path, Path]:
    """A generated fleet (Argo CD and air-gapped Flux clusters, bootstrap objects on) where one cluster's
    support-matrix error is accepted by a policy exception (its deviations.yaml and handover document show
    it)."""
    generate(root, CLUSTERS, 2)
    fleet, policies = root / "fleet", root / "policies"
    path = fleet / "clusters" / "cluster-0007.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["kubernetes"]["version"] = "1.31"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    pack = policies / "default.yaml"
    data = yaml.safe_load(pack.read_text())
    data["exceptions"] = [{"rules": ["GS204"], "cluster": "cluster-0007", "owner": "platform",
                           "reason": "upgrade booked for Q1", "expires": "2099-01-01"}]
    pack.write_text(yaml.safe_dump(data, sort_keys=False))
    return fleet, policies


def _files(files: OutputFiles) -> dict[str, bytes]:
    return {path: files[path] for path in files}


def _same(one: Rendered, other: Rendered) -> None:
    assert _files(one.files) == _files(other.files)
    assert one.images == other.images and one.summaries == other.summaries and one.paths == other.paths
    assert one.keys == other.keys
    assert one.parts() == other.parts()


@pytest.mark.parametrize(("size", "jobs"), [(4, 1), (9, 2)])
def test_chunked_render_is_the_whole_render(tmp_path: Path, cache: Path, size: int, jobs: int) -> None:
    fleet, policies = _fleet(tmp_path)
    whole = prepare(fleet, policies)
    assert whole.rendered is not None and any(p.endswith("deviations.yaml") for p in whole.rendered.files)
    for _ in range(2):  # cold, then with every cache filled (documents, parsed files, matrix)
        done = prepare_in_chunks(fleet, policies, validation_parts, jobs=jobs, spool_near=tmp_path, size=size)
        assert done is not None and done.prepared.rendered is not None
        _same(done.prepared.rendered, whole.rendered)
        # Only the fleet-wide files are held in memory: every cluster's bytes wait in spools.
        held = {p for p in done.prepared.rendered.files if p not in done.prepared.rendered.files._located}
        assert held and all(p.startswith(("gitops/argocd/_bootstrap", "gitops/flux/_bootstrap", "handover/"))
                            for p in held), held
        assert done.report.usable and not done.report.findings


def test_an_error_in_one_chunk_renders_nothing_and_reports_as_one_run(tmp_path: Path, cache: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    fleet, policies = _fleet(tmp_path)
    path = fleet / "clusters" / "cluster-0019.yaml"
    path.write_text(path.read_text().replace("H100-SXM5-80GB", "H100-SXM5-80GX"))
    whole = prepare(fleet, policies)
    assert whole.rendered is None
    done = prepare_in_chunks(fleet, policies, validation_parts, size=4)
    assert done is not None and done.prepared.rendered is None and done.prepared.validation.usable
    assert done.report.findings == validation_parts(whole.validation)[0]
    args = [str(fleet), "--policies", str(policies), "--out", str(tmp_path / "out")]
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")  # no stamp: both runs validate
    one_run = _render(args)
    monkeypatch.setattr(render_chunked, "RENDER_CHUNK_CLUSTERS", 4)
    assert _render(args) == one_run and one_run[0] == 1 and "GS210" in one_run[1]
    assert not (tmp_path / "out").exists()


def test_an_unusable_file_in_one_chunk_is_unusable_input(tmp_path: Path, cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    fleet, policies = _fleet(tmp_path)
    path = fleet / "clusters" / "cluster-0011.yaml"
    path.write_text(path.read_text() + "pools: [\n")
    done = prepare_in_chunks(fleet, policies, validation_parts, size=4)
    assert done is not None and not done.prepared.validation.usable and done.prepared.rendered is None
    assert [f.rule_id for f in done.report.findings] == ["GS100"]
    whole = _render([str(fleet), "--policies", str(policies), "--out", str(tmp_path / "out")])
    monkeypatch.setattr(render_chunked, "RENDER_CHUNK_CLUSTERS", 4)
    code, output = _render([str(fleet), "--policies", str(policies), "--out", str(tmp_path / "out")])
    assert code == 2 and not (tmp_path / "out").exists()
    assert (code, output) == whole and "cluster-0011.yaml:" in output  # reported as one run reports it


def _render(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["render", *args])
    return result.exit_code, result.output


def test_render_command_in_chunks_writes_checks_and_rerenders_like_a_whole_render(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fleet, policies = _fleet(tmp_path / "repo")
    whole_out, out = tmp_path / "whole", tmp_path / "chunked"
    assert _render([str(fleet), "--policies", str(policies), "--out", str(whole_out)])[0] == 0
    monkeypatch.setattr(render_chunked, "RENDER_CHUNK_CLUSTERS", 5)
    called: list[int] = []
    real = chunked.validate_chunk

    def counted(*args: object, **kwargs: object) -> object:
        called.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("gpuspec.pipeline.render_chunked.validate_chunk", counted)
    assert _render([str(fleet), "--policies", str(policies), "--out", str(out)])[0] == 0
    assert len(called) >= 3

    def tree(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
                if p.is_file()}

    assert tree(out) == tree(whole_out)
    # One cluster changed: only its chunk's clusters are looked at again, the others are reused from the stamp.
    path = fleet / "clusters" / "cluster-0003.yaml"
    path.write_text(path.read_text().replace("nodes: 4", "nodes: 6", 1))
    code, output = _render([str(fleet), "--policies", str(policies), "--out", str(out)])
    assert code == 0 and " 0 deleted" in output and "rendered 24 cluster(s)" in output
    shutil.rmtree(whole_out)
    monkeypatch.setattr(render_chunked, "RENDER_CHUNK_CLUSTERS", 10_000)
    assert _render([str(fleet), "--policies", str(policies), "--out", str(whole_out)])[0] == 0
    assert tree(out) == tree(whole_out)
    assert _render([str(fleet), "--policies", str(policies), "--out", str(out), "--check", "--full"])[0] == 0


def test_workers_get_whole_shards_in_about_equal_parts() -> None:
    groups = [["a"] * 9, ["b"] * 8, ["c"] * 4, ["d"] * 4, ["e"], ["f"]]
    bins = balanced(groups, 2)
    assert sorted(len(b) for b in bins) == [13, 14]
    assert sorted(name for b in bins for name in b) == sorted(name for g in groups for name in g)
    assert all(sum(g[0] in b for b in bins) == 1 for g in groups)  # each shard to one worker, whole
    assert balanced([["a"]], 3) == [["a"], [], []]
