"""A re-render or `render --check` of unchanged inputs is answered from the render stamp, and only then."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuspec import usercache
from gpuspec.pipeline.render import prepare
from gpuspec.render.stamp import Part, RenderStamp
from gpuspec.render.treestate import tree_state

from .fleets import cluster, pool, replace_failing_at, tree_bytes, write_fleet
from .test_cli import run


def _stamp() -> RenderStamp:
    """The stamp slot of the working folder's fleet."""
    stamp = RenderStamp.open(Path("fleet"), Path("policies"), Path("rendered"))
    assert stamp is not None
    return stamp


def test_unchanged_inputs_and_output_are_served_from_the_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"})])
    first = run("render", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    monkeypatch.chdir(tmp_path)
    stamped = _stamp().current()
    assert stamped is not None and stamped.clusters == 1 and stamped.files > 1
    again = run("render", cwd=tmp_path)
    check = run("render", "--check", cwd=tmp_path)
    assert again.returncode == 0 and f"0 written, {stamped.files} unchanged" in again.stdout
    assert check.returncode == 0 and f"up to date ({stamped.files} files, 1 clusters)" in check.stdout


def test_an_edited_input_misses_the_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"})])
    assert run("render", cwd=tmp_path).returncode == 0
    path = fleet / "clusters" / "one.yaml"
    path.write_text(path.read_text().replace("nodes: 2", "nodes: 3"))
    monkeypatch.chdir(tmp_path)
    assert _stamp().current() is None
    check = run("render", "--check", cwd=tmp_path)
    assert check.returncode == 1 and "node-labels.yaml" in check.stdout


def test_a_hand_edit_with_restored_mtime_and_size_is_still_caught(tmp_path: Path) -> None:
    write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"})])
    assert run("render", cwd=tmp_path).returncode == 0
    values = tmp_path / "rendered" / "clusters" / "one" / "gpu-operator.values.yaml"
    before = values.stat()
    text = values.read_text()
    values.write_text(text.replace("true", "TRUE", 1))
    os.utime(values, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert values.stat().st_size == before.st_size
    check = run("render", "--check", cwd=tmp_path)
    assert check.returncode == 1, check.stdout
    assert "gpu-operator.values.yaml" in check.stdout


def test_an_extra_output_file_misses_the_stamp(tmp_path: Path) -> None:
    write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"}, pools=[pool("gpu")])])
    assert run("render", cwd=tmp_path).returncode == 0
    (tmp_path / "rendered" / "clusters" / "one" / "stray.yaml").write_text("a: 1\n")
    check = run("render", "--check", cwd=tmp_path)
    assert check.returncode == 1 and "stray.yaml" in check.stdout


def test_tree_state_refuses_symlinks(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.yaml").write_text("a: 1\n")
    assert tree_state(tmp_path / "out") is not None
    (tmp_path / "out" / "link").symlink_to(tmp_path / "out" / "a.yaml")
    assert tree_state(tmp_path / "out") is None
    assert tree_state(tmp_path / "missing") is None


def test_no_stamp_when_caching_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    assert RenderStamp.open(tmp_path, None, tmp_path / "rendered") is None


def _three(tmp_path: Path, nodes: int = 2) -> None:
    write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"}),
                           cluster("two", kubernetes={"version": "1.33"}, pools=[pool("gpu", nodes=nodes)]),
                           cluster("three", kubernetes={"version": "1.33"})])


@pytest.fixture
def three(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three clusters rendered in ``tmp_path``, which is the working folder."""
    _three(tmp_path)
    assert run("render", cwd=tmp_path).returncode == 0
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _reused() -> set[str]:
    prepared = prepare(Path("fleet"), Path("policies"), stamp=_stamp())
    assert prepared.rendered is not None
    return set(prepared.rendered.reused)


def _shard_file(stamp: RenderStamp, cluster_name: str) -> Path:
    return stamp.path.with_name(f"{stamp.path.name}-{usercache.shard_of(cluster_name)}")


def test_each_clusters_part_is_stored_in_its_shard_not_in_one_entry_of_the_fleet(three: Path) -> None:
    stamp = _stamp()
    main = usercache.load(stamp.path)
    assert "parts" not in main and sorted(main["shards"]) == sorted({usercache.shard_of(n)
                                                                      for n in ("one", "two", "three")})
    held: dict[str, list[str]] = {}
    for shard, shard_run in main["shards"].items():
        stored = usercache.load(stamp.path.with_name(f"{stamp.path.name}-{shard}"))
        assert stored["run"] == shard_run == main["run"]
        for name, part in stored["parts"].items():
            assert usercache.shard_of(name) == shard
            held[name] = list(part[1])
    assert sorted(held) == ["one", "three", "two"]
    assert all(f"/{name}/" in f"/{rel}" or rel == f"handover/{name}.md"
               for name, paths in held.items() for rel in paths)
    stamped_paths = [rel for paths in held.values() for rel in paths] + list(main["fleetwide"])
    assert sorted(stamped_paths) == sorted(tree_state(Path("rendered")) or {})


def test_a_re_render_rewrites_only_the_shards_of_what_changed(three: Path) -> None:
    before = usercache.load(_stamp().path)
    changed = usercache.shard_of("two")
    path = three / "fleet" / "clusters" / "two.yaml"
    path.write_text(path.read_text().replace("nodes: 2", "nodes: 3"))
    assert run("render", cwd=three).returncode == 0
    after = usercache.load(_stamp().path)
    assert after["shards"][changed] == after["run"] != before["run"]
    assert all(run_ == before["shards"][shard] for shard, run_ in after["shards"].items() if shard != changed)
    assert _stamp().current() is not None and _reused() == {"one", "two", "three"}
    # A hand edit of a kept shard's cluster is still seen: its part is not current, so it renders again.
    values = three / "rendered" / "clusters" / "one" / "gpu-operator.values.yaml"
    values.write_text(values.read_text() + "# by hand\n")
    assert _stamp().current() is None and "one" not in _reused()
    assert run("render", cwd=three).returncode == 0 and _stamp().current() is not None


def test_a_missing_shard_misses_the_stamp_and_only_its_clusters_render_again(three: Path) -> None:
    assert _stamp().current() is not None
    _shard_file(_stamp(), "one").unlink()
    assert _stamp().current() is None
    sharing = {n for n in ("one", "two", "three") if usercache.shard_of(n) == usercache.shard_of("one")}
    assert _reused() == {"one", "two", "three"} - sharing
    check = run("render", "--check", cwd=three)
    assert check.returncode == 0, check.stdout


def test_a_shard_of_another_run_is_not_read(three: Path) -> None:
    older = _shard_file(_stamp(), "one").read_bytes()
    source = three / "fleet" / "clusters" / "one.yaml"
    source.write_text(source.read_text() + "# its key changes: its shard is written by the next run\n")
    assert run("render", cwd=three).returncode == 0
    assert "one" in _reused()  # the new run's own shard vouches for it
    _shard_file(_stamp(), "one").write_bytes(older)  # what "one" was stamped with then is still true
    assert "one" not in _reused() and _stamp().current() is None


def test_a_deleted_output_file_misses_the_stamp(three: Path) -> None:
    (three / "rendered" / "clusters" / "one" / "gpu-operator.values.yaml").unlink()
    assert _stamp().current() is None
    assert "one" not in _reused()
    check = run("render", "--check", cwd=three)
    assert check.returncode == 1 and "clusters/one/gpu-operator.values.yaml" in check.stdout


def test_a_render_looks_at_the_output_once_and_under_its_lock(three: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from gpuspec.cli.main import cli
    from gpuspec.render import stamp as stamp_module
    from gpuspec.render import treestate, writer

    looks: list[bool] = []

    def look(out: Path) -> object:
        looks.append(writer.holds_lock(out))
        return tree_state(out)

    monkeypatch.setattr(stamp_module, "tree_state", look)
    monkeypatch.setattr(treestate.ScanAhead, "start", classmethod(lambda cls, out: None))  # scanned here
    path = three / "fleet" / "clusters" / "two.yaml"
    path.write_text(path.read_text().replace("nodes: 2", "nodes: 3"))
    assert CliRunner().invoke(cli, ["render"]).exit_code == 0
    assert looks == [True]  # the stamp's parts and the reuse read one scan, taken under the lock
    looks.clear()
    assert CliRunner().invoke(cli, ["render", "--check"]).exit_code == 0  # answered by the stamp
    assert looks == [True]


def test_a_stored_part_whose_states_do_not_match_its_paths_is_not_read() -> None:
    part = Part("key", ("a.yaml", "b.yaml"), b"brief", (1, 2))
    assert Part.from_data(part.data(part.states)) == part
    assert Part.from_data(part.data((1,))) is None
    assert Part.from_data(("key", ["a.yaml", "b.yaml"], b"brief", (1, 2))) is None
    assert Part.from_data(("key", part.paths, "brief", (1, 2))) is None


def test_names_are_grouped_by_their_shard_in_shard_order() -> None:
    names = [f"cluster-{n}" for n in range(200)]
    grouped = usercache.by_shard(names, str)
    assert list(grouped) == sorted(grouped)
    assert sorted(n for members in grouped.values() for n in members) == sorted(names)
    assert all(usercache.shard_of(n) == shard for shard, members in grouped.items() for n in members)
    assert all(members == [n for n in names if n in members] for members in grouped.values())


@pytest.mark.parametrize(("cache", "edited"), [("on", "clusters/two.yaml"), ("off", "clusters/two.yaml"),
                                               ("on", "templates/handover/index.md.j2")])
def test_an_input_edited_while_rendering_writes_nothing_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cache: str,
        edited: str) -> None:
    import gpuspec.pipeline.render as pipeline_render
    from gpuspec.cli.main import run as run_in_process
    from gpuspec.templating.environment import SHIPPED

    fleet = write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"}),
                                   cluster("two", kubernetes={"version": "1.33"})])
    (fleet / "templates" / "handover").mkdir(parents=True)
    (fleet / "templates" / "handover" / "index.md.j2").write_text((SHIPPED / "handover" / "index.md.j2").read_text())
    assert run("render", cwd=tmp_path).returncode == 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    if cache == "off":
        monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    two = fleet / "clusters" / "two.yaml"
    two.write_text(two.read_text().replace("nodes: 2", "nodes: 3"))
    output = {p: p.read_bytes() for p in (tmp_path / "rendered").rglob("*") if p.is_file()}
    path = fleet / edited
    real = pipeline_render.validate_fleet

    def edited_meanwhile(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        path.write_text(path.read_text() + "\n")  # after it was hashed (and, the cluster file, validated)
        return result

    monkeypatch.setattr(pipeline_render, "validate_fleet", edited_meanwhile)
    monkeypatch.setattr("sys.argv", ["gpuspec", "render"])
    assert run_in_process() == 2
    assert "changed while gpuspec rendered; nothing was written" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in (tmp_path / "rendered").rglob("*") if p.is_file()} == output
    monkeypatch.setattr(pipeline_render, "validate_fleet", real)
    assert run_in_process() == 0  # once the edit is saved, a render writes it
    assert run("render", "--check", cwd=tmp_path).returncode == 0


def test_a_transaction_a_killed_run_committed_is_completed_before_the_stamp_looks(
        three: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.errors import GpuspecError
    from gpuspec.render.writer import write_output

    path = three / "fleet" / "clusters" / "one.yaml"
    before = path.read_text()
    path.write_text(before.replace("nodes: 2", "nodes: 7"))
    assert run("render", "--out", "edited", cwd=three).returncode == 0
    edited = tree_bytes(three / "edited")
    with monkeypatch.context() as patch:  # a run of the edit dies after its commit point, before it moves a file
        patch.setattr(os, "replace", replace_failing_at(1))
        with pytest.raises(GpuspecError, match="I/O error"):
            write_output(three / "rendered", edited)
    path.write_text(before)  # the inputs the stamp was made for
    assert run("render", cwd=three).returncode == 0
    with monkeypatch.context() as patch:
        patch.setenv("GPUSPEC_NO_CACHE", "1")
        assert run("render", "--out", "fresh", cwd=three).returncode == 0
    assert tree_bytes(three / "rendered") == tree_bytes(three / "fresh") and _stamp().current() is not None
