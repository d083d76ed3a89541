"""`gpuspec upgrade --from REV` reads the spec of REV as `plan --base` does: a file that is not UTF-8, or one over the
fleet-file limit, at that revision is an exit-2 message naming ``REV:path``, never an internal error, and an
oversized blob is never read (its size comes from ``git ls-tree``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from unittest import mock

import pytest

from gpuspec.history import revision as fleetrev
from gpuspec.loader.yamlread import MAX_FILE_BYTES
from gpuspec.pipeline.upgrade.apply import texts_at
from tests.audit.audit_cli import REPO
from tests.upgrade.test_upgrade import Repo

UPGRADE = ("upgrade", "--cluster", "infer-north", "--operator", "v26.7.0")


def _repo_with_base(tmp_path: Path, bad: bytes) -> tuple[Repo, str]:
    """A repository whose first commit holds ``bad`` as a cluster file and whose second fixes it: (repo, base)."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "fleet", root / "fleet")
    shutil.copytree(REPO / "policies", root / "policies")
    repo = Repo(root)
    repo.git("init", "-q", "-b", "main")
    broken = repo.cluster("extra")
    broken.write_bytes(bad)
    base = repo.commit("base with a bad file")
    broken.unlink()
    repo.commit("fixed")
    return repo, base


def test_a_non_utf8_file_at_the_base_is_a_clean_error(tmp_path: Path) -> None:
    repo, base = _repo_with_base(tmp_path, b"# caf\xe9\nkind: Cluster\n")
    result = repo.run(*UPGRADE, "--from", base)
    assert result.code == 2, result.out + result.err
    assert f"{base}:fleet/clusters/extra.yaml:1:6" in result.err and "not valid UTF-8" in result.err, result.err
    assert "internal error" not in result.err and "Traceback" not in result.err


def test_an_oversized_file_at_the_base_is_never_read(tmp_path: Path) -> None:
    repo, base = _repo_with_base(tmp_path, b"# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    result = repo.run(*UPGRADE, "--from", base)
    assert result.code == 2, result.out + result.err
    assert f"{base}:fleet/clusters/extra.yaml" in result.err and "larger than" in result.err, result.err
    assert "internal error" not in result.err

    big = repo.git("rev-parse", f"{base}:fleet/clusters/extra.yaml")
    requested: list[str] = []
    real = fleetrev.read_blobs

    def recording(root: Path, object_ids: list[str]) -> dict[str, bytes]:
        requested.extend(object_ids)
        return real(root, object_ids)

    with mock.patch.object(fleetrev, "read_blobs", recording), pytest.raises(Exception, match="larger than"):
        texts_at(repo.root / "fleet", base)
    assert big not in requested


def test_a_clean_base_still_reads(tmp_path: Path) -> None:
    repo, base = _repo_with_base(tmp_path, (REPO / "fleet" / "clusters" / "infer-north.yaml").read_bytes()
                                 .replace(b"name: infer-north", b"name: extra"))
    texts = texts_at(repo.root / "fleet", base)
    assert "clusters/extra.yaml" in texts and "fleet.yaml" in texts
    assert texts["clusters/infer-north.yaml"] == (REPO / "fleet" / "clusters" / "infer-north.yaml").read_text()
