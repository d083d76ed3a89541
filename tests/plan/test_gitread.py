"""Reading the fleet of a git revision from git objects: revisions, shallow clones, unusable bases."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpuspec.errors import GpuspecError
from gpuspec.history.comparison import compare
from gpuspec.history.gitread import changed_paths, relative_to_repo, repo_root, resolve_commit
from gpuspec.history.revision import load_fleet_at
from gpuspec.rollout.diff import diff_fleets

from .helpers import FleetRepo, pool


def test_base_is_read_from_git_objects_not_the_working_tree(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["kubernetes"]["version"] = "1.34"
    base = load_fleet_at(repo.root, "HEAD", "fleet")
    fleet = base.require()
    cluster = fleet.cluster("infer-north")
    assert cluster is not None and cluster.kubernetes.version == "1.33"
    assert cluster.source_file == "HEAD:fleet/clusters/infer-north.yaml"
    assert [c.name for c in fleet.clusters] == ["infer-north", "train-east"]
    assert base.commit == repo.git("rev-parse", "HEAD")


def test_unknown_revision_is_a_clear_input_error(repo: FleetRepo) -> None:
    with pytest.raises(GpuspecError, match="unknown git revision 'no-such-branch'") as info:
        resolve_commit(repo.root, "no-such-branch")
    assert info.value.hint and "git fetch" in info.value.hint


@pytest.mark.parametrize("rev", ["--output=/tmp/x", "", "a b"])
def test_option_like_or_blank_revisions_are_refused(repo: FleetRepo, rev: str) -> None:
    with pytest.raises(GpuspecError, match="not a git revision"):
        resolve_commit(repo.root, rev)


def test_outside_a_repository_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    with pytest.raises(GpuspecError, match="not inside a git repository"):
        repo_root(lonely)


def test_unusable_base_names_the_file_and_problem(repo: FleetRepo) -> None:
    (repo.root / "fleet/clusters/train-east.yaml").write_text("kind: Cluster\n  bad: [\n", encoding="utf-8")
    repo.commit("broken")
    repo.git("checkout", "-q", "HEAD~1", "--", "fleet")
    base = load_fleet_at(repo.root, "HEAD", "fleet")
    assert base.fleet is None
    with pytest.raises(GpuspecError, match=r"unusable:\n  HEAD:fleet/clusters/train-east.yaml:2:") as info:
        base.require()
    assert "choose another --base" in (info.value.hint or "")


def test_schema_errors_in_the_base_make_it_unusable(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["operator"]["colour"] = "blue"
    repo.commit("typo")
    base = load_fleet_at(repo.root, "HEAD", "fleet")
    assert base.fleet is None
    assert any(f.rule_id == "GS103" and "colour" in f.message for f in base.findings)


def test_missing_fleet_at_base_is_an_input_error(repo: FleetRepo) -> None:
    with pytest.raises(GpuspecError, match=r"other/fleet.yaml does not exist at revision HEAD"):
        load_fleet_at(repo.root, "HEAD", "other")


def test_fleet_in_a_subfolder_and_from_a_subdirectory(repo: FleetRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo.root / "ops").mkdir()
    repo.git("mv", "fleet", "ops/fleet")
    repo.commit("move")
    monkeypatch.chdir(repo.root / "ops")
    comparison = compare(Path("fleet"), "HEAD")
    assert comparison.fleet_rel == "ops/fleet"
    assert comparison.base_fleet.cluster("train-east") is not None
    assert relative_to_repo(repo.root, Path("fleet")) == "ops/fleet"


def test_changed_paths_cover_modified_staged_deleted_and_untracked(repo: FleetRepo) -> None:
    (repo.root / "rendered/new.yaml").write_text("a: 1\n", encoding="utf-8")
    (repo.root / "policies/default.yaml").unlink()
    with repo.cluster("train-east") as data:
        pool(data, "h100")["nodes"] = 33
    repo.git("add", "fleet/clusters/train-east.yaml")
    base = repo.git("rev-parse", "HEAD")
    assert changed_paths(repo.root, base) == [
        "fleet/clusters/train-east.yaml", "policies/default.yaml", "rendered/new.yaml"
    ]


def test_shallow_clone_works_once_the_base_is_fetched(repo: FleetRepo, tmp_path: Path) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    with repo.cluster("infer-north") as data:
        pool(data, "l40s-canary")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    repo.commit("canary to 595")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", "--branch", "feature", "--single-branch",
         f"file://{repo.root}", str(clone)],
        check=True, env=repo.env,
    )
    with pytest.raises(GpuspecError, match="unknown git revision 'origin/main'"):
        compare(clone / "fleet", "origin/main")
    subprocess.run(
        ["git", "-C", str(clone), "fetch", "-q", "--depth=1", "origin", "main:refs/remotes/origin/main"],
        check=True, env=repo.env,
    )
    comparison = compare(clone / "fleet", "origin/main")
    assert comparison.base_fleet.cluster("infer-north") is not None
    changes = diff_fleets(comparison.base_fleet, comparison.head)
    assert [(c.cluster, c.pool, c.kind.value) for c in changes] == [("infer-north", "l40s-canary", "driver")]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe binary", "not valid UTF-8"),
        (b"", "is empty"),
        (b"- a\n- b\n", "must be a mapping"),
        (b"a: 1\n---\nb: 2\n", "more than one YAML document"),
        (b"a: !!python/object:os.system x\n", "not allowed"),
        (b"a: &x [*x]\n", "recursive alias"),
    ],
)
def test_broken_base_files_are_clear_errors_not_tracebacks(repo: FleetRepo, content: bytes, expected: str) -> None:
    (repo.fleet / "clusters/train-east.yaml").write_bytes(content)
    repo.commit("broken base")
    repo.git("checkout", "-q", "HEAD~1", "--", "fleet")
    with pytest.raises(GpuspecError, match=expected):
        _ = compare(Path("fleet"), "HEAD").base_fleet


def test_symlinked_cluster_file_in_the_base_is_refused(repo: FleetRepo) -> None:
    link = repo.fleet / "clusters/extra.yaml"
    link.symlink_to("train-east.yaml")
    repo.commit("symlink")
    base = load_fleet_at(repo.root, "HEAD", "fleet")
    assert base.fleet is None and "symbolic link" in base.findings[0].message


def test_fleet_dir_that_is_a_file(repo: FleetRepo) -> None:
    with pytest.raises(GpuspecError, match="is not a directory"):
        compare(Path("fleet/fleet.yaml"), "HEAD")
