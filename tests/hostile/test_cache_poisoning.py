"""A cache folder may be shared or restored from elsewhere: no entry in it can run code or change a verdict.
Entries are sealed with a per-user secret kept outside the folder, decoded only as plain data after the seal
verifies, the folders are private, and a tool in the cache's tools/bin runs only with its pinned hash."""

from __future__ import annotations

import hmac
import marshal
import os
import pickle
import stat
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from gpuspec import usercache
from gpuspec.loader.parsecache import ParseCache, content_key
from gpuspec.matrix import load as matrix_load
from gpuspec.tools import discover
from hostile.hostile_cli import REPO, make_repo


class _Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch PWNED",))


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "GPUSPEC_CACHE_DIR": str(tmp_path / "cache"),
           "GPUSPEC_CACHE_KEY_FILE": str(tmp_path / "config" / "cache.key")}
    env.pop("GPUSPEC_NO_CACHE", None)
    env.pop("GPUSPEC_CACHE_KEY", None)
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuspec.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env, check=False)


def test_a_planted_pickle_in_every_entry_runs_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    env = _env(tmp_path)
    first = _run(["lint"], root, env)
    entries = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert any(p.parent.name == "matrix-data" for p in entries) and any(p.parent.name == "parsed" for p in entries)
    for entry in entries:
        entry.write_bytes(pickle.dumps(_Boom()))
    again = _run(["lint"], root, env)
    assert not (root / "PWNED").exists() and not (tmp_path / "PWNED").exists()
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)


def test_a_forged_parsed_entry_cannot_hide_a_files_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the user's secret, an entry claiming a file's content key is ignored; the file is parsed."""
    root = make_repo(tmp_path)
    env = _env(tmp_path)
    monkeypatch.setenv("GPUSPEC_CACHE_KEY_FILE", env["GPUSPEC_CACHE_KEY_FILE"])
    _run(["validate"], root, env)
    broken = root / "fleet" / "clusters" / "train-east.yaml"
    text = broken.read_text().replace("kind: Cluster", "kind: Clusterr", 1)
    broken.write_text(text)
    honest = _run(["validate"], root, env)
    assert honest.returncode == 2
    for entry in (tmp_path / "cache" / "parsed").iterdir():
        stored = usercache.unseal(f"parsed/{entry.name}", entry.read_bytes())
        assert stored is not None  # sealed by this user's secret
        forged = marshal.loads(stored)
        forged[content_key(text)] = {"kind": "Cluster"}
        entry.write_bytes(marshal.dumps(forged))  # no seal: what someone without the secret can write
    assert _run(["validate"], root, env).stdout == honest.stdout


def test_seal_is_bound_to_the_secret_and_the_entry_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_KEY", "one")
    sealed = usercache.seal("parsed/abc", b"payload")
    assert sealed is not None and usercache.unseal("parsed/abc", sealed) == b"payload"
    assert usercache.unseal("parsed/abd", sealed) is None
    assert usercache.unseal("parsed/abc", sealed[:-1] + b"X") is None
    monkeypatch.setenv("GPUSPEC_CACHE_KEY", "two")
    assert usercache.unseal("parsed/abc", sealed) is None


def test_seal_is_the_hmac_of_name_and_payload(monkeypatch: pytest.MonkeyPatch) -> None:
    # Entries written by earlier gpuspec versions (one HMAC over name, NUL and payload) still verify.
    monkeypatch.setenv("GPUSPEC_CACHE_KEY", "one")
    key = usercache.secret()
    assert key is not None
    mac = hmac.digest(key, b"parsed/abc\0payload", "sha256")
    assert usercache.seal("parsed/abc", b"payload") == b"gpuspec-cache-2\n" + mac + b"payload"


def test_large_entries_are_sealed_stored_and_loaded_without_copies(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A memo of handover documents is tens of megabytes: sealing it may not hold two more copies of it.
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUSPEC_CACHE_KEY", "one")
    value = {"documents": [os.urandom(1 << 20) for _ in range(24)]}
    payload = marshal.dumps(value)
    path = usercache.entry_path("handover", "fleet")
    assert path is not None
    tracemalloc.start()
    try:
        usercache.store_bytes(path, payload)
        stored = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        loaded = usercache.load(path)
        read = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert loaded == value
    assert stored < len(payload) // 4  # the old seal built name + payload, then magic + mac + payload
    assert read < 2.5 * len(payload)  # the file's bytes and the decoded value, no unsealed copy between


def test_cache_folders_and_key_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUSPEC_CACHE_KEY_FILE", str(tmp_path / "config" / "cache.key"))
    memo = ParseCache(tmp_path / "fleet")
    memo.put(None, b"k", {"a": 1})
    memo.save()
    for folder in [tmp_path / "cache", *(p for p in (tmp_path / "cache").rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((tmp_path / "config" / "cache.key").stat().st_mode) == 0o600
    assert ParseCache(tmp_path / "fleet").get(None, b"k") == (True, {"a": 1})


def test_a_key_others_can_read_turns_caching_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = tmp_path / "config" / "cache.key"
    key.parent.mkdir()
    key.write_bytes(os.urandom(32))
    key.chmod(0o644)
    monkeypatch.setenv("GPUSPEC_CACHE_KEY_FILE", str(key))
    monkeypatch.delenv("GPUSPEC_CACHE_KEY", raising=False)
    assert usercache.secret() is None and usercache.seal("x/y", b"") is None


def test_a_cache_folder_others_may_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    (shared / "parsed").mkdir(parents=True)
    os.chmod(shared, 0o777)
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(shared))
    memo = ParseCache(tmp_path / "fleet")
    memo.put(None, b"k", 1)
    memo.save()
    assert not list((shared / "parsed").iterdir())
    os.chmod(shared, 0o755)  # readable by others, writable only by the user: used, and made private
    memo.put(None, b"k", 1)
    memo.save()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o700 and len(list((shared / "parsed").iterdir())) == 1


def test_the_matrix_entry_is_json_checked_by_its_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    matrix_load._load_matrix.cache_clear()
    try:
        honest = matrix_load._load_matrix()
        (entry,) = (tmp_path / "cache" / "matrix-data").iterdir()
        payload = usercache.load_bytes(entry)
        assert payload is not None and payload.startswith(b"{")
        entry.write_bytes(pickle.dumps(_Boom()))
        matrix_load._load_matrix.cache_clear()
        assert matrix_load._load_matrix() == honest
    finally:
        matrix_load._load_matrix.cache_clear()


def test_a_replaced_tool_in_the_user_cache_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    bin_dir = tmp_path / "cache" / "tools" / "bin"
    bin_dir.mkdir(parents=True, mode=0o700)
    os.chmod(tmp_path / "cache" / "tools", 0o700)
    fake = bin_dir / "helm"
    fake.write_text("#!/bin/sh\ntouch PWNED\n")
    fake.chmod(0o755)
    assert not discover.verified_user_tool(fake)
    assert discover._lookup("helm", env={"PATH": ""}, cwd=None) != fake


def test_an_oversized_entry_is_ignored_without_being_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sparse multi-gigabyte file planted at an entry's name costs a stat, not a read (found by the fuzz job)."""
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUSPEC_CACHE_KEY", "k" * 32)
    monkeypatch.delenv("GPUSPEC_NO_CACHE", raising=False)
    path = usercache.entry_path("parsed", "x")
    assert path is not None
    usercache.store_bytes(path, b"plain")
    assert usercache.load_bytes(path) == b"plain"
    with path.open("r+b") as handle:
        handle.truncate(usercache.MAX_ENTRY_BYTES + 1)
    reads: list[int] = []
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: reads.append(1) or real_fdopen(*a, **k))
    assert usercache.load_bytes(path) is None and not reads


SPARSE_BYTES = 250 * 2**20


@pytest.mark.parametrize("kind", sorted(usercache.ENTRY_BYTES))
def test_an_entry_over_its_kinds_bound_is_a_miss_without_being_read(kind: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A 250 MB sparse file at an entry's name (under the overall limit) costs an fstat: no read, no hash."""
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUSPEC_CACHE_KEY", "k" * 32)
    monkeypatch.delenv("GPUSPEC_NO_CACHE", raising=False)
    path = usercache.entry_path(kind, "x")
    assert path is not None and usercache.entry_limit(kind) < SPARSE_BYTES
    usercache.store(path, {"plain": 1})
    assert usercache.load(path) == {"plain": 1}
    with path.open("r+b") as handle:
        handle.truncate(SPARSE_BYTES)
    reads: list[int] = []
    real_fdopen, real_mac = os.fdopen, usercache._mac
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: reads.append(1) or real_fdopen(*a, **k))
    monkeypatch.setattr(usercache, "_mac", lambda *a: reads.append(2) or real_mac(*a))
    assert usercache.load(path) is None and not reads


def test_an_entry_over_its_kinds_bound_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUSPEC_CACHE_KEY", "k" * 32)
    monkeypatch.delenv("GPUSPEC_NO_CACHE", raising=False)
    path = usercache.entry_path("credentials", "x")
    assert path is not None
    usercache.store_bytes(path, b"x" * (usercache.entry_limit("credentials") + 1))
    assert not path.exists()
    usercache.store_bytes(path, b"x" * 1000)
    assert usercache.load_bytes(path) == b"x" * 1000


def test_lint_with_every_entry_a_sparse_file_is_as_fast_and_the_same(tmp_path: Path) -> None:
    import time

    root = make_repo(tmp_path)
    env = _env(tmp_path)
    first = _run(["lint"], root, env)
    entries = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.parent.name in usercache.ENTRY_BYTES]
    assert len(entries) >= 8
    for entry in entries:
        with entry.open("r+b") as handle:
            handle.truncate(SPARSE_BYTES)
    began = time.monotonic()
    again = _run(["lint"], root, env)
    assert time.monotonic() - began < 8  # each planted entry read and hashed took about 1 s
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
