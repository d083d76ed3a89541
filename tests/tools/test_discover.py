"""Discovery of helm, kubectl/kustomize and git: option, env, .tools/bin, PATH, and clear errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpuspec.errors import ToolMissingError
from gpuspec.tools import discover
from gpuspec.tools.discover import find_git, find_helm, find_kubectl, find_kustomize, local_tool_dirs

REPO_ROOT = Path(__file__).resolve().parents[2]


def _fake_tool(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\necho fake\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def no_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend gpuspec does not run from its checkout, so its .tools/bin is not searched."""
    monkeypatch.setattr(discover, "_checkout_root", lambda: None)


def test_explicit_option_wins(tmp_path: Path, tools_bin: Path) -> None:
    fake = _fake_tool(tmp_path / "x", "helm")
    assert find_helm(fake, env={"GPUSPEC_HELM": str(tools_bin / "helm"), "PATH": ""}) == fake


def test_env_beats_tools_dir_and_path(tmp_path: Path, tools_bin: Path) -> None:
    fake = _fake_tool(tmp_path / "x", "helm")
    assert find_helm(env={"GPUSPEC_HELM": str(fake), "PATH": os.environ.get("PATH", "")}) == fake


def test_checkout_tools_dir_is_found(tools_bin: Path, tmp_path: Path) -> None:
    # From an unrelated directory, gpuspec still finds the helm installed in its own checkout.
    assert find_helm(env={"PATH": ""}, cwd=tmp_path) == tools_bin / "helm"
    assert find_kubectl(env={"PATH": ""}, cwd=tmp_path) == tools_bin / "kubectl"


def test_fleet_repository_tools_dir_is_never_used(tmp_path: Path, no_checkout: None) -> None:
    # A fleet repository is input: a .tools/bin/helm it ships must not run (in CI, as the CI user).
    (tmp_path / ".git").mkdir()
    _fake_tool(tmp_path / ".tools" / "bin", "helm")
    sub = tmp_path / "fleet" / "clusters"
    sub.mkdir(parents=True)
    for cwd in (tmp_path, sub):
        assert local_tool_dirs(cwd) == []
        with pytest.raises(ToolMissingError):
            find_helm(env={"PATH": ""}, cwd=cwd)
    path_helm = _fake_tool(tmp_path / "bin", "helm")
    assert find_helm(env={"PATH": str(tmp_path / "bin")}, cwd=tmp_path) == path_helm


def test_tools_dir_search_stops_at_repo_root(tmp_path: Path, no_checkout: None) -> None:
    _fake_tool(tmp_path / ".tools" / "bin", "helm")  # above the repository: not searched
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    with pytest.raises(ToolMissingError):
        find_helm(env={"PATH": ""}, cwd=repo)


def test_path_is_last(tmp_path: Path, no_checkout: None) -> None:
    fake = _fake_tool(tmp_path / "bin", "helm")
    (tmp_path / "work" / ".git").mkdir(parents=True)
    assert find_helm(env={"PATH": str(tmp_path / "bin")}, cwd=tmp_path / "work") == fake


def test_env_pointing_nowhere_with_empty_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "helm"
    with pytest.raises(ToolMissingError) as info:
        find_helm(env={"GPUSPEC_HELM": str(missing), "PATH": ""}, cwd=tmp_path)
    text = str(info.value)
    assert "helm not found" in text
    assert str(missing) in text
    assert "GPUSPEC_HELM" in text
    assert "gpuspec tools install" in text


def test_env_pointing_nowhere_in_process_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_HELM", str(tmp_path / "missing-helm"))
    monkeypatch.setenv("PATH", "")
    with pytest.raises(ToolMissingError, match="gpuspec tools install"):
        find_helm()


def test_nothing_found_says_how_to_install(tmp_path: Path, no_checkout: None) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises(ToolMissingError) as info:
        find_helm(env={"PATH": ""}, cwd=tmp_path)
    assert "helm not found" in info.value.message
    assert info.value.hint is not None and "gpuspec tools install" in info.value.hint


def test_kustomize_prefers_kubectl(tools_bin: Path, tmp_path: Path) -> None:
    command = find_kustomize(env={"PATH": ""}, cwd=tmp_path)
    assert command.via == "kubectl"
    assert command.argv == (str(tools_bin / "kubectl"), "kustomize")
    assert command.build_argv(tmp_path) == [str(tools_bin / "kubectl"), "kustomize", str(tmp_path)]


def test_kustomize_binary_fallback(tmp_path: Path, no_checkout: None) -> None:
    (tmp_path / ".git").mkdir()
    fake = _fake_tool(tmp_path / "bin", "kustomize")
    command = find_kustomize(env={"PATH": str(tmp_path / "bin")}, cwd=tmp_path)
    assert command.via == "kustomize"
    assert command.argv == (str(fake), "build")


def test_kustomize_missing(tmp_path: Path, no_checkout: None) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises(ToolMissingError, match="kustomize not found") as info:
        find_kustomize(env={"PATH": ""}, cwd=tmp_path)
    assert "gpuspec tools install" in str(info.value)


def test_explicit_kubectl_missing_does_not_fall_back(tmp_path: Path, tools_bin: Path) -> None:
    with pytest.raises(ToolMissingError, match="GPUSPEC_KUBECTL"):
        find_kustomize(env={"GPUSPEC_KUBECTL": str(tmp_path / "kubectl"), "PATH": ""}, cwd=tmp_path)


def test_bare_name_resolved_on_path(tmp_path: Path, no_checkout: None) -> None:
    fake = _fake_tool(tmp_path / "bin", "helm4")
    assert find_helm("helm4", env={"PATH": str(tmp_path / "bin")}, cwd=tmp_path) == fake


def test_git_on_path_and_missing(tmp_path: Path) -> None:
    fake = _fake_tool(tmp_path / "bin", "git")
    assert find_git(env={"PATH": str(tmp_path / "bin")}) == fake
    with pytest.raises(ToolMissingError, match="git not found"):
        find_git(env={"PATH": ""})
