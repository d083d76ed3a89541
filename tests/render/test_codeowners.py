"""`gpuspec codeowners`: the CODEOWNERS section from the ownership, written into and checked in the repository."""

from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path

import yaml
from audit.audit_cli import run_gpuspec

from gpuspec.render.codeowners import BEGIN, END, section_in, splice

from .fleets import EXAMPLE_FLEET, EXAMPLE_POLICIES


def _repo(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE_FLEET, tmp_path / "fleet")
    shutil.copytree(EXAMPLE_POLICIES, tmp_path / "policies")
    return tmp_path


def _owners_of(codeowners: str, path: str) -> list[str]:
    """The owners GitHub gives ``path``: the last matching line wins (the patterns gpuspec writes: anchored
    files, anchored folders, ``*`` within one segment)."""
    owners: list[str] = []
    for line in codeowners.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pattern, *names = line.split()
        anchored = pattern.lstrip("/")
        if pattern.endswith("/"):
            parts = anchored.rstrip("/").split("/")
            head = "/".join(path.split("/")[: len(parts)])
            matched = fnmatch.fnmatchcase(head, "/".join(parts)) and path.count("/") >= len(parts)
        else:
            matched = fnmatch.fnmatchcase(path, anchored)
        if matched:
            owners = names
    return owners


def test_write_then_check_and_the_owners_github_derives(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".github").mkdir()
    (repo / ".github" / "CODEOWNERS").write_text("# hand-written\n* @acme/admins\n/docs/ @acme/writers\n")
    missing = run_gpuspec("codeowners", "--check", cwd=repo)
    assert missing.code == 1 and "has no gpuspec section" in missing.err
    wrote = run_gpuspec("codeowners", "--write", cwd=repo)
    assert wrote.code == 0, wrote.err
    text = (repo / ".github" / "CODEOWNERS").read_text()
    assert text.startswith("# hand-written\n* @acme/admins\n/docs/ @acme/writers\n")
    assert run_gpuspec("codeowners", "--check", cwd=repo).code == 0
    assert _owners_of(text, "fleet/clusters/infer-north.yaml") == [
        "@acme/gpu-platform",
        "@acme/dc-north-ops",
        "@acme/gpu-hardware",
    ]
    assert _owners_of(text, "rendered/clusters/train-east/rbac.yaml") == ["@acme/gpu-platform", "@acme/gpu-hardware"]
    assert _owners_of(text, "rendered/gitops/argocd/train-east/gpu-operator.yaml") == [
        "@acme/gpu-platform",
        "@acme/gpu-hardware",
    ]
    assert _owners_of(text, "fleet/fleet.yaml") == ["@acme/gpu-platform"]
    assert _owners_of(text, "policies/default.yaml") == ["@acme/gpu-platform"]
    assert _owners_of(text, "docs/x.md") == ["@acme/writers"]
    # a second write changes nothing
    again = run_gpuspec("codeowners", "--write", cwd=repo)
    assert again.code == 0 and "up to date" in again.out


def test_check_fails_when_ownership_changes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "CODEOWNERS").write_text("")
    assert run_gpuspec("codeowners", "--write", cwd=repo).code == 0
    assert not (repo / ".github").exists()  # the existing root CODEOWNERS is the file GitHub reads
    cluster = repo / "fleet" / "clusters" / "train-east.yaml"
    cluster.write_text(
        cluster.read_text().replace("kubernetes:\n", "ownership:\n  hardware: dc-north-ops\nkubernetes:\n", 1)
    )
    stale = run_gpuspec("codeowners", "--check", cwd=repo)
    assert stale.code == 1 and "stale" in stale.err
    printed = run_gpuspec("codeowners", cwd=repo)
    assert "/fleet/clusters/train-east.yaml @acme/gpu-platform @acme/dc-north-ops" in printed.out


def test_teams_without_code_owners_leave_paths_to_the_broader_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    settings = yaml.safe_load((repo / "fleet" / "fleet.yaml").read_text())
    for team in settings["teams"]:
        if team["name"] != "gpu-platform":
            team.pop("codeOwners", None)
    (repo / "fleet" / "fleet.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    out = run_gpuspec("codeowners", cwd=repo).out
    assert _owners_of(out, "fleet/clusters/infer-north.yaml") == ["@acme/gpu-platform"]
    assert "@acme/gpu-hardware" not in out


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "fleet" / "fleet.yaml").write_text(
        (repo / "fleet" / "fleet.yaml").read_text().replace("  platform: gpu-platform\n", "  platform: Not A Name\n")
    )
    result = run_gpuspec("codeowners", "--write", cwd=repo)
    assert result.code == 2
    assert "fleet.yaml" in result.err
    assert not (repo / ".github").exists()


def test_splice_replaces_only_the_section() -> None:
    section = [BEGIN + ": x", "/fleet/ @a", END]
    text = splice("* @admins\n" + "\n".join([BEGIN, "/old/ @b", END]) + "\n/after/ @c\n", section)
    assert text == "* @admins\n" + BEGIN + ": x\n/fleet/ @a\n" + END + "\n/after/ @c\n"
    assert section_in(text) == section
    assert section_in("* @admins\n" + BEGIN + "\n") is None
    assert splice("", section) == "\n".join(section) + "\n"
