"""Hostile input must not leak: links out of the repository, FIFOs and devices are refused unread; no
credential of the fleet (a credential-like key, URL userinfo, a token shape) reaches any command's output,
in any format, or rendered/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.redaction import redact_line, redact_text
from gpuspec.report.text import code_frame
from hostile.hostile_cli import AUDIT_NODES, REPO, gpuspec, make_repo

KEY_SECRET = "hunter2-KEYSECRET"
TOKEN = "ghp_" + "A1b2C3d4" * 5
URL_SECRET = "URLSECRET9"

LINT_FORMATS = ["text", "json", "sarif", "github", "junit"]

#: Every command that reports on a fleet, with each of its formats: (name, arguments after the fleet setup).
COMMANDS: list[tuple[str, list[str]]] = [
    *[(f"validate-{f}", ["validate", "--format", f]) for f in ("text", "json")],
    *[(f"lint-{f}", ["lint", "--format", f]) for f in LINT_FORMATS],
    ("render", ["render"]),
    ("render-check", ["render", "--check"]),
    *[(f"images-{f}", ["images", "--format", f]) for f in ("list", "skopeo")],
    ("handover", ["handover"]),
    *[(f"audit-{f}", ["audit", "--cluster", "train-east", "--nodes", str(AUDIT_NODES), "--format", f])
      for f in LINT_FORMATS],
    *[(f"verify-{f}", ["verify", "--format", f]) for f in LINT_FORMATS],
    *[(f"upgrade-{f}", ["upgrade", "--wave", "1", "--driver-branch", "595", "--format", f])
      for f in ("text", "json", "markdown")],
]


def _key_and_token_fleet(root: Path) -> None:
    """A password under an unknown key, and a GitHub token where a number belongs (both schema errors)."""
    path = root / "fleet" / "clusters" / "train-east.yaml"
    text = path.read_text()
    text = text.replace("      count: 8\n", f"      count: {TOKEN}\n      password: {KEY_SECRET}\n", 1)
    path.write_text(f"password: {KEY_SECRET}\n" + text)


def _url_fleet(root: Path) -> None:
    """Userinfo in the fleet's git URL (a valid schema: only the credential check stops it)."""
    path = root / "fleet" / "fleet.yaml"
    path.write_text(path.read_text().replace("repoURL: https://", f"repoURL: https://deploy:{URL_SECRET}@"))


@pytest.mark.parametrize("variant", ["key-and-token", "url"])
@pytest.mark.parametrize(("name", "args"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_no_credential_reaches_any_output(name: str, args: list[str], variant: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    if variant == "url" and args[0] == "verify":
        pytest.skip("a usable fleet makes verify pull charts; the unusable variant covers verify's report path")
    root = make_repo(tmp_path)
    (_key_and_token_fleet if variant == "key-and-token" else _url_fleet)(root)
    result = gpuspec(args, monkeypatch, capsys, cwd=root)
    for secret in (KEY_SECRET, TOKEN, URL_SECRET):
        assert secret not in result.text, (name, result.text)
    assert result.code != 0 or args[0] == "audit"
    rendered = root / "rendered"
    if rendered.exists():
        for file in rendered.rglob("*"):
            if file.is_file():
                assert URL_SECRET not in file.read_text(), file


def test_output_file_gets_no_credential_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    _key_and_token_fleet(root)
    for fmt in LINT_FORMATS:
        report = tmp_path / f"report.{fmt}"
        gpuspec(["lint", "--format", fmt, "--output", str(report)], monkeypatch, capsys, cwd=root)
        assert KEY_SECRET not in report.read_text() and TOKEN not in report.read_text()


def test_credentials_in_urls_are_validate_and_render_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    _url_fleet(root)
    validate = gpuspec(["validate"], monkeypatch, capsys, cwd=root)
    assert validate.code == 1 and "GS405 a URL with user:password" in validate.out
    render = gpuspec(["render"], monkeypatch, capsys, cwd=root)
    assert render.code == 1 and "nothing was written" in render.err
    assert not (root / "rendered").exists()


def _outside_link_repo(tmp_path: Path, target: str) -> Path:
    root = make_repo(tmp_path)
    (root / "fleet" / "clusters" / "leak.yaml").symlink_to(target)
    return root


@pytest.mark.parametrize("command", [["validate"], ["lint"], ["render"], ["lint", "--format", "sarif"],
                                     ["lint", "--format", "github"]])
def test_symlink_out_of_the_repository_is_refused_unread(command: list[str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("apiVersion: gpuspec.io/v1alpha1\nSECRET_ENV: leaked-value-42\n")
    root = _outside_link_repo(tmp_path, str(outside))
    result = gpuspec(command, monkeypatch, capsys, cwd=root)
    assert result.code == 2
    assert "leaked-value-42" not in result.text
    assert "GS101" in result.text and "leads outside the repository" in result.text


def test_symlink_to_proc_environ_and_dev_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    (root / "fleet" / "clusters" / "env.yaml").symlink_to("/proc/self/environ")
    (root / "fleet" / "clusters" / "zero.yaml").symlink_to("/dev/zero")
    started = time.monotonic()
    result = gpuspec(["lint"], monkeypatch, capsys, cwd=root)
    assert time.monotonic() - started < 10
    assert result.code == 2 and result.text.count("leads outside the repository") == 2
    assert "PATH=" not in result.text


def test_symlink_inside_the_repository_is_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    clusters = root / "fleet" / "clusters"
    (root / "shared-specs").mkdir()
    (clusters / "train-east.yaml").rename(root / "shared-specs" / "train-east.yaml")
    (clusters / "train-east.yaml").symlink_to(root / "shared-specs" / "train-east.yaml")
    assert gpuspec(["validate"], monkeypatch, capsys, cwd=root).code == 0


def test_fifo_fleet_file_is_refused_without_hanging(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    os.mkfifo(root / "fleet" / "clusters" / "pipe.yaml")
    proc = subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "lint"], cwd=root, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert proc.returncode == 2
    assert "pipe.yaml:1:1: error GS101 is not a regular file" in proc.stdout


def test_read_bounded_refuses_devices_and_oversized_files(tmp_path: Path) -> None:
    with pytest.raises(UnsafeFile, match="not a regular file"):
        read_bounded(Path("/dev/zero"), 1024)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 1000)
    with pytest.raises(UnsafeFile, match="limit"):
        read_bounded(big, 100)
    assert read_bounded(big, 10_000) == b"a: 1\n" * 1000


def test_code_frames_only_from_regular_bounded_files(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: 300 MB that must never be read
    started = time.monotonic()
    assert code_frame(str(big), 1, 1) == []
    assert code_frame("/dev/zero", 1, 1) == []
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    assert code_frame(str(fifo), 1, 1) == []
    assert time.monotonic() - started < 5


def test_code_frame_redacts_credential_lines(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(f"password: {KEY_SECRET}\nrepo: https://u:{URL_SECRET}@git.example/x\ntoken: {TOKEN}\n")
    frames = [code_frame(str(spec), line, 1)[0] for line in (1, 2, 3)]
    assert not any(secret in frame for frame in frames for secret in (KEY_SECRET, URL_SECRET, TOKEN))
    assert "password: <redacted>" in frames[0] and "https://<redacted>@git.example/x" in frames[1]


def test_redaction_by_key_and_by_shape() -> None:
    assert redact_line(f"  - {{name: a, apiKey: {KEY_SECRET}}}") == "  - {name: a, apiKey: <redacted>"
    assert redact_line("  password: |") == "  password: |"
    assert redact_line("  pullSecrets: [ngc-secret]") == "  pullSecrets: [ngc-secret]"
    assert TOKEN not in redact_text(f"'{TOKEN}' is not a valid integer")
    assert redact_text("plain text, no secret") == "plain text, no secret"
    report = json.dumps({"message": 'token: abc"def', "hint": f"password={KEY_SECRET}"})
    assert json.loads(redact_text(report)) == {"message": 'token: <redacted>"def', "hint": "password=<redacted>"}


def test_a_credential_inside_a_wrong_value_is_not_repeated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    path = root / "fleet" / "clusters" / "train-east.yaml"
    text = path.read_text()
    assert "      product: H100-SXM5-80GB\n" in text
    path.write_text(text.replace("      product: H100-SXM5-80GB\n",
                                 f"      product: {{password: {KEY_SECRET}}}\n", 1))
    for fmt in ("text", "json"):
        result = gpuspec(["validate", "--format", fmt], monkeypatch, capsys, cwd=root)
        assert result.code == 2 and "GS104" in result.out and KEY_SECRET not in result.text


def _commit_all(root: Path) -> None:
    (root / ".git").rmdir()
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize("variant", ["key-and-token", "url"])
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_plan_prints_no_credential(variant: str, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    _commit_all(root)
    (_key_and_token_fleet if variant == "key-and-token" else _url_fleet)(root)
    for args in (["plan", "--base", "HEAD", "--format", fmt], ["lint", "--base", "HEAD"]):
        result = gpuspec(args, monkeypatch, capsys, cwd=root)
        for secret in (KEY_SECRET, TOKEN, URL_SECRET):
            assert secret not in result.text, (args, result.text)


def test_missing_key_at_the_top_of_a_file_shows_no_credential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    (root / "fleet" / "clusters" / "top.yaml").write_text(f"password: {KEY_SECRET}\nkind: Cluster\n")
    for command in (["validate"], ["lint"], ["render"], ["images"]):
        result = gpuspec(command, monkeypatch, capsys, cwd=root)
        assert result.code == 2 and "GS105" in result.text and KEY_SECRET not in result.text


def test_fifo_fleet_file_does_not_hang_render_with_the_cache_on(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    os.mkfifo(root / "fleet" / "clusters" / "pipe.yaml")
    env = {**os.environ, "PYTHONPATH": str(REPO), "GPUSPEC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GPUSPEC_NO_CACHE", None)
    for args in (["render"], ["render", "--check"], ["handover"]):
        proc = subprocess.run([sys.executable, "-m", "gpuspec.cli.main", *args], cwd=root, capture_output=True,
                              text=True, timeout=60, env=env, check=False)
        assert proc.returncode == 2 and "is not a regular file" in proc.stderr, (args, proc.stderr)


def test_template_override_cannot_pull_in_a_file_from_outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("leaked-template-42\n")
    overrides = root / "fleet" / "templates" / "handover"
    overrides.mkdir(parents=True)
    (overrides / "cluster.md.j2").symlink_to(outside)
    for args in (["render"], ["handover"]):
        result = gpuspec(args, monkeypatch, capsys, cwd=root)
        assert result.code == 2 and "leads outside the repository" in result.err
        assert "leaked-template-42" not in result.text
    assert not any("leaked-template-42" in p.read_text() for p in root.rglob("*.md") if p.is_file())


def test_a_credential_quoted_as_json_inside_a_json_string_is_redacted() -> None:
    """`plan --format json` prints an override's value as a JSON string: its credential is escaped JSON
    (``\\"password\\": \\"...\\"``) and still redacted (found by the fuzz job)."""
    from gpuspec.redaction import redact_text

    line = '"after": "{\\"requests\\": {\\"password\\": \\"Zq7canaryPW91\\"}}"'
    assert "Zq7canaryPW91" not in redact_text(line) and "<redacted>" in redact_text(line)


def test_a_scheme_relative_url_with_user_and_password_is_redacted() -> None:
    """``//user:password@host`` (a URL without its scheme, as a hand-edited rendered file may carry it) is a
    credential like ``https://user:password@host``; a ``//`` inside a path or a word is not (found by the fuzz
    job in a `render --check` diff)."""
    from gpuspec.redaction import classify_value, redact_text

    secret = "Zq7canaryPW91"
    for text in (f" //u:{secret}@h.example/x", f"//u:{secret}@h", f"url=//u:{secret}@h", f"'//u:{secret}@h'"):
        assert secret not in redact_text(text) and "//<redacted>@h" in redact_text(text)
        assert classify_value(text) == "a URL with user:password"
    assert redact_text("https://u:Zq7canaryPW91@h/x") == "https://<redacted>@h/x"
    for text in ("see http://host/a//b:c@d", "a//u:p@h", "// note: mail me@example"):
        assert redact_text(text) == text and classify_value(text) is None


def test_a_credential_under_a_key_longer_than_200_characters_is_redacted() -> None:
    """Whether a key names a credential depends on how it ends: a 330-character key ending in ``password`` is
    one (a hand-edited rendered file shown in `render --check`'s diff, found by the fuzz job), in any text, in a
    quoted source line and in the spec check."""
    from gpuspec.redaction import is_secret_key, redact_line, redact_text

    key = "1" * 330 + "password"
    assert is_secret_key(key) and is_secret_key("a" * 300 + "_pass") and not is_secret_key("x" * 500)
    for text in (f"{key}: Zq7canaryPW91", f"-{key}: Zq7canaryPW91", f"+  {key}=Zq7canaryPW91"):
        assert "Zq7canaryPW91" not in redact_text(text) and "Zq7canaryPW91" not in redact_line(text)


def test_rendered_documents_redact_a_credential_a_spec_text_quotes(tmp_path: Path) -> None:
    """A `key: value` credential inside any spec text never reaches a document gpuspec renders (handover, PR
    comment), whatever template renders it; other text stays as it is."""
    from gpuspec.templating.environment import render

    folder = tmp_path / "fleet" / "templates" / "handover"
    folder.mkdir(parents=True)
    (folder / "probe.md.j2").write_text("contact: {{ contact }}\nteam: {{ team }}\n")
    text = render("handover/probe.md.j2", {"contact": "ops, password: Zq7canaryPW91", "team": "gpu-platform"},
                  tmp_path / "fleet")
    assert "Zq7canaryPW91" not in text and "password: <redacted>" in text and "team: gpu-platform" in text
