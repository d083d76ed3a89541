"""The chart-intent data and its reader: which values path the GPU Operator chart writes into which field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuspec.matrix.chartintent import chart_intent, evaluate, expected_fields, expected_spec
from gpuspec.matrix.query import releases
from gpuspec.matrix.templatescan import scan_template

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "charts" / "gpu-operator-mini" / "templates"


def _by_field(text: str) -> dict[tuple[str, str], object]:
    return {(m.kind, m.values): m for m in scan_template(text).fields}


def test_every_release_of_the_matrix_has_intent_data() -> None:
    tags = {r.tag for r in releases()}
    for tag in tags:
        intent = chart_intent(tag)
        assert intent is not None, tag
        assert intent.reference.startswith("NVIDIA/gpu-operator deployments/gpu-operator/templates at tag ")
        assert f"{tag} (" in intent.reference  # the tag and its commit


def test_packaged_data_names_the_default_of_max_unavailable_at_v26_7_0() -> None:
    intent = chart_intent("v26.7.0")
    assert intent is not None
    sources = {(s.kind, s.template, s.default) for s in intent.sources_of("driver.upgradePolicy.maxUnavailable")}
    assert sources == {("ClusterPolicy", "templates/clusterpolicy.yaml:231", '"25%"'),
                       ("NVIDIADriver", "templates/nvidiadriver.yaml:40", '"25%"')}
    renamed = {s.field for s in intent.sources_of("driver.upgradePolicy.gpuPodDeletion.force")}
    assert renamed == {"spec.driver.upgradePolicy.podDeletion.force", "spec.upgradePolicy.podDeletion.force"}
    # The NVIDIADriver names the repository ConfigMap `name`, the ClusterPolicy takes the values map as it is.
    repo = {(s.kind, s.field, s.subtree) for s in intent.sources_of("driver.repoConfig.configMapName")}
    assert repo == {("NVIDIADriver", "spec.repoConfig.name", False), ("ClusterPolicy", "spec.driver.repoConfig", True)}


def test_scan_reads_the_test_charts_templates_like_the_real_ones() -> None:
    cp = _by_field((MINI / "clusterpolicy.yaml").read_text(encoding="utf-8"))
    wait = cp[("ClusterPolicy", "driver.upgradePolicy.waitForCompletion.podSelector")]
    assert wait.field == "spec.driver.upgradePolicy.waitForCompletion.podSelector"  # type: ignore[attr-defined]
    assert ".Values.driver.upgradePolicy.waitForCompletion.podSelector" in wait.guards  # type: ignore[attr-defined]
    assert cp[("ClusterPolicy", "driver.upgradePolicy.maxUnavailable")].default == '"25%"'  # type: ignore[attr-defined]
    tolerations = cp[("ClusterPolicy", "daemonsets.tolerations")]
    assert tolerations.subtree and tolerations.field == "spec.daemonsets.tolerations"  # type: ignore[attr-defined]
    nvd = _by_field((MINI / "nvidiadriver.yaml").read_text(encoding="utf-8"))
    assert nvd[("NVIDIADriver", "driver.repoConfig.configMapName")].field == "spec.repoConfig.name"  # type: ignore[attr-defined]


def test_scan_follows_else_branches_and_comments() -> None:
    text = """\
kind: ClusterPolicy
spec:
  {{- /* a comment
         over lines {{ .Values.nothing }} */}}
  {{- if .Values.a.on }}
  a: {{ .Values.a.value | default 3 }}
  {{- else if .Values.b }}
  b: {{ .Values.b | quote }}
  {{- else }}
  c: {{ printf "%s" .Values.c }}
  {{- end }}
"""
    scan = scan_template(text)
    fields = {m.values: m for m in scan.fields}
    assert fields["a.value"].guards == (".Values.a.on",) and fields["a.value"].default == "3"
    assert fields["b"].guards == ("and (not (.Values.a.on)) (.Values.b)",)
    assert "c" not in fields and "c" in scan.reads  # a transformed value is a read, not a mapping
    assert "nothing" not in scan.reads and "a.on" in scan.tests


@pytest.mark.parametrize(("guard", "want"), [
    (".Values.a", True), ("not .Values.a", False), ("and .Values.a .Values.z", False),
    ("or .Values.z .Values.a", True), ('eq .Values.s "x"', True), ("ne .Values.missing nil", False),
    ("and (not (.Values.z)) (.Values.a)", True), (".Capabilities.APIVersions", None), ("include \"x\" .", None),
])
def test_guards_evaluate_like_go_templates(guard: str, want: bool | None) -> None:
    assert evaluate(guard, {"a": {"b": 1}, "s": "x", "z": ""}) is want


def test_expected_fields_follow_the_nvidiadriver_switch(shared_dir: Path) -> None:
    defaults = yaml.safe_load((shared_dir / "upstream" / "gpu-operator" / "v26.7.0" / "values.yaml").read_text())
    intent = chart_intent("v26.7.0")
    assert intent is not None
    values = {"driver": {"version": "580.173.02", "nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": True},
                         "upgradePolicy": {"maxUnavailable": 0}},
              "devicePlugin": {"mps": {"root": "/run/nvidia/mps"}}, "node-feature-discovery": {"x": 1}}
    got = expected_fields(values, defaults, intent, skip_roots=frozenset({"node-feature-discovery"}))
    version = {(e.source.kind, e.path) for e in got.expectations if e.values_path == "driver.version"}
    assert version == {("NVIDIADriver", "spec.version")}  # the ClusterPolicy's driver block is off in CRD mode
    assert got.unread == ["devicePlugin.mps.root"]
    spec = expected_spec(values, defaults, intent, "NVIDIADriver")
    assert spec["spec"]["upgradePolicy"]["maxUnavailable"] == 0
    cp = expected_spec(values, defaults, intent)
    assert cp == {"spec": {"driver": {"upgradePolicy": {"maxUnavailable": 0}, "useNvidiaDriverCRD": True}}}


def test_a_value_whose_block_is_off_is_not_rendered(shared_dir: Path) -> None:
    defaults = yaml.safe_load((shared_dir / "upstream" / "gpu-operator" / "v26.7.0" / "values.yaml").read_text())
    intent = chart_intent("v26.7.0")
    assert intent is not None
    got = expected_fields({"devicePlugin": {"config": {"default": "any"}}}, defaults, intent)
    assert [(g.values_path, g.guard) for g in got.not_rendered] == [
        ("devicePlugin.config.default", ".Values.devicePlugin.config.name")]
