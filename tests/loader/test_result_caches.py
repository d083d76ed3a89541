"""Parsed files, credential scans and support-matrix evaluations remembered between runs give exactly
what a fresh run gives, and follow every edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.findings import Finding
from gpuspec.loader.fleetload import load_fleet
from gpuspec.loader.positions import locate_findings
from gpuspec.pipeline.validate import validate_fleet


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(folder))
    return folder


def _findings(fleet: Path) -> list[Finding]:
    return locate_findings(validate_fleet(fleet, fleet.parent / "policies").findings)


def test_second_load_reads_the_cache_and_gives_the_same_data(fleet_copy: Path, cache: Path) -> None:
    fleet = fleet_copy
    first = load_fleet(fleet)
    assert list((cache / "parsed").iterdir())
    second = load_fleet(fleet)
    assert first.raw == second.raw and first.fleet == second.fleet
    assert second.fleet is not None and set(second.fleet.content_keys) == set(second.raw)


def test_yaml_scalars_keep_their_rules_through_the_cache(fleet_copy: Path, cache: Path) -> None:
    fleet = fleet_copy
    path = next((fleet / "clusters").glob("*.yaml"))
    path.write_text(path.read_text() + "x-note: {a: 1.30, b: on, c: 0o17, d: '7', e: null, f: 2026-01-01}\n")
    load_fleet(fleet)
    raw = load_fleet(fleet).raw
    note = next(data["x-note"] for data in raw.values() if "x-note" in data)
    assert note == {"a": "1.30", "b": "on", "c": 15, "d": "7", "e": None, "f": "2026-01-01"}


def test_an_edited_file_is_parsed_again(fleet_copy: Path, cache: Path) -> None:
    fleet = fleet_copy
    path = next((fleet / "clusters").glob("*.yaml"))
    before = _findings(fleet)
    path.write_text(path.read_text().replace("kubernetes:\n", "kubernetes:\n  unknownKey: 1\n", 1))
    after = _findings(fleet)
    assert after != before
    added = [f for f in after if f not in before]
    assert added and all(f.file is not None and f.file.endswith(path.name) and f.line for f in added)


def test_an_unparsable_file_is_never_remembered(fleet_copy: Path, cache: Path) -> None:
    fleet = fleet_copy
    path = next((fleet / "clusters").glob("*.yaml"))
    path.write_text("pools: [\n")
    for _ in range(2):
        result = load_fleet(fleet)
        assert result.fleet is None and any(f.line for f in result.findings)


def test_remembered_findings_equal_fresh_findings(fleet_copy: Path, cache: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = fleet_copy
    settings = fleet / "fleet.yaml"
    # a credential and an unknown GPU, so both remembered scans have something to remember
    path = fleet / "clusters" / "infer-north.yaml"
    token = "ghp_" + "0123456789abcdefghijABCDEFGHIJ0123456789"
    text = path.read_text().replace("justification: Stateless", f"justification: token {token} Stateless", 1)
    path.write_text(text.replace("product: L40S", "product: L40X", 1))
    cold = _findings(fleet)
    warm = _findings(fleet)
    assert warm == cold
    assert {"GS405", "GS210"} <= {f.rule_id for f in cold}, sorted({f.rule_id for f in cold})
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    assert _findings(fleet) == cold
    monkeypatch.delenv("GPUSPEC_NO_CACHE")
    settings.write_text(settings.read_text() + "\n# a comment changes the content key of fleet.yaml\n")
    assert _findings(fleet) == cold
