"""The validated support matrix is compiled once into the user cache and read back equal; a damaged
compiled file is rebuilt from the packaged data."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.matrix import load
from gpuspec.matrix.data_models import Matrix


def _fresh() -> Matrix:
    load._load_matrix.cache_clear()
    return load.load_matrix()


def test_compiled_matrix_equals_the_validated_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path))
    validated = Matrix.model_validate(load.raw_matrix())
    first = _fresh()
    compiled = list((tmp_path / "matrix-data").iterdir())
    assert len(compiled) == 1
    second = _fresh()
    assert first == validated and second == validated
    compiled[0].write_bytes(b"not a pickle")
    assert _fresh() == validated
    assert compiled[0].read_bytes() != b"not a pickle"  # rebuilt
    load._load_matrix.cache_clear()
