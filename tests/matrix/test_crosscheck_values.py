"""Cross-check: the pinned images of the matrix agree with the real values.yaml / Chart.yaml of eight releases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.matrix import component_query
from gpuspec.matrix import query as q
from gpuspec.render.deviations import get_path

from .conftest import UPSTREAM_TAGS


def _values(upstream: Path, tag: str) -> dict[str, Any]:
    data = yaml.safe_load((upstream / tag / "values.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _image_sections(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every mapping in values.yaml (two levels deep) that names an image, keyed by values path."""
    out: dict[str, dict[str, Any]] = {}
    for key, node in values.items():
        if not isinstance(node, dict) or key == "node-feature-discovery":
            continue
        if "image" in node and "repository" in node:
            out[key] = node
        for sub, child in node.items():
            if isinstance(child, dict) and "image" in child and "repository" in child:
                out[f"{key}.{sub}"] = child
    return out


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_component_images_agree_with_values_yaml(upstream_operator: Path, tag: str) -> None:
    values = _values(upstream_operator, tag)
    images = component_query.component_images(tag)
    assert images is not None, tag
    sections = _image_sections(values)
    # every image values.yaml defines is in the matrix ...
    assert set(sections) <= set(images), set(sections) - set(images)
    for path, img in images.items():
        node = sections.get(path)
        if img.image is None:
            # ... and a component recorded without image fields really has none at that tag
            assert node is None, path
            section = get_path(values, path)
            assert isinstance(section, dict), path
            assert section.get("enabled") == img.enabled_default, path
            continue
        assert node is not None, f"{tag}: {path} not in values.yaml"
        assert img.repository == _str(node["repository"]), (tag, path)
        assert img.image == _str(node["image"]), (tag, path)
        assert img.version == _str(node.get("version")), (tag, path)
        if img.enabled_default is not None:
            assert node.get("enabled") == img.enabled_default, (tag, path)


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_driver_default_and_chart_defaults_agree(upstream_operator: Path, tag: str) -> None:
    values = _values(upstream_operator, tag)
    rel = q.release(tag)
    assert rel is not None
    assert rel.drivers.chart_default == str(values["driver"]["version"])
    assert q.default_driver(tag) == str(values["driver"]["version"])
    for key, expected in rel.chart_defaults.items():
        actual = get_path(values, key)
        if isinstance(expected, str) and not isinstance(actual, str) and actual is not None:
            actual = str(actual)
        if key.endswith(".env") and isinstance(actual, list):  # the matrix writes env entries as NAME=value
            actual = [f"{e['name']}={e.get('value', '')}" for e in actual]
        assert actual == expected, (tag, key)


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_upgrade_policy_defaults_agree(upstream_operator: Path, tag: str) -> None:
    from gpuspec.matrix.load import load_matrix

    policy = _values(upstream_operator, tag)["driver"]["upgradePolicy"]
    assert policy == load_matrix().upgrades.policy_defaults


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_nfd_subchart_agrees_with_chart_yaml(upstream_operator: Path, tag: str) -> None:
    chart = yaml.safe_load((upstream_operator / tag / "Chart.yaml").read_text(encoding="utf-8"))
    rel = q.release(tag)
    assert rel is not None
    (dep,) = [d for d in chart["dependencies"] if d["name"] == "node-feature-discovery"]
    assert rel.nfd.chart_version == str(dep["version"])
    assert rel.nfd.chart_repository == dep["repository"]
    assert rel.nfd.condition == dep["condition"]
    assert rel.chart.kube_version == chart["kubeVersion"]
    assert rel.chart.chart_yaml_app_version == str(chart["appVersion"])
