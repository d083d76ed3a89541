"""A fleet validated a chunk of clusters at a time reports exactly what one whole-fleet run reports, and each
chunk reads and stores whole shards of the per-cluster caches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gpuspec.cli.common import prepare_report
from gpuspec.cli.main import cli
from gpuspec.cli.resultcache import Report
from gpuspec.loader import fleetload
from gpuspec.pipeline import chunked
from gpuspec.pipeline.chunked import cluster_chunks, validate_in_chunks
from gpuspec.pipeline.validate import ValidationResult, validate_fleet
from gpuspec.usercache import shard_of
from tests.render.fleets import EXAMPLE_FLEET, EXAMPLE_POLICIES, cluster, pool

CLUSTERS = 40


def _prepared(result: ValidationResult) -> Report:
    return prepare_report(result.findings, raw=result.load.raw, successful=result.usable,
                          suppressed=[a.suppressed() for a in result.accepted])


def _parts(result: ValidationResult) -> tuple[list[Any], list[Any]]:
    report = _prepared(result)
    return list(report.findings), list(report.suppressed)


def _fleet(root: Path) -> tuple[Path, Path]:
    """40 clusters with errors of their own, problems of fleet.yaml that several clusters run into, a
    credential, an accepted finding and an expired exception."""
    fleet, policies = root / "fleet", root / "policies"
    (fleet / "clusters").mkdir(parents=True)
    settings = yaml.safe_load((EXAMPLE_FLEET / "fleet.yaml").read_text())
    settings["channels"].append({"name": "legacy", "operator": "v26.7.0", "driver": {"branch": "470"}})
    (fleet / "fleet.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    for i in range(CLUSTERS):
        name = f"c-{i:02d}"
        doc = cluster(name, pools=[pool("gpu", product="H100-SXM5-80GX" if i % 7 == 3 else "H100-SXM5-80GB",
                                        driver={"source": "operator"})])
        if i % 5 == 1:
            doc["operator"] = {"channel": "legacy"}
        if i == 11:
            doc["metadata"]["description"] = "mirror at https://admin:hunter2@git.acme.example/x.git"
        (fleet / "clusters" / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    policies.mkdir()
    (policies / "default.yaml").write_text(yaml.safe_dump({
        "apiVersion": "gpuspec.io/v1alpha1", "kind": "PolicyPack", "metadata": {"name": "default"},
        "rules": {}, "customRules": [],
        "exceptions": [
            {"rules": ["GS210"], "cluster": "c-10", "owner": "platform", "reason": "new SKU", "expires": "2099-01-01"},
            {"rules": ["GS210"], "cluster": "c-24", "owner": "platform", "reason": "old", "expires": "2020-01-01"},
        ]}, sort_keys=False))
    (policies / "strict.yaml").write_text((EXAMPLE_POLICIES / "default.yaml").read_text())
    return fleet, policies


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(folder))
    return folder


def test_chunks_are_whole_shards_of_about_the_size_asked(tmp_path: Path) -> None:
    paths = [tmp_path / f"c-{i:03d}.yaml" for i in range(300)]
    chunks = cluster_chunks(paths, 50)
    assert sorted(p for c in chunks for p in c) == paths
    assert all(len(c) >= 50 for c in chunks[:-1]) and len(chunks) >= 3
    shards = [{shard_of(p.name.removesuffix(".yaml")) for p in c} for c in chunks]
    assert all(not (a & b) for i, a in enumerate(shards) for b in shards[i + 1:])
    assert len(cluster_chunks(paths[:3], 50)) == 1


@pytest.mark.parametrize("size", [1, 4, 9])
def test_chunked_findings_are_the_whole_runs(tmp_path: Path, cache: Path, size: int) -> None:
    fleet, policies = _fleet(tmp_path)
    whole = _prepared(validate_fleet(fleet, policies))
    rules = {f.rule_id for f in whole.findings}
    # The fixture has what the merge must get right: cluster errors, fleet.yaml problems several clusters hit,
    # a credential, an expired exception (on the policy pack) and an accepted finding.
    assert {"GS210", "GS207", "GS405", "GS003"} <= rules and whole.suppressed, rules
    assert any(f.file is not None and f.file.endswith("fleet.yaml") for f in whole.findings)
    for _ in range(2):  # cold, then from the sharded caches
        merged = validate_in_chunks(fleet, policies, None, _parts, size)
        assert merged is not None
        assert merged.findings == whole.findings
        assert merged.suppressed == whole.suppressed
        assert merged.usable == whole.usable


def test_unusable_files_are_reported_as_in_one_run(tmp_path: Path, cache: Path) -> None:
    fleet, policies = _fleet(tmp_path)
    for name in ("c-05", "c-31", "c-18"):
        path = fleet / "clusters" / f"{name}.yaml"
        path.write_text(path.read_text().replace("kind: Cluster", "kind: Clusterr") + "extra: [\n")
    (fleet / "clusters" / "c-22.yaml").write_text("kind: Cluster\nkubernetes: 7\n")
    whole = _prepared(validate_fleet(fleet, policies))
    assert not whole.usable and len(whole.findings) >= 4
    merged = validate_in_chunks(fleet, policies, None, _parts, 4)
    assert merged is not None and not merged.usable
    assert merged.findings == whole.findings and merged.suppressed == []


def test_a_broken_fleet_yaml_or_small_fleet_is_left_to_one_run(tmp_path: Path, cache: Path) -> None:
    fleet, policies = _fleet(tmp_path)
    assert validate_in_chunks(fleet, policies, None, _parts, CLUSTERS) is None
    (fleet / "fleet.yaml").write_text("kind: Fleet\n")
    assert validate_in_chunks(fleet, policies, None, _parts, 4) is None


def test_each_chunk_reads_and_stores_whole_shards_once(tmp_path: Path, cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    fleet, policies = _fleet(tmp_path)
    validate_in_chunks(fleet, policies, None, _parts, 4)
    entries = {p.name: p.stat().st_mtime_ns for p in (cache / "parsed").rglob("*") if p.is_file()}
    shards = {shard_of(f"c-{i:02d}") for i in range(CLUSTERS)}
    assert len(entries) == len(shards) + 1  # a shard per cluster shard, one for fleet.yaml
    parsed: list[str] = []
    real = fleetload._parse

    def spy(item: tuple[str, str]) -> Any:
        parsed.append(item[0])
        return real(item)

    monkeypatch.setattr(fleetload, "_parse", spy)
    merged = validate_in_chunks(fleet, policies, None, _parts, 4)
    assert merged is not None and parsed == []  # every file from the cache: no chunk dropped another's entries
    after = {p.name: p.stat().st_mtime_ns for p in (cache / "parsed").rglob("*") if p.is_file()}
    assert after == entries  # nothing stored again when nothing changed


def test_validate_command_reports_a_chunked_fleet_like_a_whole_one(tmp_path: Path, cache: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fleet, policies = _fleet(tmp_path)
    args = ["validate", str(fleet), "--policies", str(policies), "--format", "json"]
    whole = CliRunner().invoke(cli, args)
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")  # no replayed report: the chunks run
    monkeypatch.setattr(chunked, "CHUNK_CLUSTERS", 4)
    calls: list[int] = []
    real = chunked.validate_fleet

    def counted(*args: Any, **kwargs: Any) -> ValidationResult:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(chunked, "validate_fleet", counted)
    chunks = CliRunner().invoke(cli, args)
    assert len(calls) > 3  # fleet.yaml alone, then several chunks
    assert chunks.exit_code == whole.exit_code == 1
    assert json.loads(chunks.output) == json.loads(whole.output)
