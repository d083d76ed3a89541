"""GS2xx/GS3xx support-matrix checks: each has a failing and a passing fixture; the example fleet stays clean."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.findings import Finding, Severity
from gpuspec.loader.fleetload import load_fleet
from gpuspec.loader.positions import locate_findings
from gpuspec.rules import matrix as checks
from gpuspec.rules.base import RuleContext
from gpuspec.rules.matrix import MATRIX_RULES, matrix_findings

REPO_ROOT = Path(__file__).resolve().parents[2]

Cluster = dict[str, Any]
Edit = Callable[[Cluster, dict[str, Any]], None]


def _base_cluster() -> Cluster:
    return {
        "apiVersion": "gpuspec.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "c1"},
        "kubernetes": {"version": "1.34", "distribution": "upstream", "runtime": "containerd"},
        "operator": {"version": "v26.7.0"},
        "gitops": {"tool": "argocd"},
        "pools": [
            {
                "name": "p1",
                "nodeSelector": {"pool": "p1"},
                "nodes": 2,
                "gpu": {"product": "H100-SXM5-80GB", "count": 8},
                "os": {"distribution": "ubuntu", "version": "22.04", "kernel": "5.15.0-143-generic"},
                "driver": {"source": "operator", "branch": "580", "version": "580.173.02"},
            }
        ],
    }


def _base_fleet() -> dict[str, Any]:
    return {
        "apiVersion": "gpuspec.io/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": "f"},
        "git": {"repoURL": "https://git.example/fleet.git"},
        "channels": [{"name": "stable", "operator": "v26.7.0", "driver": {"branch": "580", "version": "580.173.02"}}],
        "policy": {"packs": ["default"]},
    }


def _findings(tmp_path: Path, edit: Edit | None = None, as_of: dt.date | None = None) -> list[Finding]:
    cluster, fleet = _base_cluster(), _base_fleet()
    if edit is not None:
        edit(cluster, fleet)
    root = tmp_path / "fleet"
    (root / "clusters").mkdir(parents=True)
    (root / "fleet.yaml").write_text(yaml.safe_dump(fleet, sort_keys=False))
    (root / "clusters" / "c1.yaml").write_text(yaml.safe_dump(cluster, sort_keys=False))
    loaded = load_fleet(root)
    assert loaded.fleet is not None, [f.message for f in loaded.findings]
    return matrix_findings(loaded.fleet, as_of)


def _ids(findings: list[Finding]) -> list[str]:
    return sorted(f.rule_id for f in findings)


def _pool(c: Cluster) -> dict[str, Any]:
    pool: dict[str, Any] = c["pools"][0]
    return pool


def test_base_fixture_is_clean(tmp_path: Path) -> None:
    assert _findings(tmp_path) == []


def test_example_fleet_is_clean() -> None:
    loaded = load_fleet(REPO_ROOT / "fleet")
    assert loaded.fleet is not None
    assert matrix_findings(loaded.fleet) == []


def test_rule_catalogue() -> None:
    ids = [r.entry.id for r in MATRIX_RULES]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for rule in MATRIX_RULES:
        entry = rule.entry
        assert entry.id.startswith(("GS2", "GS3")) and entry.title and entry.rationale and entry.doc
    assert {r.entry.id: r.entry.severity for r in MATRIX_RULES}["GS200"] is Severity.WARNING


def _set(path: tuple[Any, ...], value: Any) -> Edit:
    def edit(c: Cluster, _f: dict[str, Any]) -> None:
        node: Any = c
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _mig(product: str | None, mig: dict[str, Any]) -> Edit:
    edits = [_set(("pools", 0, "mig"), mig)]
    if product is not None:
        edits.append(_set(("pools", 0, "gpu", "product"), product))
    return _chain(*edits)


TIME_SLICING = {"mode": "time-slicing", "replicas": 2, "justification": "x"}


def _chain(*edits: Edit) -> Edit:
    def edit(c: Cluster, f: dict[str, Any]) -> None:
        for e in edits:
            e(c, f)

    return edit


def test_gs201_hint_names_nearest_release(tmp_path: Path) -> None:
    (f,) = [f for f in _findings(tmp_path, _set(("operator", "version"), "v25.10.2")) if f.rule_id == "GS201"]
    assert f.hint == "nearest known release: v25.10.1" and f.path == ("operator", "version")


def test_gs201_for_a_channel_is_reported_in_fleet_yaml(tmp_path: Path) -> None:
    def edit(c: Cluster, f: dict[str, Any]) -> None:
        f["channels"][0]["operator"] = "v26.8.0"
        c["operator"] = {"channel": "stable"}

    found = _findings(tmp_path, edit)
    assert [(x.rule_id, x.path) for x in found] == [("GS201", ("channels", 0, "operator"))]
    assert found[0].file is not None and found[0].file.endswith("fleet.yaml")


def test_channel_driver_branch_reported_in_fleet_yaml(tmp_path: Path) -> None:
    def edit(c: Cluster, f: dict[str, Any]) -> None:
        f["channels"][0]["driver"] = {"branch": "570"}
        c["operator"] = {"channel": "stable"}
        del c["pools"][0]["driver"]

    found = [x for x in _findings(tmp_path, edit) if x.rule_id == "GS207"]
    assert [x.path for x in found] == [("channels", 0, "driver", "branch")]


def test_lifecycle_is_judged_at_the_given_date(tmp_path: Path) -> None:
    edit = _set(("operator", "version"), "v26.3.3")
    assert "GS203" not in _ids(_findings(tmp_path / "a", edit, dt.date(2026, 5, 1)))
    assert "GS202" in _ids(_findings(tmp_path / "b", _set(("operator", "version"), "v25.10.1"), dt.date(2026, 8, 21)))
    later = _findings(tmp_path / "c", None, dt.date(2027, 1, 1))
    assert _ids(later) == ["GS200"] and "2026-08-21" in later[0].message


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (_set(("kubernetes", "distribution"), "aks"), "no aks column"),
        (_set(("kubernetes", "distribution"), "nkp"), "NKP"),
        (_set(("kubernetes", "distribution"), "openshift"), "openshiftVersion"),
        (_chain(_set(("pools", 0, "driver"), {"source": "precompiled", "branch": "580"}),
                lambda c, f: c["pools"][0]["os"].pop("kernel")), "os.kernel"),
        (_chain(_set(("operator", "version"), "v24.6.2"), _set(("kubernetes", "version"), "1.30"),
                _set(("pools", 0, "driver"), {"source": "precompiled", "branch": "550"})), "precompiled"),
        (_chain(_set(("pools", 0, "os"), {"distribution": "rocky", "version": "9.7"}),
                _set(("kubernetes", "runtime"), "containerd")), "runtime containerd on rocky 9.7"),
        (_chain(_set(("pools", 0, "os"), {"distribution": "ubuntu", "version": "26.04"}),
                _set(("kubernetes", "runtime"), "cri-o")), "runtime cri-o on ubuntu 26.04"),
        (_chain(_set(("pools", 0, "os"), {"distribution": "rhel", "version": "10.0"}),
                _set(("kubernetes", "runtime"), "cri-o")), "runtime cri-o on rhel 10.0"),
    ],
)  # fmt: skip
def test_cannot_verify_platform_is_a_warning(tmp_path: Path, edit: Edit, needle: str | None) -> None:
    found = _findings(tmp_path, edit)
    if needle is None:  # rocky has no row in the runtime table: no finding, the cluster-wide answer is yes
        assert found == []
        return
    cv = [f for f in found if f.rule_id == "GS200"]
    assert cv and all(f.severity is Severity.WARNING for f in cv)
    assert any(needle in f.message or needle in (f.hint or "") for f in cv), [f.message for f in cv]


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (_mig("A100X", {"strategy": "single", "layout": "all-1g.10gb"}), "does not say whether A100X supports MIG"),
        (_mig("H20", {"strategy": "mixed", "custom": [{"profiles": {"1g.12gb": 7}}]}), "profiles of H20 are unknown"),
    ],
)  # fmt: skip
def test_cannot_verify_mig_is_a_warning(tmp_path: Path, edit: Edit, needle: str) -> None:
    found = _findings(tmp_path, edit)
    cv = [f for f in found if f.rule_id == "GS300"]
    assert cv and all(f.severity is Severity.WARNING for f in cv)
    assert any(needle in f.message for f in cv), [f.message for f in found]


def test_mps_with_mig_is_an_error_from_the_device_plugin_readme(tmp_path: Path) -> None:
    edit = _chain(_set(("pools", 0, "mig"), {"strategy": "single", "layout": "all-1g.10gb"}),
                  _set(("pools", 0, "sharing"), {"mode": "mps", "replicas": 2, "justification": "x"}))
    (found,) = [f for f in _findings(tmp_path, edit) if f.rule_id == "GS306"]
    assert found.severity is Severity.ERROR and "k8s-device-plugin README" in found.message


def test_time_slicing_with_mig_is_fine(tmp_path: Path) -> None:
    edit = _chain(
        _mig(None, {"strategy": "single", "layout": "all-1g.10gb"}), _set(("pools", 0, "sharing"), TIME_SLICING)
    )
    assert _findings(tmp_path, edit) == []


def test_gs301_and_gs306_fire_when_the_data_says_no(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.matrix import mig_query, query

    real = query.gpu_product("H100-SXM5-80GB")
    assert real is not None
    fake = lambda pid: real.model_copy(update={"mig_capable": False})  # noqa: E731
    monkeypatch.setattr(query, "gpu_product", fake)
    monkeypatch.setattr(mig_query, "gpu_product", fake)
    found = _findings(tmp_path / "a", _set(("pools", 0, "mig"), {"strategy": "single", "layout": "all-1g.10gb"}))
    assert "GS301" in _ids(found)
    monkeypatch.undo()
    monkeypatch.setattr(mig_query, "sharing_with_mig_supported", lambda kind: False)
    edit = _chain(
        _mig(None, {"strategy": "single", "layout": "all-1g.10gb"}), _set(("pools", 0, "sharing"), TIME_SLICING)
    )
    assert "GS306" in _ids(_findings(tmp_path / "b", edit))


def test_findings_locate_to_lines(tmp_path: Path) -> None:
    found = locate_findings(_findings(tmp_path, _set(("kubernetes", "version"), "1.31")))
    (f,) = [x for x in found if x.rule_id == "GS204"]
    assert f.line is not None and f.line > 1 and f.spec_path


def test_evaluation_is_shared_within_a_run_and_not_between_runs(tmp_path: Path) -> None:
    loaded = load_fleet(REPO_ROOT / "fleet")
    assert loaded.fleet is not None
    run = RuleContext(fleet=loaded.fleet)
    first = checks._evaluation(run)
    assert checks._evaluation(replace(run, params={"x": 1})) is first  # same run: computed once
    assert checks._evaluation(replace(run, as_of=dt.date(2026, 1, 1))) is not first  # another date
    assert checks._evaluation(RuleContext(fleet=loaded.fleet)) is not first  # another run: no global state
