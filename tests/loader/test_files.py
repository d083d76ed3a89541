"""How fleet files are listed and shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuspec.loader.files import cluster_files, display_path


@pytest.mark.parametrize("given", ["fleet/clusters/a.yaml", "fleet", ".", "..", "../x", "a/../b", "./a", "a//b",
                                   "..a/b", "/tmp/x", "{cwd}/y", "{cwd}"])
def test_a_path_is_shown_relative_to_the_working_folder_when_below_it(given: str) -> None:
    text = given.format(cwd=os.getcwd())
    for path in (text, Path(text)):
        rel = os.path.relpath(path)
        assert display_path(path) == (rel if not rel.startswith("..") else str(path))  # type: ignore[arg-type]


def test_cluster_files_are_the_yaml_files_of_clusters_sorted_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "clusters"
    folder.mkdir()
    for name in ("b.yaml", "a.yml", "C.yaml", ".hidden.yaml", "notes.txt", "a-1.yaml"):
        (folder / name).write_text("x: 1\n")
    (folder / "sub.yaml").mkdir()
    assert cluster_files(tmp_path) == sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml")
                                             and not p.name.startswith("."))
    assert [p.name for p in cluster_files(tmp_path)] == ["C.yaml", "a-1.yaml", "a.yml", "b.yaml", "sub.yaml"]
    assert cluster_files(tmp_path / "missing") == []
