"""The packaged chart values index matches the real values.yaml of each release, and answers path look-ups."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from gpuspec.matrix.chartvalues import chart_index, indexed_releases, same_type

from .conftest import UPSTREAM_TAGS

REPO = Path(__file__).resolve().parents[2]


def _refresh_script() -> ModuleType:
    path = REPO / "scripts" / "refresh-chart-values"
    loader = importlib.machinery.SourceFileLoader("refresh_chart_values", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_every_upstream_release_is_indexed() -> None:
    assert indexed_releases() == sorted(UPSTREAM_TAGS)


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_index_matches_the_real_values_yaml(tag: str, upstream_operator: Path) -> None:
    folder = upstream_operator / tag
    fresh = _refresh_script().index_of((folder / "values.yaml").read_text(), (folder / "Chart.yaml").read_text(), tag)
    packaged = yaml.safe_load((REPO / "gpuspec" / "matrix" / "data" / "chart-values" / f"{tag}.yaml").read_text())
    assert packaged == fresh, "run: .venv/bin/python scripts/refresh-chart-values"


def test_lookups_at_v26_7_0() -> None:
    index = chart_index("v26.7.0")
    assert index is not None
    assert index.lookup("daemonsets.priorityClassName").default == "system-node-critical"
    assert index.lookup("operator.resources.limits.memory").kind == "open"
    assert index.lookup("operator.resources.limits.memory").default == "350Mi"
    assert index.lookup("validator.plugin").kind == "map"
    assert index.lookup("operator.version").kind == "commented"
    assert index.lookup("node-feature-discovery.worker.anything").kind == "subchart"
    assert index.lookup("toolkit.env.0").kind == "in-list"
    assert index.lookup("daemonsets.updateStrategy.type").kind == "in-scalar"
    typo = index.lookup("daemonsets.priorityClasName")
    assert (typo.kind, typo.suggestion) == ("unknown", "daemonsets.priorityClassName")
    assert index.lookup("oprator.resources").suggestion == "operator.resources"
    assert chart_index("v25.10.0") is None  # not indexed: never guessed from a neighbour


def test_types() -> None:
    assert same_type("1", "2") and not same_type("1", 2)
    assert same_type(1.5, 2) and not same_type(1, True)
    assert same_type(None, {"any": "thing"})
    assert not same_type({}, [])
