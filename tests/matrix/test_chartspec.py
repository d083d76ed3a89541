"""The chart-spec builder (what a chart template writes for values, from chart-intent data) and GS950's comparison."""

from __future__ import annotations

from gpuspec.matrix.chartintent import ChartIntent, FieldSource
from gpuspec.matrix.chartspec import chart_spec, defaults_tree
from gpuspec.matrix.chartvalues import ChartIndex, chart_index
from gpuspec.verify.custom_resource import MISSING, compare

DEPLOY = ".Values.clusterPolicy.deployCR"


def _line(values: str, field: str, *guards: str, default: str | None = None, subtree: bool = False) -> FieldSource:
    return FieldSource(values=values, kind="ClusterPolicy", field=field, template="templates/clusterpolicy.yaml:1",
                       default=default, subtree=subtree, guards=(DEPLOY, *guards))


INTENT = ChartIntent(release="v0.0.1", reference="test", reads={}, fields=(
    _line("driver.enabled", "spec.driver.enabled"),
    _line("driver.image", "spec.driver.image", ".Values.driver.image"),
    _line("driver.upgradePolicy.maxUnavailable", "spec.driver.upgradePolicy.maxUnavailable",
          ".Values.driver.upgradePolicy", default='"25%"'),
    _line("driver.upgradePolicy.gpuPodDeletion.force", "spec.driver.upgradePolicy.podDeletion.force",
          ".Values.driver.upgradePolicy", default="false"),
    _line("validator.version", "spec.validator.version", default=".Chart.AppVersion"),
    _line("daemonsets.tolerations", "spec.daemonsets.tolerations", ".Values.daemonsets.tolerations", subtree=True),
    _line("driver.licensingConfig.nlsEnabled", "spec.driver.licensingConfig.nlsEnabled",
          ".Values.driver.licensingConfig.secretName"),
    FieldSource(values="driver.licensingConfig.other", kind="ClusterPolicy",
                field="spec.driver.licensingConfig.nlsEnabled", template="templates/clusterpolicy.yaml:2",
                guards=(DEPLOY, "not .Values.driver.licensingConfig.secretName")),
))
DEFAULTS = {
    "clusterPolicy": {"deployCR": True},
    "driver": {"enabled": True, "image": "driver", "upgradePolicy": {"maxUnavailable": "25%",
                                                                     "gpuPodDeletion": {"force": False}},
               "licensingConfig": {"secretName": "", "nlsEnabled": True, "other": "else-branch"}},
    "validator": {"version": None},
    "daemonsets": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]},
}


def test_defaults_fill_what_the_values_leave_out_and_values_win() -> None:
    spec = chart_spec({"driver": {"image": "custom"}}, DEFAULTS, INTENT, "v0.0.1").spec
    assert spec["driver"]["enabled"] is True
    assert spec["driver"]["image"] == "custom"
    assert spec["driver"]["upgradePolicy"] == {"maxUnavailable": "25%", "podDeletion": {"force": False}}
    assert spec["daemonsets"]["tolerations"] == DEFAULTS["daemonsets"]["tolerations"]


def test_an_empty_value_takes_the_lines_default_and_app_version() -> None:
    spec = chart_spec({"driver": {"upgradePolicy": {"maxUnavailable": 0}}}, DEFAULTS, INTENT, "v9.9.9").spec
    assert spec["driver"]["upgradePolicy"]["maxUnavailable"] == "25%"  # `| default "25%"` replaces 0
    assert spec["validator"]["version"] == "v9.9.9"  # `| default .Chart.AppVersion`


def test_a_false_condition_leaves_the_line_out_and_the_branch_that_holds_writes() -> None:
    spec = chart_spec({"driver": {"image": ""}}, DEFAULTS, INTENT, "v0.0.1").spec
    assert "image" not in spec["driver"]  # `if .Values.driver.image`
    # secretName empty: the `not secretName` line writes, with its own value
    assert spec["driver"]["licensingConfig"] == {"nlsEnabled": "else-branch"}
    with_secret = chart_spec({"driver": {"licensingConfig": {"secretName": "s"}}}, DEFAULTS, INTENT, "v").spec
    assert with_secret["driver"]["licensingConfig"] == {"nlsEnabled": True}


def test_the_outer_condition_renders_no_object() -> None:
    out = chart_spec({"clusterPolicy": {"deployCR": False}}, DEFAULTS, INTENT, "v0.0.1")
    assert out.rendered is False
    assert out.spec == {}


def test_defaults_tree_rebuilds_the_packaged_index() -> None:
    index = chart_index("v26.7.0")
    assert index is not None
    tree = defaults_tree(index)
    assert tree["driver"]["upgradePolicy"]["drain"]["timeoutSeconds"] == index.keys[
        "driver.upgradePolicy.drain.timeoutSeconds"]
    small = ChartIndex(release="v", keys={"a.b": 1, "a.c": [2], "d": {}})
    assert defaults_tree(small) == {"a": {"b": 1, "c": [2]}, "d": {}}


def test_compare_names_each_differing_path_and_treats_zero_values_alike() -> None:
    chart = {"spec": {"a": {"b": 1, "env": [], "s": ""}, "daemonsets": {"labels": {"helm.sh/chart": "x", "k": "v"}},
                      "n": "5", "on": False}}
    same = {"spec": {"a": {"b": 1}, "daemonsets": {"labels": {"k": "v"}}, "n": 5, "on": False}}
    assert compare(chart, same) == []
    differ = {"spec": {"a": {"b": 2}, "daemonsets": {"labels": {}}, "extra": True}}
    got = [(d.path, d.chart, d.custom) for d in compare(chart, differ)]
    assert got == [("spec.a.b", 1, 2), ("spec.daemonsets", {"labels": {"k": "v"}}, MISSING),
                   ("spec.extra", MISSING, True), ("spec.n", "5", MISSING), ("spec.on", False, MISSING)]
