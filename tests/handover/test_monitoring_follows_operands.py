"""The acceptance checklist counts DCGM exporter targets only where Prometheus is told to scrape them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuspec.handover.facts import cluster_facts
from gpuspec.render.context import cluster_context
from tests.render.fleets import cluster, compile_dir, load, write_fleet


def _checks(tmp_path: Path, exporter: dict[str, bool]) -> list[str]:
    fleet_dir = write_fleet(tmp_path, [cluster("c", operator={"version": "v26.7.0",
                                                              "operands": {"dcgmExporter": exporter}})])
    fleet = load(fleet_dir)
    facts: dict[str, Any] = cluster_facts(cluster_context(fleet, fleet.clusters[0]), compile_dir(fleet_dir).clusters[0],
                                          {})
    return [c["check"] for c in facts["acceptance"]["checks"]]


@pytest.mark.parametrize(("exporter", "counted"), [({}, True), ({"serviceMonitor": False}, False),
                                                   ({"enabled": False}, False)])
def test_dcgm_targets_are_counted_only_when_scraped(tmp_path: Path, exporter: dict[str, bool], counted: bool) -> None:
    assert any("DCGM exporter target" in c for c in _checks(tmp_path, exporter)) is counted
