"""`gpuspec matrix`: release details, the line overview, JSON output and the unknown-version error."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gpuspec.cli.matrix_cmd import matrix_command
from gpuspec.errors import GpuspecError


def _run(*args: str) -> str:
    result = CliRunner().invoke(matrix_command, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_release_table_shows_components_platforms_and_status() -> None:
    out = _run("v25.10.1")
    assert "GPU Operator v25.10.1" in out and "end-of-support as of 2026-08-21" in out
    assert "nvcr.io/nvidia/driver:580.105.08-<os-tag>" in out
    assert "nvcr.io/nvidia/gpu-operator:v25.10.1" in out
    assert "registry.k8s.io/nfd/node-feature-discovery:v0.18.2" in out
    assert "openshift     4.14-4.21" in out
    assert "Ubuntu 24.04 LTS" in out and "containerd 1.7 - 2.2" in out
    assert "Driver branches: 610, 595, 590, 580, 575, 570, 550, 535" in out
    assert "NVIDIADriver CRD: technology-preview" in out


def test_release_json() -> None:
    data = json.loads(_run("26.7.0", "--format", "json"))
    assert data["version"] == "v26.7.0" and data["status"] == "supported"
    assert data["components"]["toolkit"]["image"] == "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0"
    assert data["components"]["vgpuManager"]["image"] is None
    assert data["drivers"]["chart_default"] == "595.91.07"
    assert data["kubernetes"]["kubernetes"] == ["1.33-1.36", "1.32-1.36"]
    assert data["nvidiadriver_crd"] == "supported"


def test_patch_limits_are_shown() -> None:
    data = json.loads(_run("25.10.0", "--format", "json"))
    assert data["kubernetes_patch_limits"][0]["limits"] == {"kubernetes_max": "1.34"}


def test_lines_overview_table_and_json() -> None:
    out = _run()
    assert "26.7   2026-08-20  supported" in out
    assert "26.3   2026-03-18  deprecated" in out
    data = json.loads(_run("--format", "json"))
    assert [ln["line"] for ln in data["lines"]][-1] == "26.7"
    assert {ln["status"] for ln in data["lines"][:6]} == {"end-of-support"}


def test_as_of_changes_status() -> None:
    data = json.loads(_run("--format", "json", "--as-of", "2026-05-01"))
    status = {ln["line"]: ln["status"] for ln in data["lines"]}
    assert status["26.3"] == "supported" and status["25.10"] == "deprecated" and status["26.7"] == "unknown"


@pytest.mark.parametrize(("asked", "nearest"), [("25.10.9", "v25.10.1"), ("v27.1.0", "v26.7.0")])
def test_unknown_version_names_the_nearest_release(asked: str, nearest: str) -> None:
    result = CliRunner().invoke(matrix_command, [asked])
    assert isinstance(result.exception, GpuspecError)
    assert asked in result.exception.message
    assert str(result.exception).endswith(f"nearest known release: {nearest}")


def test_unknown_version_exits_2_through_the_cli_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from gpuspec.cli import main as cli_main

    if "matrix" not in cli_main.cli.commands:
        monkeypatch.setitem(cli_main.cli.commands, "matrix", matrix_command)
    monkeypatch.setattr(sys, "argv", ["gpuspec", "matrix", "v25.10.9"])
    assert cli_main.run() == 2


def test_release_shows_the_runtime_settings_gpuspec_renders() -> None:
    out = _run("v24.3.0")
    assert "CONTAINERD_CONFIG=/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl" in out
    rke2 = [ln for ln in out.splitlines() if ln.startswith("rke2 ") and " containerd " in ln]
    assert len(rke2) == 1 and "cannot verify" not in rke2[0]  # the later "cannot verify" cell does not cover 24.3.0
    data = json.loads(_run("26.7.0", "--format", "json"))
    gke = [c for c in data["runtime_settings"] if c["distribution"] == "gke"]
    assert [(c["kubernetes_from"], c["toolkit_env"]) for c in gke] == [("1.33", {"RUNTIME_CONFIG_SOURCE": "file"}),
                                                                     (None, {})]
    assert {c["distribution"]: c["status"] for c in data["runtime_settings"]}["k3s"] == "unknown"
