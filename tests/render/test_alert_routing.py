"""Every rendered alert carries the labels Alertmanager routes on; pools another team owns get their own copies."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.render.alerts import HARDWARE_ALERTS, node_label_name

from .fleets import EXAMPLE_FLEET, cluster, example_settings, pool, render_dir, write_fleet


def _rules(out: dict[str, bytes], name: str) -> list[dict[str, Any]]:
    doc = yaml.safe_load(out[f"clusters/{name}/monitoring/alerts.yaml"])
    return [r for group in doc["spec"]["groups"] for r in group["rules"]]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("example")
    shutil.copytree(EXAMPLE_FLEET, root / "fleet")
    return render_dir(root / "fleet")


def test_every_alert_has_cluster_team_and_severity(example: dict[str, bytes]) -> None:
    for name in ("train-east", "infer-north"):
        for rule in _rules(example, name):
            labels = rule["labels"]
            assert labels["cluster"] == name
            assert labels["severity"] in {"warning", "critical"}
            assert labels["team"], rule["alert"]


def test_hardware_alerts_go_to_the_hardware_team_the_rest_to_the_platform_team(example: dict[str, bytes]) -> None:
    for rule in _rules(example, "train-east"):
        expected = "gpu-hardware" if rule["alert"] in HARDWARE_ALERTS else "gpu-platform"
        assert rule["labels"]["team"] == expected, rule["alert"]
        assert "pool" not in rule["labels"]


def test_a_pool_with_its_own_hardware_team_gets_its_own_copies(example: dict[str, bytes]) -> None:
    rules = _rules(example, "infer-north")
    selector = f'{node_label_name("acme.example/gpu-pool")}="t4-batch"'
    for alert in sorted(HARDWARE_ALERTS):
        copies = {r["labels"].get("pool", ""): r for r in rules if r["alert"] == alert}
        assert set(copies) == {"", "t4-batch"}, alert
        assert copies[""]["labels"]["team"] == "dc-north-ops"  # the cluster's hardware team
        assert copies["t4-batch"]["labels"]["team"] == "gpu-hardware"
        assert "unless on (Hostname)" in copies[""]["expr"] and selector in copies[""]["expr"]
        assert "and on (Hostname)" in copies["t4-batch"]["expr"] and selector in copies["t4-batch"]["expr"]
    for rule in rules:
        if rule["alert"] not in HARDWARE_ALERTS:
            assert rule["labels"]["team"] == "gpu-platform" and "pool" not in rule["labels"]


def test_kube_state_metrics_label_names() -> None:
    assert node_label_name("acme.example/gpu-pool") == "label_acme_example_gpu_pool"
    assert node_label_name("nvidia.com/gpu.product") == "label_nvidia_com_gpu_product"


def test_unowned_alerts_carry_no_team(tmp_path: Path) -> None:
    settings = example_settings()
    settings.pop("ownership")
    out = render_dir(write_fleet(tmp_path, [cluster("solo", pools=[pool("gpu")])], settings=settings))
    for rule in _rules(out, "solo"):
        assert rule["labels"]["cluster"] == "solo" and "team" not in rule["labels"]


def test_rendered_expressions_parse_as_promql(example: dict[str, bytes]) -> None:
    """Every rendered alert expression parses with a real PromQL parser (a test dependency), and the check can
    fail: a broken expression does not."""
    import promql_parser

    rules = [rule for name in ("train-east", "infer-north") for rule in _rules(example, name)]
    assert rules
    for rule in rules:
        promql_parser.parse(rule["expr"])
    with pytest.raises(Exception):  # noqa: B017 (the parser raises its own error type)
        promql_parser.parse(rules[0]["expr"] + " and (")
