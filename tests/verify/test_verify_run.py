"""`gpuspec verify` end to end with the real helm and kubectl: a passing fixture and each class of failure.

The fixture is a two-cluster fleet on GPU Operator v25.10.1 (the mini chart's version) with a hand-written
rendered/ tree (tests/verify/fixtures/mini); each failing test copies it and breaks one thing on purpose.
The cases that only check one id's findings (message, position) are rule cases in tests/rules/fixtures/GS9xx/;
the tests here check more than that (several ids, hints, caches, chart variants, the CLI).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gpuspec.cli.verify_cmd import verify_command
from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding, Severity
from gpuspec.pipeline.verify import VerifyOptions, VerifyResult, verify_fleet

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini"
CRDS = FIXTURES / "crds"
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    """A writable copy of the mini fleet + rendered tree."""
    shutil.copytree(MINI, tmp_path / "lab")
    return tmp_path / "lab"


def _run(lab: Path, helm: Path, *, chart: Path | None = None, crds: bool = True, cache: Path | None = None,
         **kwargs: Any) -> VerifyResult:
    options = VerifyOptions(
        fleet_dir=lab / "fleet", rendered_dir=lab / "rendered",
        charts=[chart or REPO_ROOT / "tests" / "fixtures" / "charts" / "gpu-operator-mini"],
        crd_paths=[CRDS] if crds else [], helm=helm, cache_dir=cache, **kwargs,
    )
    return verify_fleet(options)


def _ids(result: VerifyResult) -> list[str]:
    return sorted(f.rule_id for f in result.findings)


def _only(result: VerifyResult, rule_id: str) -> list[Finding]:
    found = [f for f in result.findings if f.rule_id == rule_id]
    assert found, f"no {rule_id} in {[(f.rule_id, f.message) for f in result.findings]}"
    return found


def _edit_yaml(path: Path, change: Callable[[Any], None]) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _values(lab: Path, cluster: str) -> Path:
    return lab / "rendered" / "clusters" / cluster / "gpu-operator.values.yaml"


# ------------------------------------------------------------------------------------- passing


def test_fixture_passes(lab: Path, helm_bin: Path, tmp_path: Path) -> None:
    result = _run(lab, helm_bin, cache=tmp_path / "cache")
    assert result.usable
    assert result.findings == []
    assert [c.name for c in result.clusters] == ["lab-airgap", "lab-online"]
    assert all(c.chart == "gpu-operator v25.10.1" and c.helm_cached is False for c in result.clusters)
    assert all(c.objects > 3 for c in result.clusters)


def test_without_crds_custom_resources_are_unverified_warnings(lab: Path, helm_bin: Path) -> None:
    result = _run(lab, helm_bin, crds=False)
    assert _ids(result) == ["GS910", "GS910", "GS910"]
    assert all(f.severity is Severity.WARNING for f in result.findings)
    kinds = sorted(f.message.split()[0].rstrip(":") for f in result.findings)
    assert kinds == ["Application/lab-online-gpu-operator", "HelmRelease/lab-airgap-gpu-operator",
                     "PrometheusRule/gpu-alerts"]


def test_second_run_uses_the_helm_cache(lab: Path, helm_bin: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = _run(lab, helm_bin, cache=cache)
    warm = _run(lab, helm_bin, cache=cache)
    assert [c.helm_cached for c in cold.clusters] == [False, False]
    assert [c.helm_cached for c in warm.clusters] == [True, True]
    assert warm.findings == cold.findings == []
    _edit_yaml(_values(lab, "lab-online"), lambda d: d["driver"]["upgradePolicy"].update(maxParallelUpgrades=2))
    again = _run(lab, helm_bin, cache=cache)
    assert [c.helm_cached for c in again.clusters] == [True, False]  # only the changed cluster re-runs helm


def test_parallel_and_serial_runs_agree(lab: Path, helm_bin: Path) -> None:
    _edit_yaml(_values(lab, "lab-online"), lambda d: d["toolkit"].update(version="v1.17.0"))
    _edit_yaml(_values(lab, "lab-airgap"), lambda d: d["gfd"].update(repository="nvcr.io/nvidia"))
    serial = _run(lab, helm_bin, jobs=1)
    parallel = _run(lab, helm_bin, jobs=4)
    assert serial.findings == parallel.findings
    assert {"GS904", "GS905"} <= set(_ids(serial))


def test_cluster_selection(lab: Path, helm_bin: Path) -> None:
    result = _run(lab, helm_bin, clusters=["lab-online"])
    assert [c.name for c in result.clusters] == ["lab-online"]
    assert result.findings == []
    with pytest.raises(GpuspecError, match="no cluster named 'nope'"):
        _run(lab, helm_bin, clusters=["nope"])


# ------------------------------------------------------------------------------------- failing


def test_image_outside_the_mirror(lab: Path, helm_bin: Path) -> None:
    _edit_yaml(_values(lab, "lab-airgap"), lambda d: d["toolkit"].update(repository="nvcr.io/nvidia/k8s"))
    result = _run(lab, helm_bin)
    [finding] = _only(result, "GS904")
    assert finding.file is not None and finding.file.endswith("clusters/lab-airgap/gpu-operator.values.yaml")
    assert finding.path == ("toolkit", "repository")
    assert "ClusterPolicy/cluster-policy pulls nvcr.io/nvidia/k8s/container-toolkit:v1.18.1" in finding.message
    assert "outside mirror lab (mirror.lab.example/k8s, mirror.lab.example/nvcr)" in finding.message
    # the same image is not in the air-gap list either
    assert any("container-toolkit" in f.message for f in _only(result, "GS913"))


def test_online_cluster_has_no_mirror_check(lab: Path, helm_bin: Path) -> None:
    result = _run(lab, helm_bin)
    assert "GS904" not in _ids(result)


def test_operator_tag_defaults_to_app_version(lab: Path, helm_bin: Path, tmp_path: Path, mini_chart: Path) -> None:
    """A chart whose appVersion is not the release tag (an unreleased checkout) is caught by the pin check."""
    chart = tmp_path / "chart"
    shutil.copytree(mini_chart, chart)
    meta = chart / "Chart.yaml"
    meta.write_text(meta.read_text().replace("appVersion: v25.10.1", "appVersion: main-latest"))
    for cluster in ("lab-online", "lab-airgap"):
        _edit_yaml(_values(lab, cluster), lambda d: d["operator"].pop("version"))
    findings = _only(_run(lab, helm_bin, chart=chart), "GS905")
    assert {f.path for f in findings} == {("operator",)}
    assert all("gpu-operator:main-latest" in f.message for f in findings)


def test_unknown_values_key(lab: Path, helm_bin: Path) -> None:
    _edit_yaml(_values(lab, "lab-online"),
               lambda d: d["driver"]["upgradePolicy"].update(maxParalelUpgrades=3))
    [finding] = _only(_run(lab, helm_bin), "GS903")
    assert finding.path == ("driver", "upgradePolicy", "maxParalelUpgrades")
    assert finding.at_key and finding.hint == "did you mean 'maxParallelUpgrades'?"
    assert "is not a key of chart gpu-operator v25.10.1; helm ignores it" in finding.message


def test_kustomize_build_failure(lab: Path, helm_bin: Path) -> None:
    path = lab / "rendered" / "clusters" / "lab-online" / "kustomization.yaml"
    _edit_yaml(path, lambda d: d["resources"].append("missing.yaml"))
    result = _run(lab, helm_bin)
    [finding] = _only(result, "GS907")
    assert finding.file is not None and finding.file.endswith("clusters/lab-online/kustomization.yaml")
    assert "missing.yaml" in finding.message
    # the overlay's files are still checked as they are: the MIG config still resolves
    assert "GS906" not in _ids(result)


def test_gitops_kustomize_failure(lab: Path, helm_bin: Path) -> None:
    (lab / "rendered" / "clusters" / "lab-airgap" / "gpu-operator.values.yaml").rename(lab / "values.bak")
    result = _run(lab, helm_bin)
    assert any(f.file and f.file.endswith("gitops/flux/lab-airgap/kustomization.yaml")
               for f in _only(result, "GS907"))
    assert any("gpu-operator.values.yaml does not exist" in f.message for f in _only(result, "GS911"))


def test_chart_version_mismatch(lab: Path, helm_bin: Path, tmp_path: Path, mini_chart: Path) -> None:
    chart = tmp_path / "chart"
    shutil.copytree(mini_chart, chart)
    meta = chart / "Chart.yaml"
    meta.write_text(meta.read_text().replace("version: v25.10.1", "version: v25.3.4"))
    result = _run(lab, helm_bin, chart=chart)
    findings = _only(result, "GS902")
    assert [f.file for f in findings] == [
        str(lab / "fleet" / "clusters" / "lab-airgap.yaml"), str(lab / "fleet" / "clusters" / "lab-online.yaml")]
    assert all(f.path == ("operator", "version") for f in findings)
    assert "pins GPU Operator v25.10.1, but no chart of that version was given" in findings[0].message
    assert all(c.helm_cached is None for c in result.clusters)


def test_the_matching_chart_is_picked(lab: Path, helm_bin: Path, tmp_path: Path, mini_chart: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(mini_chart, other)
    meta = other / "Chart.yaml"
    meta.write_text(meta.read_text().replace("version: v25.10.1", "version: v25.3.4"))
    options = VerifyOptions(fleet_dir=lab / "fleet", rendered_dir=lab / "rendered", charts=[other, mini_chart],
                            crd_paths=[CRDS], helm=helm_bin, cache_dir=None)
    assert verify_fleet(options).findings == []


def test_helm_template_failure(lab: Path, helm_bin: Path, tmp_path: Path, mini_chart: Path) -> None:
    chart = tmp_path / "chart"
    shutil.copytree(mini_chart, chart)
    (chart / "templates" / "broken.yaml").write_text("{{ .Values.operator.nope.deeper }}\n")
    result = _run(lab, helm_bin, chart=chart)
    findings = _only(result, "GS901")
    assert len(findings) == 2
    assert all("broken.yaml" in f.message and f.path == () for f in findings)
    # checks that need helm's output are skipped; the overlay is still built and validated
    assert set(_ids(result)) == {"GS901"}


def test_kube_version_below_the_chart_minimum(lab: Path, helm_bin: Path, tmp_path: Path, mini_chart: Path) -> None:
    chart = tmp_path / "chart"
    shutil.copytree(mini_chart, chart)
    meta = chart / "Chart.yaml"
    meta.write_text(meta.read_text().replace('kubeVersion: ">= 1.16.0-0"', 'kubeVersion: ">= 1.32.0-0"'))
    [finding] = _only(_run(lab, helm_bin, chart=chart), "GS901")
    assert finding.file is not None and "lab-online" in finding.file
    assert "--kube-version 1.31" in finding.message and "incompatible with Kubernetes v1.31" in finding.message


def test_missing_rendered_cluster(lab: Path, helm_bin: Path) -> None:
    shutil.rmtree(lab / "rendered" / "clusters" / "lab-online")
    result = _run(lab, helm_bin)
    [finding] = _only(result, "GS911")
    assert finding.file == str(lab / "fleet" / "clusters" / "lab-online.yaml")
    assert "does not exist" in finding.message and finding.hint is not None


def test_invalid_yaml_in_the_overlay(lab: Path, helm_bin: Path) -> None:
    (lab / "rendered" / "clusters" / "lab-online" / "namespace.yaml").write_text("a: [\n")
    result = _run(lab, helm_bin)
    assert any("namespace.yaml: invalid YAML" in f.message for f in _only(result, "GS911"))
    assert "GS907" in _ids(result)  # kustomize cannot read it either


# ------------------------------------------------------------------------------------- CLI


def _cli(lab: Path, helm_bin: Path, *extra: str) -> Any:
    args = [str(lab / "fleet"), "--rendered", str(lab / "rendered"),
            "--chart", str(REPO_ROOT / "tests" / "fixtures" / "charts" / "gpu-operator-mini"),
            "--crds", str(CRDS), "--helm", str(helm_bin), "--no-cache", *extra]
    return CliRunner().invoke(verify_command, args)


def test_cli_text_and_exit_codes(lab: Path, helm_bin: Path) -> None:
    ok = _cli(lab, helm_bin)
    assert ok.exit_code == 0, ok.output
    assert "verify: no problems found" in ok.output and "verified 2 cluster(s)" in ok.output
    _edit_yaml(_values(lab, "lab-online"), lambda d: d["devicePlugin"].update(version="v0.17.4"))
    bad = _cli(lab, helm_bin, "--cluster", "lab-online", "--jobs", "2")
    assert bad.exit_code == 1
    assert "error GS905" in bad.output and "gpu-operator.values.yaml:" in bad.output


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_cli_machine_formats(lab: Path, helm_bin: Path, tmp_path: Path, fmt: str) -> None:
    _edit_yaml(_values(lab, "lab-online"), lambda d: d["devicePlugin"].update(version="v0.17.4"))
    out = tmp_path / f"report.{fmt}"
    result = _cli(lab, helm_bin, "--format", fmt, "--output", str(out))
    assert result.exit_code == 1
    doc = json.loads(out.read_text())
    text = json.dumps(doc)
    assert "GS905" in text and "gpu-operator.values.yaml" in text


def _main(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "verify", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_missing_helm_is_a_clear_exit_2(lab: Path) -> None:
    proc = _main("fleet", "--chart", str(REPO_ROOT / "tests/fixtures/charts/gpu-operator-mini"),
                 "--helm", "/nonexistent/helm", cwd=lab)
    assert proc.returncode == 2
    assert "helm not found at '/nonexistent/helm' (from --helm)" in proc.stderr
    assert "gpuspec tools install" in proc.stderr and "Traceback" not in proc.stderr


def test_usage_errors_exit_2(lab: Path, helm_bin: Path) -> None:
    bad_chart = _main("fleet", "--chart", str(lab), "--helm", str(helm_bin), cwd=lab)
    assert bad_chart.returncode == 2 and "is not a Helm chart" in bad_chart.stderr
    no_rendered = _main("fleet", "--rendered", "nope", "--chart", str(lab), cwd=lab)
    assert no_rendered.returncode == 2 and "rendered output not found: nope" in no_rendered.stderr
    for proc in (bad_chart, no_rendered):
        assert "Traceback" not in proc.stderr


def test_unusable_fleet_exits_2(lab: Path, helm_bin: Path) -> None:
    (lab / "fleet" / "clusters" / "lab-online.yaml").write_text("kind: Cluster\n")
    result = _cli(lab, helm_bin)
    assert result.exit_code == 2
    assert "could not be loaded" in result.output


def test_caches_never_hide_a_new_problem(lab: Path, helm_bin: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "helm"
    assert _run(lab, helm_bin, cache=cache).findings == []
    assert (tmp_path / "cache" / "verify" / "schema-results.json").is_file()
    assert list((tmp_path / "cache" / "verify" / "kustomize").glob("*.json"))
    tenants = lab / "rendered" / "clusters" / "lab-online" / "tenants.yaml"
    tenants.write_text(tenants.read_text().replace("hard:", "hardd:"))
    assert _ids(_run(lab, helm_bin, cache=cache)) == ["GS908"]
    kustomization = lab / "rendered" / "clusters" / "lab-airgap" / "kustomization.yaml"
    _edit_yaml(kustomization, lambda d: d["resources"].append("gone.yaml"))
    assert _ids(_run(lab, helm_bin, cache=cache)) == ["GS907", "GS908"]


def test_cli_fails_on_an_expired_policy_exception(lab: Path, helm_bin: Path) -> None:
    policies = lab / "policies"
    policies.mkdir(exist_ok=True)
    (policies / "default.yaml").write_text(
        "apiVersion: gpuspec.io/v1alpha1\nkind: PolicyPack\nmetadata:\n  name: default\nexceptions:\n"
        "  - rules: [GS202]\n    cluster: lab-online\n    owner: gpu-platform\n    reason: upgrade planned\n"
        "    expires: 2027-03-31\n", encoding="utf-8")
    live = _cli(lab, helm_bin, "--policies", str(policies), "--today", "2027-03-31")
    assert live.exit_code == 0, live.output
    expired = _cli(lab, helm_bin, "--policies", str(policies), "--today", "2027-04-01")
    assert expired.exit_code == 1
    assert "error GS003 exception for GS202 in lab-online (owner gpu-platform) expired on 2027-03-31" in expired.output
