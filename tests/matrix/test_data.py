"""The packaged support-matrix data validates against its schema and is internally consistent."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
from pydantic import ValidationError

from gpuspec.matrix import component_query, mig_query
from gpuspec.matrix import query as q
from gpuspec.matrix.data_models import Matrix
from gpuspec.matrix.load import DATA_FILES, load_matrix, raw_matrix, read_data_file

EXPECTED_TAGS = [
    "23.9.0", "23.9.1", "23.9.2", "24.3.0", "24.6.0", "24.6.1", "24.6.2", "24.9.0", "24.9.1", "24.9.2",
    "25.3.0", "25.3.1", "25.3.2", "25.3.3", "25.3.4", "25.10.0", "25.10.1",
    "26.3.0", "26.3.1", "26.3.2", "26.3.3", "26.7.0",
]  # fmt: skip
EXPECTED_LINES = ["23.9", "24.3", "24.6", "24.9", "25.3", "25.10", "26.3", "26.7"]


def test_data_validates_against_schema() -> None:
    m = Matrix.model_validate(raw_matrix())
    assert len(m.releases.releases) == 22


@pytest.mark.parametrize("name", DATA_FILES)
def test_every_data_file_has_a_source_note(name: str) -> None:
    doc = read_data_file(name)
    src = doc["source"]
    assert src["reference"].startswith("../shared/reference/support-matrix.yaml")
    assert src["files"], name
    assert "2026-08-21" in src["source_commit_dates"]["cloud-native-docs"]
    assert "2026-08-21" in src["source_commit_dates"]["gpu-operator"]


@pytest.mark.parametrize(
    ("file", "path"),
    [
        ("releases", ("releases", 0, "components", "driver")),
        ("gpus", ("products", 0)),
        ("mig", ("product_groups", 0, "profiles", 0)),
        ("platforms", ("lines", 0, "os_kubernetes", 0)),
        ("lifecycle", ()),
    ],
)
def test_schema_rejects_unknown_keys(file: str, path: tuple[Any, ...]) -> None:
    raw = copy.deepcopy(raw_matrix())
    node: Any = raw[file]
    for key in path:
        node = node[key]
    node["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        Matrix.model_validate(raw)


def test_schema_rejects_invented_status_word() -> None:
    raw = copy.deepcopy(raw_matrix())
    raw["lifecycle"]["lines"][0]["status_at_data_date"] = "maintenance"
    with pytest.raises(ValidationError):
        Matrix.model_validate(raw)


def test_loader_is_cached_and_fast() -> None:
    first = load_matrix()
    start = time.perf_counter()
    for _ in range(1000):
        assert load_matrix() is first
    assert time.perf_counter() - start < 0.05


def test_release_lines_and_patches_in_order() -> None:
    assert [ln.line for ln in q.release_lines()] == EXPECTED_LINES
    assert [r.version for r in q.releases()] == EXPECTED_TAGS
    for ln in q.release_lines():
        for patch in ln.patches:
            rel = q.release(patch)
            assert rel is not None and rel.line == ln.line and rel.tag == f"v{patch}"
    assert [ln.line for ln in load_matrix().platforms.lines] == list(reversed(EXPECTED_LINES))


def test_data_date_and_head_status_agree_with_the_policy_model() -> None:
    m = load_matrix()
    assert m.lifecycle.data_date.isoformat() == "2026-08-21"
    for ln in m.lifecycle.lines:
        assert q.line_status(ln.line) == ln.status_at_data_date, ln.line
    assert any("26.6.x" in d for d in m.lifecycle.discrepancies)


def test_every_release_pins_the_core_components() -> None:
    core = {"operator", "validator", "driver", "driver.manager", "toolkit", "devicePlugin", "gfd", "dcgm",
            "dcgmExporter", "migManager", "nodeStatusExporter", "gds", "vgpuManager", "vgpuDeviceManager",
            "vfioManager", "sandboxDevicePlugin", "ccManager"}  # fmt: skip
    for rel in q.releases():
        assert core <= set(rel.components), rel.version
        assert rel.drivers.chart_default == rel.components["driver"].version
        assert rel.nfd.image.image == "node-feature-discovery"
    assert "gdrcopy" in component_query.component_images("24.3.0")  # type: ignore[operator]
    assert "gdrcopy" not in component_query.component_images("23.9.2")  # type: ignore[operator]
    assert "kataSandboxDevicePlugin" in component_query.component_images("26.3.0")  # type: ignore[operator]


def test_driver_entries_carry_their_branch() -> None:
    for rel in q.releases():
        for d in rel.drivers.versions:
            assert d.version.split(".")[0] == d.branch
            assert d.branch in rel.drivers.branches
        defaults = [d.version for d in rel.drivers.versions if d.default]
        assert defaults == [rel.drivers.docs_default], rel.version


def test_mig_groups_slices_come_from_the_whole_gpu_profile() -> None:
    for g in load_matrix().mig.product_groups:
        biggest = max(g.profiles, key=lambda p: p.compute_slices)
        assert biggest.compute_slices == g.compute_slices_total
        assert biggest.max_instances == 1
        for p in g.profiles:
            parsed = mig_query.parse_mig_profile(p.name)
            assert parsed is not None and parsed.compute_slices == p.compute_slices
            assert p.compute_slices * p.max_instances <= g.compute_slices_total, (g.id, p.name)
        used = sum(next(p.compute_slices for p in g.profiles if p.name == n) * c for n, c in g.all_balanced.items())
        assert used <= g.compute_slices_total, g.id
    totals = {g.id: g.compute_slices_total for g in load_matrix().mig.product_groups}
    assert totals["a30-24gb"] == 4 and totals["a100-40gb"] == 7 and totals["rtx-pro-6000-96gb"] == 4


def test_all_balanced_layout_matches_each_group() -> None:
    lay = mig_query.mig_layout("all-balanced")
    assert lay is not None
    for g in load_matrix().mig.product_groups:
        entries = [e for e in lay.entries if e.device_filter and set(e.device_filter) & set(g.pci_device_ids)]
        assert len(entries) == 1, g.id
        assert entries[0].mig_devices == g.all_balanced, g.id


def test_named_layouts_inventory() -> None:
    m = load_matrix()
    layouts = m.mig.named_layouts.layouts
    assert len(layouts) == m.mig.named_layouts.count == 81
    names = {lay.name for lay in layouts}
    for name in ("all-disabled", "all-enabled", "all-1g.10gb", "all-balanced", "all-1g.5gb", "all-7g.80gb"):
        assert name in names
    for change in m.mig.named_layouts.changes:
        for added in change.added:
            assert mig_query.mig_layout(added).first_seen == change.version  # type: ignore[union-attr]


def test_every_profile_in_a_named_layout_belongs_to_some_group() -> None:
    profiles = {p.name for g in load_matrix().mig.product_groups for p in g.profiles}
    profiles |= {p.name for g in load_matrix().mig.product_groups for h in g.profile_history for p in h.profiles}
    for lay in load_matrix().mig.named_layouts.layouts:
        for e in lay.entries:
            assert set(e.mig_devices or {}) <= profiles, lay.name


def test_products_reference_existing_groups_and_listed_names() -> None:
    groups = {g.id for g in load_matrix().mig.product_groups}
    names: set[str] = set()
    for pl in load_matrix().platforms.lines:
        names |= set(pl.gpus.x86_64) | set(pl.gpus.arm64)
    ids: set[str] = set()
    for p in q.gpu_products():
        assert p.id not in ids
        ids.add(p.id)
        assert p.mig_group is None or p.mig_group in groups
        assert (p.mig_group is not None) <= (p.mig_capable is True)
        assert set(p.listed_as) <= names, p.id
        if p.mig_capable == "unknown":
            assert p.notes, p.id
    assert {n for p in q.gpu_products() for n in p.listed_as} == names


def test_os_rows_are_normalised() -> None:
    known = {"ubuntu", "rhel", "rhcos", "rocky", "centos"}
    for pl in load_matrix().platforms.lines:
        for row in pl.os_kubernetes:
            assert row.os.id in known
            assert row.os.versions is None or all(v[0].isdigit() for v in row.os.versions)
            for dist in row.distributions:
                assert q.normalize_distribution(dist) == dist


def test_upgrade_policy_defaults() -> None:
    d = load_matrix().upgrades.policy_defaults
    assert d["autoUpgrade"] is True and d["maxParallelUpgrades"] == 1 and d["maxUnavailable"] == "25%"
    assert d["drain"]["enable"] is False and d["gpuPodDeletion"]["timeoutSeconds"] == 300


def test_mps_format_is_recorded_as_unknown() -> None:
    assert load_matrix().sharing.mps.config_format == "unknown"
