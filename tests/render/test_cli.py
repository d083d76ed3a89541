"""`gpuspec render`, `render --check` and `gpuspec images` from the command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from .fleets import EXAMPLE_FLEET, REPO_ROOT, cluster, pool, write_fleet


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "gpuspec.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env, check=False)


def test_render_then_check(tmp_path: Path) -> None:
    write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"})])
    first = run("render", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "written" in first.stdout and (tmp_path / "rendered" / "clusters" / "one" / "images.txt").is_file()
    assert run("render", "--check", cwd=tmp_path).returncode == 0
    values = tmp_path / "rendered" / "clusters" / "one" / "gpu-operator.values.yaml"
    values.write_text(values.read_text() + "extra: true\n")
    check = run("render", "--check", cwd=tmp_path)
    assert check.returncode == 1
    assert "+++ b/rendered/clusters/one/gpu-operator.values.yaml" in check.stdout and "-extra: true" in check.stdout
    assert "Traceback" not in check.stderr


def test_errors_write_nothing(tmp_path: Path) -> None:
    write_fleet(tmp_path, [cluster("one", operator={"version": "v26.7.0"},
                                   pools=[pool("gpu", driver={"branch": "999"})])])
    result = run("render", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "nothing was written" in result.stderr
    assert not (tmp_path / "rendered").exists()


def test_unusable_input_exits_2(tmp_path: Path) -> None:
    fleet = write_fleet(tmp_path, [cluster("one")])
    (fleet / "clusters" / "one.yaml").write_text("apiVersion: [unclosed\n")
    result = run("render", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and not (tmp_path / "rendered").exists()


def test_images_list_and_skopeo(tmp_path: Path) -> None:
    write_fleet(tmp_path, [cluster("online", kubernetes={"version": "1.33"}),
                           cluster("airgap", kubernetes={"version": "1.33"}, mirror="dc-north")])
    listing = run("images", "--cluster", "airgap", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines == sorted(lines) and all(line.startswith("harbor.dc-north.acme.internal/") for line in lines)
    assert any(":595.91.07-ubuntu22.04" in line for line in lines)
    skopeo = run("images", "--format", "skopeo", cwd=tmp_path)
    assert skopeo.returncode == 0
    assert ("skopeo copy --all docker://nvcr.io/nvidia/gpu-operator:v26.7.0 "
            "docker://harbor.dc-north.acme.internal/nvcr/nvidia/gpu-operator:v26.7.0") in skopeo.stdout
    every = run("images", cwd=tmp_path).stdout.splitlines()
    assert "nvcr.io/nvidia/gpu-operator:v26.7.0" in every


def test_images_unknown_cluster_exits_2(tmp_path: Path) -> None:
    write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"})])
    result = run("images", "--cluster", "nope", cwd=tmp_path)
    assert result.returncode == 2 and "no cluster named nope" in result.stderr


def test_committed_rendered_is_current() -> None:
    result = run("render", "--check", cwd=REPO_ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr


def test_images_txt_matches_values(tmp_path: Path) -> None:
    write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"})])
    assert run("render", cwd=tmp_path).returncode == 0
    listed = (tmp_path / "rendered" / "clusters" / "one" / "images.txt").read_text().splitlines()
    values = yaml.safe_load((tmp_path / "rendered" / "clusters" / "one" / "gpu-operator.values.yaml").read_text())
    toolkit = values["toolkit"]
    assert f"{toolkit['repository']}/{toolkit['image']}:{toolkit['version']}" in listed


def test_images_of_one_cluster_read_only_that_cluster(tmp_path: Path) -> None:
    fleet = write_fleet(tmp_path, [cluster("one", kubernetes={"version": "1.33"}),
                                   cluster("two", kubernetes={"version": "1.33"})])
    (fleet / "clusters" / "two.yaml").write_text("apiVersion: [unclosed\n")
    one = run("images", "--cluster", "one", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert "nvcr.io/nvidia/gpu-operator:v26.7.0" in one.stdout.splitlines()
    every = run("images", cwd=tmp_path)
    assert every.returncode == 2 and "two.yaml" in every.stderr


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_output_does_not_depend_on_where_render_runs(tmp_path: Path) -> None:
    """Source paths in rendered files (deviations, handover) and the Job names hashed from them are the
    same whether the fleet is named relative to the repository, from another folder, or absolutely."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE_FLEET, repo / "fleet")
    shutil.copytree(EXAMPLE_FLEET.parent / "policies", repo / "policies")
    here = run("render", cwd=repo)
    assert here.returncode == 0, here.stderr
    above = run("render", "repo/fleet", "--policies", "repo/policies", "--out", "above", cwd=tmp_path)
    assert above.returncode == 0, above.stderr
    absolute = run("render", str(repo / "fleet"), "--policies", str(repo / "policies"),
                   "--out", str(tmp_path / "absolute"), cwd=tmp_path.anchor)
    assert absolute.returncode == 0, absolute.stderr
    rendered = _tree(repo / "rendered")
    assert "fleet/clusters/infer-north.yaml" in rendered["clusters/infer-north/deviations.yaml"].decode()
    assert _tree(tmp_path / "above") == rendered
    assert _tree(tmp_path / "absolute") == rendered
