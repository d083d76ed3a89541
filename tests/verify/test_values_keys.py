"""Unknown values keys against the real GPU Operator values.yaml and the mini chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuspec.verify.manifests import load_yaml
from gpuspec.verify.values_keys import ChartValues, commented_keys, dependency_names, unknown_values_keys

PINNED: dict[str, Any] = {
    "operator": {"repository": "registry.example.com/nvidia", "image": "gpu-operator", "version": "v25.10.1",
                 "tolerations": [], "annotations": {"a": "b"}, "resources": {"limits": {"cpu": "1"}}},
    "validator": {"repository": "registry.example.com/nvidia", "version": "v25.10.1"},
    "driver": {
        "enabled": True, "version": "570.124.06", "env": [{"name": "X", "value": "1"}],
        "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 1, "maxUnavailable": "25%",
                          "drain": {"enable": True, "timeoutSeconds": 300}},
        "nvidiaDriverCRD": {"enabled": True, "nodeSelector": {"gpuspec.io/pool": "h100"}},
        "repoConfig": {"configMapName": "repo-config"},
    },
    "devicePlugin": {"config": {"name": "time-slicing-config", "default": "any", "data": {"any": "..."}}},
    "migManager": {"config": {"name": "custom-mig-config", "default": "all-disabled"}},
    "mig": {"strategy": "mixed"},
    "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": True}},
    "daemonsets": {"labels": {"team": "gpu"}, "tolerations": [{"key": "x", "operator": "Exists"}]},
    "cdi": {"enabled": True},
    "nfd": {"enabled": True},
    "psa": {"enabled": True},
    "global": {"anything": True},
}


@pytest.fixture(scope="module")
def real_values(upstream_dir: Path) -> ChartValues:
    chart_dir = upstream_dir / "gpu-operator" / "v25.10.1"
    chart_yaml = load_yaml((chart_dir / "Chart.yaml").read_text())
    return ChartValues.from_file(chart_dir / "values.yaml", subcharts=dependency_names(chart_yaml))


def test_pinned_values_are_all_known(real_values: ChartValues) -> None:
    assert unknown_values_keys(PINNED, real_values) == []


def test_unknown_keys_detected(real_values: ChartValues) -> None:
    values = {
        **PINNED,
        "driver": {**PINNED["driver"], "upgradePolicy": {"maxParalelUpgrades": 2, "drain": {"enabel": True}}},
        "devicePlugin": {"config": {"nmae": "x"}},
        "operator": {"defaultRuntime": "containerd"},  # removed from the chart after v24.9
        "migManger": {"enabled": True},
    }
    found = unknown_values_keys(values, real_values)
    assert [(u.dotted, u.suggestion) for u in found] == [
        ("operator.defaultRuntime", None),
        ("driver.upgradePolicy.maxParalelUpgrades", "maxParallelUpgrades"),
        ("driver.upgradePolicy.drain.enabel", "enable"),
        ("devicePlugin.config.nmae", "name"),
        ("migManger", "migManager"),
    ]
    assert str(found[1]) == "driver.upgradePolicy.maxParalelUpgrades (did you mean 'maxParallelUpgrades'?)"


def test_default_runtime_known_in_older_release(upstream_dir: Path) -> None:
    old = ChartValues.from_file(upstream_dir / "gpu-operator" / "v24.9.2" / "values.yaml")
    assert unknown_values_keys({"operator": {"defaultRuntime": "containerd"}}, old) == []


def test_open_maps_and_lists(real_values: ChartValues) -> None:
    values = {
        "daemonsets": {"annotations": {"x/y": "z"}},
        "driver": {"resources": {"limits": {"nvidia.com/anything": 1}}, "env": [{"free": "form"}]},
        "node-feature-discovery": {"worker": {"whatever": 1}},  # subchart: open
    }
    assert unknown_values_keys(values, real_values) == []


def test_subchart_closed_without_dependency_info(upstream_dir: Path) -> None:
    bare = ChartValues.from_file(upstream_dir / "gpu-operator" / "v25.10.1" / "values.yaml")
    found = unknown_values_keys({"node-feature-discovery": {"worker": {"whatever": 1}}}, bare)
    assert [u.dotted for u in found] == ["node-feature-discovery.worker.whatever"]


def test_extra_known_patterns(real_values: ChartValues) -> None:
    values = {"driver": {"futureKey": 1}, "toolkit": {"futureKey": 1}}
    assert [u.dotted for u in unknown_values_keys(values, real_values, extra_known=["driver.*"])] == [
        "toolkit.futureKey"
    ]


def test_commented_keys_parsing() -> None:
    text = """
operator:
  repository: nvcr.io/nvidia
  # If version is not specified, the chart's appVersion is used
  #version: ""
  tolerations:
  - key: a
    # effect: NoSchedule
    operator: Exists
  # NOTE: this sentence is prose, not a key
driver:
  # config:
  #   name: nested-example
  # useOpenKernelModules: false
"""
    assert commented_keys(text) == {("operator", "version"), ("driver", "config"),
                                    ("driver", "useOpenKernelModules")}


def test_mini_chart_values(mini_chart: Path) -> None:
    chart_values = ChartValues.from_chart(mini_chart)
    assert ("operator", "version") in chart_values.commented
    found = unknown_values_keys({"operator": {"version": "v1", "runtimeClas": "x"}}, chart_values)
    assert [(u.dotted, u.suggestion) for u in found] == [("operator.runtimeClas", "runtimeClass")]


def test_known_patterns_match_as_fnmatch_does() -> None:
    import fnmatch
    import random

    from gpuspec.verify.values_keys import _matcher

    patterns = ("*.env", "driver.*", "a?b", "[ab]*.x", "x[!y]z", "lit.key")
    rng = random.Random(3)
    for _ in range(5000):
        name = "".join(rng.choice("abxyz.*?[]!env") for _ in range(rng.randint(0, 8)))
        for count in range(len(patterns) + 1):
            chosen = patterns[:count]
            expected = any(fnmatch.fnmatchcase(name, p) for p in chosen)
            assert (_matcher(chosen)(name) is not None) == expected, (name, chosen)
