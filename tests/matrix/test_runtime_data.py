"""The container runtime data (data/runtime.yaml): shape, sources, reachability and agreement with the reference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.matrix import query as q
from gpuspec.matrix.chartvalues import chart_index
from gpuspec.matrix.load import load_matrix
from gpuspec.matrix.runtime import (
    host_driver_install,
    nri_leaves_runtime_alone,
    nri_plugin,
    rendered_env,
    runtime_cell,
)
from gpuspec.model.cluster_specs import Distribution, Runtime

KUBERNETES = ("1.28", "1.32", "1.33", "1.36")


def _env(cell: Any) -> dict[str, str]:
    return {e.name: e.value for e in rendered_env(cell)}


def test_every_cell_names_a_source_and_has_the_shape_of_its_status() -> None:
    cells = load_matrix().runtime.cells
    assert cells
    for cell in cells:
        assert cell.distribution in {d.value for d in Distribution}, cell
        assert cell.runtime in {r.value for r in Runtime}, cell
        assert len(cell.source) > 20, cell
        for bound in (cell.from_release, cell.before):
            assert bound is None or q.parse_version(bound) is not None, cell
        if cell.status == "documented":
            assert cell.env and any(e.set_by == "gpuspec" for e in cell.env), cell
        else:
            assert not cell.env and not cell.required, cell


def test_every_cell_is_reachable() -> None:
    """A cell shadowed by an earlier one for every release and Kubernetes version would be dead data."""
    reached = {
        id(runtime_cell(rel.version, cell.distribution, cell.runtime, kube))
        for cell in load_matrix().runtime.cells for rel in q.releases() for kube in KUBERNETES
    }
    for cell in load_matrix().runtime.cells:
        assert id(cell) in reached, cell


@pytest.mark.parametrize(("release", "distribution", "runtime", "kube", "expected"), [
    ("26.7.0", "upstream", "containerd", "1.33", {}),
    ("26.7.0", "upstream", "cri-o", "1.33", {}),
    ("26.7.0", "gke", "containerd", "1.33", {"RUNTIME_CONFIG_SOURCE": "file"}),
    ("25.10.0", "gke", "containerd", "1.34", {"RUNTIME_CONFIG_SOURCE": "file"}),
    ("26.7.0", "gke", "containerd", "1.32", {}),
    ("25.3.4", "gke", "containerd", "1.33", {}),
    ("24.3.0", "rke2", "containerd", "1.29", {
        "CONTAINERD_CONFIG": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
        "CONTAINERD_SOCKET": "/run/k3s/containerd/containerd.sock"}),
    ("24.6.0", "rke2", "containerd", "1.30", {
        "CONTAINERD_CONFIG": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
        "CONTAINERD_SOCKET": "/run/k3s/containerd/containerd.sock"}),
    ("25.3.4", "microk8s", "containerd", "1.32", {
        "CONTAINERD_CONFIG": "/var/snap/microk8s/current/args/containerd-template.toml",
        "CONTAINERD_SOCKET": "/var/snap/microk8s/common/run/containerd.sock"}),
    ("25.10.0", "microk8s", "containerd", "1.33", {
        "CONTAINERD_CONFIG": "/var/snap/microk8s/current/args/containerd-template.toml",
        "CONTAINERD_SOCKET": "/var/snap/microk8s/common/run/containerd.sock",
        "RUNTIME_CONFIG_SOURCE": "file=/var/snap/microk8s/current/args/containerd.toml"}),
])
def test_documented_settings_per_cell(release: str, distribution: str, runtime: str, kube: str,
                                      expected: dict[str, str]) -> None:
    cell = runtime_cell(release, distribution, runtime, kube)
    assert cell is not None and cell.status != "unknown"
    assert _env(cell) == expected


@pytest.mark.parametrize(("release", "distribution", "runtime"), [
    ("24.6.2", "rke2", "containerd"), ("26.7.0", "rke2", "containerd"), ("26.7.0", "k3s", "containerd"),
    ("26.7.0", "k0s", "containerd"), ("26.7.0", "vks", "containerd"), ("26.7.0", "nkp", "containerd"),
])
def test_cells_the_docs_do_not_cover_are_unknown(release: str, distribution: str, runtime: str) -> None:
    cell = runtime_cell(release, distribution, runtime, "1.33")
    assert cell is not None and cell.status == "unknown" and not cell.env


@pytest.mark.parametrize(("distribution", "runtime"), [
    ("gke", "cri-o"), ("microk8s", "cri-o"), ("rke2", "cri-o"), ("eks", "cri-o"), ("openshift", "containerd"),
])
def test_combinations_without_a_cell_are_not_guessed(distribution: str, runtime: str) -> None:
    assert runtime_cell("26.7.0", distribution, runtime, "1.33") is None


def test_operator_set_and_default_values_are_documented_but_not_rendered() -> None:
    cell = runtime_cell("24.3.0", "microk8s", "containerd", "1.29")
    assert cell is not None
    by_name = {e.name: e for e in cell.env}
    assert by_name["CONTAINERD_RUNTIME_CLASS"].set_by == "operator"
    assert by_name["CONTAINERD_SET_AS_DEFAULT"].set_by == "toolkit-default"
    assert set(_env(cell)) == {"CONTAINERD_CONFIG", "CONTAINERD_SOCKET"}


def test_nri_plugin_needs_containerd_cdi_and_26_3() -> None:
    assert nri_plugin().chart_value == "cdi.nriPluginEnabled"
    assert nri_leaves_runtime_alone("26.3.0", "containerd", cdi=True)
    assert not nri_leaves_runtime_alone("25.10.1", "containerd", cdi=True)
    assert not nri_leaves_runtime_alone("26.7.0", "containerd", cdi=False)
    assert not nri_leaves_runtime_alone("26.7.0", "cri-o", cdi=True)
    for tag in ("v26.3.3", "v26.7.0"):
        index = chart_index(tag)
        assert index is not None and index.lookup(nri_plugin().chart_value).known, tag
    index = chart_index("v25.10.1")
    assert index is not None and not index.lookup(nri_plugin().chart_value).known


@pytest.fixture(scope="module")
def notes(shared_dir: Path) -> dict[str, list[str]]:
    with (shared_dir / "reference" / "support-matrix.yaml").open(encoding="utf-8") as fh:
        reference: dict[str, Any] = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {rel["version"]: [str(f) for f in rel.get("release_notes_facts") or []]
            for line in reference["releases"]["lines"] for rel in line["patches"]}


def test_gke_setting_agrees_with_the_reference_note(notes: dict[str, list[str]]) -> None:
    note = "known issue: GKE 1.33+ needs toolkit env RUNTIME_CONFIG_SOURCE=file"
    assert note in notes["25.10.0"]
    assert _env(runtime_cell("25.10.0", "gke", "containerd", "1.33")) == {"RUNTIME_CONFIG_SOURCE": "file"}
    assert _env(runtime_cell("25.10.0", "gke", "containerd", "1.32")) == {}
    # gpuspec renders it, so it is no longer a known-issue warning (GS220)
    assert all("RUNTIME_CONFIG_SOURCE" not in k.note for k in load_matrix().domain.known_issues)


def test_microk8s_procedure_change_agrees_with_the_reference_note(notes: dict[str, list[str]]) -> None:
    assert any("MicroK8s install procedure changed" in f for f in notes["25.10.0"])
    before = _env(runtime_cell("25.3.4", "microk8s", "containerd", "1.32"))
    after = _env(runtime_cell("25.10.0", "microk8s", "containerd", "1.33"))
    assert "RUNTIME_CONFIG_SOURCE" not in before and "RUNTIME_CONFIG_SOURCE" in after


def test_nri_and_default_runtime_agree_with_the_reference_notes(notes: dict[str, list[str]]) -> None:
    assert any(f.startswith("NRI plugin (cdi.nriPluginEnabled)") for f in notes["26.3.0"])
    assert "operator.defaultRuntime removed" in notes["25.3.0"]
    assert nri_plugin().from_release == "26.3.0"
    index = chart_index("v25.3.4")
    assert index is not None and not index.lookup("operator.defaultRuntime").known


def test_host_driver_installs_name_chart_keys_of_their_releases() -> None:
    entries = load_matrix().runtime.host_driver_installs
    assert [e.distribution for e in entries] == ["gke"]
    for entry in entries:
        assert len(entry.source) > 20
        since = q.parse_version(entry.from_release)
        assert since is not None
        tags = [t for t in ("v24.6.2", "v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0")
                if (q.parse_version(t) or ()) >= since]
        for key in entry.values:
            assert any((ix := chart_index(t)) is not None and ix.lookup(key).known for t in tags), key
    assert host_driver_install("24.3.0", "gke") is None and host_driver_install("24.6.0", "gke") is not None
    assert host_driver_install("26.7.0", "eks") is None
