"""`render --check` of a fresh clone compares digests with the committed render proof instead of rendering,
and only where the proof vouches for gpuspec, every input, the day and every output file."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from gpuspec.render import proof as proof_module
from gpuspec.render.proof import PROOF_PATH, Proof, parse_proof, window

from .fleets import cluster, write_fleet
from .test_cli import run

PROVEN = "match render-proof.yaml"


def _rendered(tmp_path: Path) -> Path:
    root = tmp_path / "author"
    write_fleet(root, [cluster("one", kubernetes={"version": "1.33"}), cluster("two", kubernetes={"version": "1.33"})])
    first = run("render", cwd=root)
    assert first.returncode == 0, first.stderr
    return root


def _clone(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh CI clone: the same files, and a user cache that has never seen them."""
    clone = tmp_path / "clone"
    for name in ("fleet", "policies", "rendered"):
        shutil.copytree(root / name, clone / name)
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "ci-cache"))
    return clone


def test_a_fresh_clone_is_checked_against_the_proof(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = _clone(_rendered(tmp_path), tmp_path, monkeypatch)
    check = run("render", "--check", cwd=clone)
    assert check.returncode == 0 and PROVEN in check.stdout, check.stdout + check.stderr
    full = run("render", "--check", "--full", cwd=clone)
    assert full.returncode == 0 and PROVEN not in full.stdout and "up to date" in full.stdout


def test_a_hand_edited_output_file_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = _clone(_rendered(tmp_path), tmp_path, monkeypatch)
    values = clone / "rendered" / "clusters" / "two" / "gpu-operator.values.yaml"
    values.write_bytes(values.read_bytes().replace(b"true", b"TRUE", 1))
    check = run("render", "--check", cwd=clone)
    assert check.returncode == 1 and "clusters/two/gpu-operator.values.yaml" in check.stdout


@pytest.mark.parametrize("edit", ["cluster", "policy", "other fleet file", "template override"])
def test_an_input_changed_without_rendering_is_caught_or_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    clone = _clone(_rendered(tmp_path), tmp_path, monkeypatch)
    if edit == "cluster":
        path = clone / "fleet" / "clusters" / "one.yaml"
        path.write_text(path.read_text().replace("nodes: 2", "nodes: 3"))
    elif edit == "policy":
        path = clone / "policies" / "default.yaml"
        path.write_text(path.read_text() + "# edited\n")
    elif edit == "other fleet file":
        (clone / "fleet" / "NOTES.md").write_text("not an input of any file, still covered\n")
    else:
        (clone / "fleet" / "templates").mkdir(exist_ok=True)
        (clone / "fleet" / "templates" / "handover.md.j2").write_text("{{ nothing }}\n")
    check = run("render", "--check", cwd=clone)
    assert PROVEN not in check.stdout  # the full path decides
    if edit == "cluster":
        assert check.returncode == 1 and "clusters/one/" in check.stdout


def test_another_gpuspec_does_not_match_the_proof(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = _clone(_rendered(tmp_path), tmp_path, monkeypatch)
    monkeypatch.chdir(clone)
    today = dt.date.today()
    assert proof_module.proven(Path("rendered"), Path("fleet"), Path("policies"), today) is not None
    proof_module.code_digest.cache_clear()
    monkeypatch.setattr(proof_module, "_SHAPING", ("PyYAML", "a-library-of-another-version"))
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    assert proof_module.proven(Path("rendered"), Path("fleet"), Path("policies"), today) is None
    proof_module.code_digest.cache_clear()


def test_an_unchanged_output_keeps_its_proof(tmp_path: Path) -> None:
    root = _rendered(tmp_path)
    before = (root / "rendered" / PROOF_PATH).read_bytes()
    (root / "fleet" / "NOTES.md").write_text("an input digest change that changes no output file\n")
    again = run("render", cwd=root)
    assert again.returncode == 0 and " 0 written" in again.stdout
    assert (root / "rendered" / PROOF_PATH).read_bytes() == before


def test_the_proof_covers_the_days_the_exceptions_are_the_same() -> None:
    day = dt.date(2026, 12, 2)
    assert window([], day) == (None, None)
    assert window([dt.date(2026, 11, 30), dt.date(2027, 3, 31), dt.date(2027, 1, 15)], day) == (
        dt.date(2026, 12, 1),
        dt.date(2027, 1, 15),
    )
    proof = Proof("a" * 64, "b" * 64, dt.date(2026, 12, 1), dt.date(2027, 1, 15))
    assert proof.covers(day) and proof.covers(dt.date(2027, 1, 15))
    assert not proof.covers(dt.date(2027, 1, 16)) and not proof.covers(dt.date(2026, 11, 30))
    assert parse_proof(proof.to_bytes()) == proof
    assert parse_proof(proof.to_bytes() + b"extra: 1\n") is None
    assert parse_proof(b"inputs: " + b"a" * 64) is None


def test_a_check_after_an_exception_expired_is_not_taken_from_the_proof(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "author"
    write_fleet(root, [cluster("one", kubernetes={"version": "1.33"})])
    pack = root / "policies" / "default.yaml"
    pack.write_text(
        pack.read_text()
        + (
            "exceptions:\n  - rules: [GS202]\n    cluster: one\n    owner: gpu-platform@example.com\n"
            "    reason: adopted as it runs\n    expires: 2027-03-31\n"
        )
    )
    assert run("render", "--today", "2026-12-02", cwd=root).returncode == 0
    assert "validThrough: '2027-03-31'" in (root / "rendered" / PROOF_PATH).read_text()
    clone = _clone(root, tmp_path, monkeypatch)
    inside = run("render", "--check", "--today", "2027-03-31", cwd=clone)
    assert inside.returncode == 0 and PROVEN in inside.stdout, inside.stdout + inside.stderr
    after = run("render", "--check", "--today", "2027-04-01", cwd=clone)
    assert PROVEN not in after.stdout
