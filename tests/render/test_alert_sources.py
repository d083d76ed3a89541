"""What is rendered follows what is on: an alert exists only where what it watches runs, each operand turned off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.render.alerts import ALERT_SOURCE, DCGM, DRIVER, DRIVER_UPGRADES

from .fleets import cluster, pool, render_dir, write_fleet

ALL = set(ALERT_SOURCE)
DCGM_ALERTS = {a for a, s in ALERT_SOURCE.items() if s == DCGM}
DRIVER_ALERTS = {a for a, s in ALERT_SOURCE.items() if s in (DRIVER, DRIVER_UPGRADES)}
UPGRADE_ALERTS = {a for a, s in ALERT_SOURCE.items() if s == DRIVER_UPGRADES}


def _render(tmp_path: Path, **extra: Any) -> dict[str, bytes]:
    return render_dir(write_fleet(tmp_path, [cluster("c", **extra)]))


def _alerts(out: dict[str, bytes]) -> set[str]:
    doc = yaml.safe_load(out["clusters/c/monitoring/alerts.yaml"])
    return {r["alert"] for group in doc["spec"]["groups"] for r in group["rules"]}


def _service_monitor(out: dict[str, bytes]) -> bool:
    values = yaml.safe_load(out["clusters/c/gpu-operator.values.yaml"])
    return bool(values["dcgmExporter"]["serviceMonitor"]["enabled"])


def test_everything_on_renders_every_alert(tmp_path: Path) -> None:
    out = _render(tmp_path)
    assert _alerts(out) == ALL
    assert _service_monitor(out)


@pytest.mark.parametrize("exporter", [{"enabled": False}, {"serviceMonitor": False},
                                      {"enabled": False, "serviceMonitor": False}])
def test_no_dcgm_alert_without_a_scraped_exporter(tmp_path: Path, exporter: dict[str, bool]) -> None:
    """absent(up{job="nvidia-dcgm-exporter"}) would fire forever and the DCGM_FI_* alerts never."""
    out = _render(tmp_path, operator={"version": "v26.7.0", "operands": {"dcgmExporter": exporter}})
    assert _alerts(out) == ALL - DCGM_ALERTS
    assert not _service_monitor(out)
    assert b"nvidia-dcgm-exporter" not in out["clusters/c/monitoring/alerts.yaml"]


def test_no_driver_alert_where_every_node_brings_its_driver(tmp_path: Path) -> None:
    out = _render(tmp_path, pools=[pool("gpu", driver={"source": "host"})])
    assert _alerts(out) == ALL - DRIVER_ALERTS


def test_no_upgrade_alert_without_the_upgrade_controller(tmp_path: Path) -> None:
    out = _render(tmp_path, rollout={"autoUpgrade": False})
    assert _alerts(out) == ALL - UPGRADE_ALERTS


def test_alerts_off_renders_no_monitoring(tmp_path: Path) -> None:
    out = _render(tmp_path, operator={"version": "v26.7.0", "operands": {"alerts": False}})
    assert not [p for p in out if "/monitoring/" in p]
    assert not [p for p in out if p.startswith("gitops/") and b"monitoring" in out[p]]
