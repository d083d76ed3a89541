"""Findings of `gpuspec verify`'s intent check (GS930, GS931): the chart's objects carry what the values say."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

VALUE_NOT_CARRIED = Entry(
    id="GS930",
    title="chart object does not carry a value the values set",
    severity=Severity.ERROR,
    rationale=(
        "A value gpuspec writes into the Helm values must reach the ClusterPolicy or NVIDIADriver field the chart "
        "writes it to, unchanged: a `| default` in the template replaces a value it takes for empty (0, false, \"\"), "
        "an `if` leaves the field out, another condition leaves the whole block out. The operator then acts on "
        "something the values, the plan and the handover do not say."
    ),
    doc="""
For every leaf of the rendered values, verify looks up the template lines that write it (packaged data, generated
from `templates/clusterpolicy.yaml` and `templates/nvidiadriver.yaml` of the chart at the release's tag by
`scripts/refresh-chart-intent`) and compares the field of `helm template`'s object, as the API server stores it
(CRD defaults applied), with the value. The message names the template line at the tag.

Failing: `driver.upgradePolicy.maxUnavailable: 0` -- the ClusterPolicy says `25%`, because
`templates/clusterpolicy.yaml` writes `{{ .Values.driver.upgradePolicy.maxUnavailable | default "25%" }}`.
Passing: `maxUnavailable: 25%`, or any value the template keeps.
""",
    source="NVIDIA/gpu-operator deployments/gpu-operator/templates/clusterpolicy.yaml and nvidiadriver.yaml at each "
           "release tag (lines named in the finding)",
)

VALUE_NOT_READ = Entry(
    id="GS931",
    title="values key no template of the chart reads",
    severity=Severity.ERROR,
    rationale=(
        "A values key that is in the chart's values.yaml but read by none of its templates (a key the templates "
        "renamed, or one kept only for documentation) has no effect: the setting is silently lost."
    ),
    doc="""
Every values key gpuspec sets (outside subcharts) must be read by some template of the chart at the release's tag
(`.Values.<path>`, an ancestor of it through `toYaml`, or a key below it) or by a dependency condition of
Chart.yaml. GS903 catches keys values.yaml does not know; this catches keys it knows and no template uses.

Failing: `driver.upgradePolicy.podDeletion.force` -- the templates read `driver.upgradePolicy.gpuPodDeletion`.
Passing: `driver.upgradePolicy.gpuPodDeletion.force`.
""",
    source="NVIDIA/gpu-operator deployments/gpu-operator/templates/ at each release tag",
)

#: This module's entries, in id order.
ENTRIES: tuple[Entry, ...] = (VALUE_NOT_CARRIED, VALUE_NOT_READ)
