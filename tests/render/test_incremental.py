"""A re-render after some clusters changed renders only those (the stamp proves the others current), and its
output is byte for byte what a full render writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuspec.pipeline.render import cluster_keys, prepare
from gpuspec.render.inputs import read_input_digests
from gpuspec.render.stamp import RenderStamp

from .fleets import cluster, pool, write_fleet
from .test_cli import run


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _inodes(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _three(tmp_path: Path, nodes: int = 2) -> Path:
    return write_fleet(
        tmp_path,
        [
            cluster("one", kubernetes={"version": "1.33"}),
            cluster("two", kubernetes={"version": "1.33"}, pools=[pool("gpu", nodes=nodes)]),
            cluster("three", kubernetes={"version": "1.33"}),
        ],
    )


def _reused(root: Path) -> set[str]:
    stamp = RenderStamp.open(Path("fleet"), Path("policies"), Path("rendered"))
    prepared = prepare(root / "fleet", root / "policies", stamp=stamp)
    assert prepared.rendered is not None
    return set(prepared.rendered.reused)


def test_only_the_changed_cluster_is_rendered_and_the_output_is_a_full_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _three(tmp_path)
    assert run("render", cwd=tmp_path).returncode == 0
    before = _inodes(tmp_path / "rendered")
    _three(tmp_path, nodes=5)
    monkeypatch.chdir(tmp_path)
    assert _reused(tmp_path) == {"one", "three"}
    again = run("render", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    after = _inodes(tmp_path / "rendered")
    untouched = [rel for rel in after if rel.startswith(("clusters/one/", "clusters/three/", "handover/one"))]
    assert untouched and all(after[rel] == before[rel] for rel in untouched)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copytree(tmp_path / "fleet", fresh / "fleet")
    shutil.copytree(tmp_path / "policies", fresh / "policies")
    assert run("render", cwd=fresh).returncode == 0
    assert _tree(tmp_path / "rendered") == _tree(fresh / "rendered")
    assert run("render", "--check", cwd=tmp_path).returncode == 0


def test_a_hand_edit_of_an_unchanged_cluster_is_caught_while_another_changes(tmp_path: Path) -> None:
    _three(tmp_path)
    assert run("render", cwd=tmp_path).returncode == 0
    values = tmp_path / "rendered" / "clusters" / "one" / "gpu-operator.values.yaml"
    good = values.read_bytes()
    values.write_bytes(good.replace(b"true", b"TRUE", 1))
    _three(tmp_path, nodes=5)
    check = run("render", "--check", cwd=tmp_path)
    assert check.returncode == 1 and "clusters/one/gpu-operator.values.yaml" in check.stdout
    assert run("render", cwd=tmp_path).returncode == 0
    assert values.read_bytes() == good


def test_a_removed_and_an_added_cluster(tmp_path: Path) -> None:
    _three(tmp_path)
    assert run("render", cwd=tmp_path).returncode == 0
    (tmp_path / "fleet" / "clusters" / "three.yaml").unlink()
    write_fleet(tmp_path, [cluster("four", kubernetes={"version": "1.33"})])
    assert run("render", cwd=tmp_path).returncode == 0
    rendered = tmp_path / "rendered"
    assert not (rendered / "clusters" / "three").exists() and (rendered / "clusters" / "four").is_dir()
    fresh = tmp_path / "fresh"
    shutil.copytree(tmp_path / "fleet", fresh / "fleet")
    shutil.copytree(tmp_path / "policies", fresh / "policies")
    assert run("render", cwd=fresh).returncode == 0
    assert _tree(rendered) == _tree(fresh / "rendered")


def test_a_shared_input_change_renders_every_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _three(tmp_path)
    assert run("render", cwd=tmp_path).returncode == 0
    monkeypatch.chdir(tmp_path)
    assert _reused(tmp_path) == {"one", "two", "three"}  # the stamp of the inputs as rendered
    pack = tmp_path / "policies" / "default.yaml"
    pack.write_text(pack.read_text() + "# a comment changes the pack's digest\n")
    assert _reused(tmp_path) == set()
    override = tmp_path / "fleet" / "templates"
    override.mkdir()
    assert run("render", cwd=tmp_path).returncode == 0
    assert _reused(tmp_path) == {"one", "two", "three"}


def test_the_key_covers_the_findings_exceptions_accept(tmp_path: Path) -> None:
    from .fleets import load

    fleet_dir = _three(tmp_path)
    fleet = load(fleet_dir)
    inputs = read_input_digests(fleet_dir, tmp_path / "policies")
    from gpuspec.handover.documents import HandoverSettings

    settings = HandoverSettings(fleet_dir)
    plain = cluster_keys(fleet, inputs, settings, {})
    accepted = cluster_keys(fleet, inputs, settings, {"two": [{"rule": "GS201", "expires": "2027-01-01"}]})
    assert plain["one"] == accepted["one"] and plain["two"] != accepted["two"]
    other_root = cluster_keys(fleet, inputs, HandoverSettings(fleet_dir, rendered_root="out"), {})
    assert other_root["one"] != plain["one"]
