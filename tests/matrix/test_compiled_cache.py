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


def test_packaged_chart_data_is_parsed_once_and_read_back_equal(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import resources

    import yaml

    from gpuspec.matrix import packaged

    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path))
    parts = ("chart-intent", "v26.7.0.yaml")
    text = resources.files("gpuspec.matrix").joinpath("data", *parts).read_text(encoding="utf-8")
    parsed = yaml.safe_load(text)
    assert packaged.packaged_yaml(*parts) == parsed
    stored = list((tmp_path / "packaged-data").iterdir())
    assert len(stored) == 1
    parses: list[object] = []
    monkeypatch.setattr(packaged.yaml, "load", lambda *a, **k: parses.append(a))
    assert packaged.packaged_yaml(*parts) == parsed and parses == []  # from the cache
    stored[0].write_bytes(b"damaged")
    monkeypatch.undo()
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path))
    assert packaged.packaged_yaml(*parts) == parsed  # a damaged entry is a miss: parsed again
