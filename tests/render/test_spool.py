"""Rendered bytes in spools: written by one process, read by another, never held by the parent."""

from __future__ import annotations

import multiprocessing
import os
import pickle
from pathlib import Path

import pytest

from gpuspec.render.spool import Layered, OutputFiles, Spool, location, size_of, where

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")


def test_a_forked_child_appends_and_the_parent_reads(tmp_path: Path) -> None:
    chunks = [b"first\n", b"", b"x" * 300_000, "ünïcode\n".encode()]
    with multiprocessing.get_context("fork").Pool(1) as pool:
        places = pool.starmap(_spool_in_child, [(0, chunks)])[0]
    assert [_SPOOLS[0].read(offset, length) for offset, length in places] == chunks
    assert list(tmp_path.iterdir()) == []  # the spool has no name on disk


_SPOOLS: list[Spool] = []


def _spool_in_child(number: int, chunks: list[bytes]) -> list[tuple[int, int]]:
    return [_SPOOLS[number].append(chunk) for chunk in chunks]


@pytest.fixture(autouse=True)
def _fresh_spools(tmp_path: Path):  # type: ignore[no-untyped-def]
    _SPOOLS[:] = [Spool(tmp_path)]
    yield
    for spool in _SPOOLS:
        spool.close()
    _SPOOLS.clear()


def test_appends_follow_one_another_and_survive_a_short_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spool = Spool(tmp_path)
    first, second = spool.append(b"abc"), spool.append(b"defgh")
    assert first == (0, 3) and second == (3, 5)
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: real(fd, min(n, 2), at))
    assert spool.read(*second) == b"defgh"
    with pytest.raises(OSError, match="early"):
        spool.read(6, 10)


def test_a_folder_that_cannot_hold_a_spool_falls_back(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "missing")
    assert spool.read(*spool.append(b"kept")) == b"kept"


def test_output_files_hold_or_locate_and_travel_without_spools(tmp_path: Path) -> None:
    spool = _SPOOLS[0]
    files = OutputFiles()
    files["held.yaml"] = b"held\n"
    files["spooled.yaml"] = b"placeholder"
    files.locate("spooled.yaml", 0, *spool.append(b"spooled\n"))
    files.attach(_SPOOLS)
    assert dict(files) == {"held.yaml": b"held\n", "spooled.yaml": b"spooled\n"}
    assert files.size("spooled.yaml") == 8 and files.held_size() == 5
    assert "spooled.yaml" in files and "other" not in files and len(files) == 2
    travelled = pickle.loads(pickle.dumps(files))
    assert travelled.size("spooled.yaml") == 8
    with pytest.raises(IndexError):
        travelled["spooled.yaml"]  # no spools attached yet
    merged = OutputFiles()
    merged.attach(_SPOOLS)
    merged.update_from(travelled)
    assert merged == files
    del merged["spooled.yaml"]
    del merged["held.yaml"]
    assert len(merged) == 0
    with pytest.raises(KeyError):
        del merged["held.yaml"]


def test_layered_adds_files_without_reading_the_base() -> None:
    class Counting(dict[str, bytes]):
        reads = 0

        def __getitem__(self, key: str) -> bytes:
            Counting.reads += 1
            return super().__getitem__(key)

    base = Counting({"a": b"1", "b": b"22"})
    view = Layered({"b": b"333", "c": b"4444"}, base)
    assert sorted(view) == ["a", "b", "c"] and len(view) == 3 and "c" in view and "d" not in view
    assert Counting.reads == 0
    assert size_of(view, "b") == 3 and size_of(view, "a") == 1
    assert view["b"] == b"333" and view["a"] == b"1"


@pytest.mark.parametrize(("spool", "offset", "length"),
                         [(0, 0, 0), (3, 1 << 40, 5), (70, (1 << 44) - 1, (1 << 36) - 1)])
def test_a_location_packs_its_spool_offset_and_length(spool: int, offset: int, length: int) -> None:
    assert where(location(spool, offset, length)) == (spool, offset, length)


@pytest.mark.parametrize(("offset", "length"), [(1 << 44, 1), (0, 1 << 36), (-1, 1)])
def test_a_location_out_of_its_fields_is_refused(offset: int, length: int) -> None:
    with pytest.raises(ValueError):
        location(0, offset, length)


def test_absorbed_files_read_from_the_spools_they_were_written_to(tmp_path: Path) -> None:
    spools = [Spool(tmp_path) for _ in range(3)]
    mine, theirs = OutputFiles(), OutputFiles()
    mine.attach(spools[:1])
    theirs.attach(spools[1:])
    mine.locate("a.yaml", 0, *spools[0].append(b"a: 1\n"))
    theirs.locate("b.yaml", 1, *spools[2].append(b"b: 22\n"))
    theirs["c.yaml"] = b"c: 3\n"
    mine.absorb(theirs)
    assert {p: mine[p] for p in mine} == {"a.yaml": b"a: 1\n", "b.yaml": b"b: 22\n", "c.yaml": b"c: 3\n"}
    assert mine.size("b.yaml") == 6
