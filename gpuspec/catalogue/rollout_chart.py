"""Rollout findings about what the chart and the upgrade controller really do with the rollout spec (GS507, GS508)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

WAIT_WITHOUT_SELECTOR = Entry(
    id="GS507",
    title="waitForCompletionSeconds waits for nothing",
    severity=Severity.ERROR,
    rationale=(
        "The driver upgrade controller waits for workload pods only when `waitForCompletion.podSelector` is set; "
        "with an empty selector it moves the node on at once and GPU pods are deleted without any wait. A timeout "
        "alone (`rollout.waitForCompletionSeconds`) is therefore a no-op that reads like a wait."
    ),
    doc="""
`rollout.waitForCompletionSeconds` is refused above 0. Use `rollout.waitForCompletion` with the label selector
of the workload pods to wait for and, optionally, a timeout:

```yaml
rollout:
  waitForCompletion:
    podSelector: app=training
    timeoutSeconds: 3600   # 0 = until the pods finish
```

In k8s-operator-libs `pkg/upgrade/common_manager.go` (`ProcessWaitForJobsRequiredNodes`, as vendored by
gpu-operator v26.7.0) a node in state wait-for-jobs-required goes straight to pod deletion (or drain) when
`waitForCompletionSpec.PodSelector == ""`; `pod_manager.go` applies `TimeoutSecond` only to the pods the selector
finds, 0 meaning no timeout.

Failing: `waitForCompletionSeconds: 600`.  Passing: `waitForCompletion: {podSelector: app=training,
timeoutSeconds: 600}`.
""",
    source="NVIDIA/k8s-operator-libs pkg/upgrade/common_manager.go ProcessWaitForJobsRequiredNodes (vendored in "
           "NVIDIA/gpu-operator v26.7.0, k8s-operator-libs v0.0.0-20260629200812-d720f2557494)",
    tags=("rollout", "upgrade"),
)

MAX_UNAVAILABLE_ZERO = Entry(
    id="GS508",
    title="maxUnavailable 0 does not reach the operator",
    severity=Severity.ERROR,
    rationale=(
        "The chart writes `maxUnavailable` with `| default \"25%\"`: 0 is empty to the template, so the "
        "ClusterPolicy (and the chart's NVIDIADriver) get 25%, a quarter of the GPU nodes, while the spec, the "
        "values and the plan say 0. Had 0 arrived, the upgrade controller would upgrade no node at all."
    ),
    doc="""
`rollout.maxUnavailable` is not `0` or `0%`.

`templates/clusterpolicy.yaml` (line 231 at v26.7.0) and `templates/nvidiadriver.yaml` (line 40) write
`{{ .Values.driver.upgradePolicy.maxUnavailable | default "25%" }}`; Helm's `default` replaces 0. A `0%` would
survive the template, but k8s-operator-libs (`common_manager.go`, upgrades available are capped at maxUnavailable)
would then never start an upgrade. To hold driver upgrades, set `rollout.autoUpgrade: false`; to upgrade one node
at a time, `maxUnavailable: 1`.

Failing: `maxUnavailable: 0`.  Passing: `maxUnavailable: 1`.
""",
    source="NVIDIA/gpu-operator deployments/gpu-operator/templates/clusterpolicy.yaml:231 and nvidiadriver.yaml:40 at "
           "v26.7.0; k8s-operator-libs pkg/upgrade/common_manager.go (GetUpgradesAvailable)",
    tags=("rollout", "upgrade"),
)

OPENSHIFT_WITHOUT_CHART_DATA = Entry(
    id="GS510",
    title="OpenShift cluster on a release without chart data",
    severity=Severity.ERROR,
    rationale=(
        "On OpenShift gpuspec writes the ClusterPolicy itself, as the chart's templates would write it for the values "
        "over the chart's values.yaml defaults. That needs the release's packaged chart data (values index and "
        "template intent); without it the ClusterPolicy would lack every setting only the chart's defaults carry, "
        "and the operator would run differently than on a Helm cluster with the same spec."
    ),
    doc="""
An OpenShift cluster (`kubernetes.distribution: openshift`) pins a GPU Operator release for which gpuspec has no
chart-values index (`gpuspec/matrix/data/chart-values/`) or chart-intent data (`gpuspec/matrix/data/chart-intent/`).
`gpuspec render` refuses such a cluster (nothing is written); lint says so first. The message names the releases
that have both.

Failing: an OpenShift cluster with `operator.version: v26.3.0` (no values index).  Passing: `v26.3.3` or `v26.7.0`.
""",
    source="docs/openshift.md; the packaged chart data (scripts/refresh-chart-values, scripts/refresh-chart-intent)",
    tags=("rollout", "openshift"),
)

#: This module's entries, in id order.
ENTRIES: tuple[Entry, ...] = (WAIT_WITHOUT_SELECTOR, MAX_UNAVAILABLE_ZERO, OPENSHIFT_WITHOUT_CHART_DATA)
