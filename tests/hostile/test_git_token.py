"""Nothing under ``.git/`` is ever read or written as an input or output, whatever the path, and an HTTP
authorization header (git's ``http.<url>.extraheader``, where actions/checkout persists the job's token) is a
credential to the redactor."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.redaction import classify_value, redact_line, redact_text
from hostile.hostile_cli import REPO, gpuspec, make_repo

TOKEN = "ghs_" + "Q9w8E7r6" * 5
HEADER_B64 = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
EXTRAHEADER = f"AUTHORIZATION: basic {HEADER_B64}"


def _checked_out_repo(tmp_path: Path) -> Path:
    """The example fleet committed in a real git repository whose .git/config holds the checkout token."""
    root = make_repo(tmp_path)
    (root / ".git").rmdir()
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-qm", "base"],
                 ["config", "--local", "http.https://github.com/.extraheader", EXTRAHEADER]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    assert HEADER_B64 in (root / ".git" / "config").read_text()
    return root


def _no_token_anywhere(root: Path, text: str) -> None:
    for secret in (HEADER_B64, TOKEN, "extraheader"):
        assert secret not in text, text
    for path in root.rglob("*"):
        if ".git" in path.relative_to(root).parts or not path.is_file() or path.is_symlink():
            continue
        assert HEADER_B64 not in path.read_text(errors="replace"), path


@pytest.mark.parametrize("how", ["override-link", "include-link", "override-dir-link"])
def test_template_cannot_pull_in_git_config(how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = _checked_out_repo(tmp_path)
    templates = root / "fleet" / "templates"
    if how == "override-link":
        (templates / "handover").mkdir(parents=True)
        (templates / "handover" / "cluster.md.j2").symlink_to(Path("../../../.git/config"))
        (templates / "plan").mkdir(parents=True)
        (templates / "plan" / "comment.md.j2").symlink_to(Path("../../../.git/config"))
    elif how == "include-link":
        (templates / "handover").mkdir(parents=True)
        (templates / "handover" / "cluster.md.j2").write_text('{% include "leak.txt" %}\n')
        (templates / "plan").mkdir(parents=True)
        (templates / "plan" / "comment.md.j2").write_text('{% include "leak.txt" %}\n')
        (templates / "leak.txt").symlink_to(Path("../../.git/config"))
    else:
        templates.symlink_to(Path("../.git"))
        (root / ".git" / "handover").mkdir()
        (root / ".git" / "handover" / "cluster.md.j2").write_text('{% include "config" %}\n')
    for args in (["render"], ["render", "--check"], ["handover"], ["plan", "--base", "HEAD", "--format", "markdown"],
                 ["plan", "--base", "HEAD"]):
        result = gpuspec(args, monkeypatch, capsys, cwd=root)
        _no_token_anywhere(root, result.text)
        if args[0] != "plan" or (how != "override-dir-link" and "markdown" in args):  # the templates used
            assert result.code == 2, (args, result.text)
            assert ".git folder" in result.text, (args, result.text)


def test_read_bounded_refuses_every_path_into_git(tmp_path: Path) -> None:
    root = _checked_out_repo(tmp_path)
    (root / "link.yaml").symlink_to(root / ".git" / "config")
    for path in (root / ".git" / "config", root / "link.yaml", root / "fleet" / ".." / ".git" / "HEAD"):
        with pytest.raises(UnsafeFile, match=r"\.git folder"):
            read_bounded(path, 1 << 20)


@pytest.mark.parametrize("args", [
    ["audit", "--cluster", "train-east", "--nodes", ".git/config"],
    ["audit", "--cluster", "train-east", "--nodes", "nodes.json"],  # a link into .git
    ["import", "--nodes", "nodes.json"],
    ["lint", "--output", ".git/hooks/pre-commit"],
    ["render", "--out", ".git/rendered"],
    ["verify", "--rendered", ".git"],
    ["lint", "--policies", ".git"],
    ["validate", ".git"],
])
def test_file_options_refuse_git(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = _checked_out_repo(tmp_path)
    (root / "nodes.json").symlink_to(root / ".git" / "config")
    result = gpuspec(args, monkeypatch, capsys, cwd=root)
    assert result.code == 2, result.text
    assert ".git folder" in result.text
    _no_token_anywhere(root, result.text)
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert not (root / ".git" / "rendered").exists()


@pytest.mark.parametrize("text", [
    f"\textraheader = {EXTRAHEADER}",
    EXTRAHEADER,
    f"Authorization: Bearer {TOKEN[4:]}",
    "authorization: token 0123456789abcdef0123",
    f'{{"Authorization": "Basic {HEADER_B64}"}}',
    f"curl -H 'Authorization: Basic {HEADER_B64}'",
])
def test_authorization_headers_are_credentials(text: str) -> None:
    assert classify_value(text) is not None
    for shown in (redact_text(text), redact_line(text)):
        assert HEADER_B64 not in shown and TOKEN not in shown and TOKEN[4:] not in shown, shown
        assert "0123456789abcdef0123" not in shown


@pytest.mark.parametrize("glued", ["stable", "v1", "x_", "release-7"])
def test_tokens_glued_to_a_word_are_redacted(glued: str) -> None:
    token = "ghp_" + "Z1x2C3v4" * 5
    for text in (f"{glued}{token}", f"image: nvcr.io/{glued}{token}", f"{glued}glpat-{'a1' * 12}"):
        shown = redact_text(text)
        assert "Z1x2C3v4Z1x2" not in shown and "a1a1a1a1a1a1" not in shown, shown


def test_rbac_api_group_is_not_a_credential() -> None:
    assert classify_value("apiVersion: rbac.authorization.k8s.io/v1") is None
    assert redact_text("apiGroup: rbac.authorization.k8s.io") == "apiGroup: rbac.authorization.k8s.io"


def test_repository_rendered_output_unchanged_by_git_rules() -> None:
    assert (REPO / "rendered").is_dir()
