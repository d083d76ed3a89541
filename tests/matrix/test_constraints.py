"""Hard NVIDIA constraints (gpuspec/rules/constraints.py, data/domain.yaml): a failing and a passing case per id."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.catalogue import matrix as cat
from gpuspec.findings import Severity
from gpuspec.matrix import component_query
from gpuspec.matrix.load import load_matrix

from .test_checks import TIME_SLICING, Cluster, Edit, _chain, _findings, _ids, _mig, _pool, _set


def _devices(**needs: bool) -> Edit:
    def edit(c: Cluster, _f: dict[str, Any]) -> None:
        c.setdefault("operator", {}).setdefault("operands", {}).update(needs)
        _pool(c)["devices"] = dict(needs)

    return edit


def _second_pool(**fields: Any) -> Edit:
    def edit(c: Cluster, _f: dict[str, Any]) -> None:
        c["pools"].append({**_pool(c), "name": "p2", "nodeSelector": {"pool": "p2"}, **fields})

    return edit


def _tenants(*tenants: dict[str, Any]) -> Edit:
    def edit(c: Cluster, _f: dict[str, Any]) -> None:
        c["tenants"] = list(tenants)

    return edit


def _product(name: str) -> Edit:
    return _set(("pools", 0, "gpu", "product"), name)


def _kmt(kind: str) -> Edit:
    return _set(("pools", 0, "driver", "kernelModuleType"), kind)


def _groups(*devices: Any) -> dict[str, Any]:
    return {"strategy": "mixed", "custom": [{"devices": d, "profiles": {"3g.40gb": 2}} for d in devices]}


RHEL94 = {"distribution": "rhel", "version": "9.4"}
A100_MIXED = {"strategy": "mixed", "custom": [{"profiles": {"3g.40gb": 2}}]}
RKE2_25_3 = _chain(_set(("operator", "version"), "v25.3.2"), _set(("kubernetes", "version"), "1.32"),
                   _set(("kubernetes", "distribution"), "rke2"), _set(("pools", 0, "driver"), {"branch": "570"}))

CASES: list[tuple[str, Edit, Edit]] = [
    ("GS204",  # the K3s column has no cell on the RHEL 9 row
     _chain(_set(("kubernetes", "distribution"), "k3s"), _set(("pools", 0, "os"), RHEL94)),
     _chain(_set(("kubernetes", "distribution"), "rke2"), _set(("pools", 0, "os"), RHEL94))),
    ("GS215", _chain(_set(("pools", 0, "gpu", "product"), "GH200-96GB"),
                     _set(("pools", 0, "driver", "kernelModuleType"), "proprietary")),
     _chain(_product("GH200-96GB"), _kmt("open"))),
    ("GS215", _chain(_product("V100"), _kmt("open")),
     _chain(_set(("pools", 0, "gpu", "product"), "V100"),
            _set(("pools", 0, "driver", "kernelModuleType"), "proprietary"))),
    ("GS215", _chain(_devices(gds=True), _set(("pools", 0, "driver", "kernelModuleType"), "proprietary")),
     _devices(gds=True)),
    ("GS216", _chain(_set(("pools", 0, "gpu", "product"), "V100"), _set(("pools", 0, "driver"), {"branch": "595"})),
     _chain(_set(("pools", 0, "gpu", "product"), "V100"), _set(("pools", 0, "driver"), {"branch": "580"}))),
    ("GS217", _chain(_devices(gds=True), _set(("pools", 0, "os"), RHEL94)),
     _devices(gds=True)),
    ("GS217", _chain(_devices(gds=True), _set(("pools", 0, "driver"), {"source": "precompiled", "branch": "580"})),
     _chain(_devices(rdma=True), _set(("pools", 0, "driver"), {"source": "precompiled", "branch": "580"}))),
    ("GS218", _set(("pools", 0, "driver"), {"source": "precompiled", "branch": "580", "version": "580.173.02"}),
     _set(("pools", 0, "driver"), {"source": "precompiled", "branch": "580"})),
    ("GS219", _set(("pools", 0, "driver"), {"branch": "535", "version": "535.309.01", "kernelModuleType": "auto"}),
     _set(("pools", 0, "driver"), {"branch": "535", "version": "535.309.01", "kernelModuleType": "proprietary"})),
    ("GS220", RKE2_25_3, _set(("kubernetes", "distribution"), "rke2")),
    ("GS220", _chain(_set(("pools", 0, "gpu", "product"), "GH200-96GB"),
                     _set(("pools", 0, "driver", "kernelModuleType"), "open"),
                     _set(("pools", 0, "mig"), {"strategy": "single", "layout": "all-1g.12gb"})),
     _chain(_product("GH200-96GB"), _kmt("open"))),
    ("GS214", _chain(_set(("operator", "operands"), {}), _set(("operator", "driverManagement"), "clusterpolicy"),
                     _second_pool(driver={"branch": "535", "version": "535.309.01"})),
     _chain(_set(("operator", "driverManagement"), "nvidiadriver"),
            _second_pool(driver={"branch": "535", "version": "535.309.01"}))),
    ("GS214", _chain(_set(("operator", "version"), "v25.10.1"), _set(("kubernetes", "version"), "1.33"),
                     _set(("pools", 0, "driver"), {"branch": "580", "version": "580.105.08"}),
                     _set(("operator", "driverManagement"), "nvidiadriver")),
     _chain(_set(("operator", "version"), "v25.10.1"), _set(("kubernetes", "version"), "1.33"),
            _set(("pools", 0, "driver"), {"branch": "580", "version": "580.105.08"}),
            _set(("operator", "driverManagement"), "clusterpolicy"))),
    ("GS301", _mig("L40S", {"strategy": "single", "layout": "all-1g.10gb"}),
     _mig("A100-SXM4-80GB", {"strategy": "single", "layout": "all-1g.10gb"})),
    ("GS301", _mig("T4", {"strategy": "mixed", "custom": [{"profiles": {"1g.5gb": 1}}]}),
     _mig("A30-24GB", {"strategy": "mixed", "custom": [{"profiles": {"1g.6gb": 4}}]})),
    ("GS304", _mig("A100-SXM4-40GB", {"strategy": "mixed", "custom": [{"profiles": {"3g.20gb": 2, "1g.5gb": 1}}]}),
     _mig("A100-SXM4-40GB", {"strategy": "mixed", "custom": [{"profiles": {"3g.20gb": 2}}]})),
    ("GS307", _mig("A100-SXM4-80GB", _groups([7, 8])), _mig("A100-SXM4-80GB", _groups([6, 7]))),
    ("GS307", _mig("A100-SXM4-80GB", _groups([0, 1], [1])), _mig("A100-SXM4-80GB", _groups([0, 1], [2]))),
    ("GS307", _mig("A100-SXM4-80GB", _groups("all", [2])), _mig("A100-SXM4-80GB", _groups("all"))),
    ("GS308", _chain(_mig(None, {"strategy": "single", "layout": "all-1g.10gb"}),
                     _second_pool(mig={"strategy": "mixed", "layout": "all-balanced"})),
     _chain(_mig(None, {"strategy": "mixed", "layout": "all-1g.10gb"}),
            _second_pool(mig={"strategy": "mixed", "layout": "all-balanced"}))),
    ("GS309", _chain(_mig(None, {"strategy": "single", "layout": "all-1g.10gb"}),
                     _tenants({"name": "t", "namespaces": ["t"], "migQuota": {"mig-1g.10gb": 14}, "pools": ["p1"]})),
     _chain(_mig(None, {"strategy": "single", "layout": "all-1g.10gb"}),
            _tenants({"name": "t", "namespaces": ["t"], "gpuQuota": 14, "pools": ["p1"]}))),
    ("GS309", _chain(_mig("A100-SXM4-80GB", A100_MIXED),
                     _tenants({"name": "t", "namespaces": ["t"], "gpuQuota": 8, "pools": ["p1"]})),
     _chain(_mig("A100-SXM4-80GB", A100_MIXED),
            _tenants({"name": "t", "namespaces": ["t"], "gpuQuota": 0, "migQuota": {"mig-3g.40gb": 32},
                      "pools": ["p1"]}))),
    ("GS310", _tenants({"name": "t", "namespaces": ["t"], "gpuQuota": 256, "pools": ["p1"]}),
     _tenants({"name": "t", "namespaces": ["t"], "gpuQuota": 16, "pools": ["p1"]})),
    ("GS311", _chain(_set(("pools", 0, "sharing"), TIME_SLICING),
                     _tenants({"name": "a", "namespaces": ["a"], "gpuQuota": 4, "pools": ["p1"]},
                              {"name": "b", "namespaces": ["b"], "gpuQuota": 4, "pools": ["p1"]})),
     _chain(_set(("pools", 0, "sharing"), TIME_SLICING),
            _tenants({"name": "a", "namespaces": ["a", "b"], "gpuQuota": 4, "pools": ["p1"]}))),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "failing", "passing"), CASES)
def test_constraint_fails_and_passes(tmp_path: Path, rule: str, failing: Edit, passing: Edit) -> None:
    bad = _findings(tmp_path / "bad", failing)
    assert rule in _ids(bad), [(f.rule_id, f.message) for f in bad]
    good = _findings(tmp_path / "good", passing)
    assert rule not in _ids(good), [(f.rule_id, f.message) for f in good if f.rule_id == rule]


def test_every_new_id_has_a_case_and_an_nvidia_source() -> None:
    new = {"GS215", "GS216", "GS217", "GS218", "GS219", "GS220", "GS307", "GS308", "GS309", "GS310", "GS311"}
    assert new <= {rule for rule, _, _ in CASES}
    for entry in cat.ENTRIES:
        if entry.id in new | {"GS204", "GS301", "GS304"}:
            assert entry.source and "Failing" in entry.doc and "Passing" in entry.doc, entry.id


def test_known_issue_quotes_the_note_as_a_warning(tmp_path: Path) -> None:
    (f,) = [f for f in _findings(tmp_path, RKE2_25_3) if f.rule_id == "GS220"]
    assert f.severity is Severity.WARNING and "CDI not supported on RKE2" in f.message
    assert f.path == ("operator", "version")
    off = _chain(RKE2_25_3, _set(("operator", "operands"), {"cdi": False}))
    assert "GS220" not in _ids(_findings(tmp_path / "off", off))


def test_mig_not_capable_is_an_error_not_cannot_verify(tmp_path: Path) -> None:
    found = _findings(tmp_path, _mig("L4", {"strategy": "single", "layout": "all-1g.10gb"}))
    assert "GS300" not in _ids(found)
    assert [f.severity for f in found if f.rule_id == "GS301"] == [Severity.ERROR]


# ----------------------------------------------------------------------------- the data against the reference



@pytest.fixture(scope="module")
def reference(shared_dir: Path) -> dict[str, Any]:
    with (shared_dir / "reference" / "support-matrix.yaml").open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return data


def _release_notes(reference: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in reference["releases"]["lines"]:
        for rel in line["patches"]:
            out[rel["version"]] = list(rel.get("release_notes_facts") or [])
    return out


def test_known_issues_are_quoted_from_the_release_notes(reference: dict[str, Any]) -> None:
    notes = _release_notes(reference)
    cross_line = reference["platforms"]["cross_line_notes"]
    os_notes = {line["line"]: line.get("os_notes") or [] for line in reference["platforms"]["lines"]}
    for issue in load_matrix().domain.known_issues:
        if issue.restricts and issue.reference_pattern is not None and issue.releases != "any":
            # A restriction the platform-support notes state: every listed release's line carries the note.
            for version in issue.releases:
                line = ".".join(version.split(".")[:2])
                assert any(re.search(issue.reference_pattern, n) for n in os_notes[line]), (issue.id, line)
            continue
        listed = [v for v, facts in notes.items() if issue.note in facts]
        if issue.releases == "any" and issue.note in cross_line:
            continue  # a note the reference keeps across release lines (e.g. the RHEL 8 SELinux limitation)
        assert listed, issue.id
        if issue.releases != "any":
            assert sorted(issue.releases) == sorted(listed), issue.id


def test_kernel_module_facts_are_quoted_from_the_reference(reference: dict[str, Any]) -> None:
    text = yaml.safe_dump(reference, width=10_000)
    domain = load_matrix().domain
    assert domain.kernel_module_type_auto.source_fact in text
    assert domain.gds_requires_open_kernel_modules.source_fact in text
    assert domain.precompiled_excludes_fact in reference["precompiled_drivers"]["limitations"]
    gh200 = [row for row in reference["platforms"]["lines"][0]["supported_gpus_detail"]["gh_series"]]
    assert any("Open GPU Kernel module" in row.get("note", "") for row in gh200)
    arch = component_query.architecture("GH200-96GB")
    assert arch is not None and arch.open_kernel_modules == "required"


def test_gpudirect_os_lists_follow_the_reference(reference: dict[str, Any]) -> None:
    by_line = {ln["line"]: ln for ln in reference["platforms"]["lines"]}
    assert "Ubuntu 22.04 LTS with Network Operator 25.7.0" in by_line["26.7"]["gpudirect_storage"]
    assert component_query.gpudirect_os_supported("26.7.0", "storage", "ubuntu", "22.04") is True
    assert component_query.gpudirect_os_supported("26.7.0", "storage", "rhel", "9.4") is False
    assert component_query.gpudirect_os_supported("26.7.0", "rdma", "rhel", "9.4") is True
    assert component_query.gpudirect_os_supported("25.10.1", "rdma", "ubuntu", "20.04") is True
    assert component_query.gpudirect_os_supported("26.7.0", "storage", "rhcos", "4.19") is True
