"""Rollout rules about what the chart and the upgrade controller do with the spec (GS507, GS508, GS510)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import rollout_chart as cat
from gpuspec.matrix import query
from gpuspec.matrix.chartintent import chart_intent
from gpuspec.matrix.chartvalues import chart_index, indexed_releases
from gpuspec.model.cluster_specs import Distribution
from gpuspec.model.resolve import operator_version
from gpuspec.rules.base import Problem, Rule, RuleContext

MAX_UNAVAILABLE_VALUES = "driver.upgradePolicy.maxUnavailable"


class WaitWithoutSelector(Rule):
    """``rollout.waitForCompletionSeconds`` above 0: a timeout without a pod selector waits for nothing."""

    entry = cat.WAIT_WITHOUT_SELECTOR
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster that sets waitForCompletionSeconds above 0."""
        for cluster in ctx.fleet.clusters:
            seconds = cluster.rollout.wait_for_completion_seconds
            if seconds <= 0:
                continue
            also = (" (and waitForCompletion is set too)" if cluster.rollout.wait_for_completion is not None else "")
            yield Problem(
                f"waitForCompletionSeconds {seconds} has no pod selector: the upgrade controller does not wait and "
                f"deletes the node's GPU pods at once{also}",
                cluster.source_file, ("rollout", "waitForCompletionSeconds"),
                hint="use rollout.waitForCompletion: {podSelector: <label selector of the jobs>, timeoutSeconds: "
                     f"{seconds}}} and remove waitForCompletionSeconds",
            )


class MaxUnavailableZero(Rule):
    """``rollout.maxUnavailable`` 0 (or ``0%``): the chart writes its default, and 0 would stall every upgrade."""

    entry = cat.MAX_UNAVAILABLE_ZERO
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster whose maxUnavailable is 0 or 0%, naming the chart lines of its release."""
        for cluster in ctx.fleet.clusters:
            value = cluster.rollout.max_unavailable
            if not (value == 0 or (isinstance(value, str) and int(value.rstrip("%")) == 0)):
                continue
            release = operator_version(ctx.fleet, cluster)
            intent = chart_intent(release) if release else None
            sources = intent.sources_of(MAX_UNAVAILABLE_VALUES) if intent else []
            lines = ", ".join(f"{s.template} (`| default {s.default}`)" for s in sources if s.default) or \
                "templates/clusterpolicy.yaml (`| default \"25%\"`)"
            if value == 0:
                message = (f"maxUnavailable 0 reaches the ClusterPolicy as 25%: {lines} at {release or 'the release'} "
                           "replace 0 with the default")
            else:
                message = (f"maxUnavailable {value} would let no node upgrade: the upgrade controller caps the nodes "
                           "it upgrades at maxUnavailable")
            yield Problem(message, cluster.source_file, ("rollout", "maxUnavailable"),
                          hint="to hold driver upgrades set rollout.autoUpgrade: false; to upgrade one node at a "
                               "time, maxUnavailable: 1")


class OpenShiftWithoutChartData(Rule):
    """An OpenShift cluster on a release whose chart values index or chart intent data gpuspec lacks."""

    entry = cat.OPENSHIFT_WITHOUT_CHART_DATA
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per OpenShift cluster whose release render cannot build the ClusterPolicy for."""
        for cluster in ctx.fleet.clusters:
            if cluster.kubernetes.distribution is not Distribution.OPENSHIFT:
                continue
            release = operator_version(ctx.fleet, cluster)
            if release is None or query.release(release) is None:
                continue  # an unknown release is GS201's
            missing = [name for name, data in (("chart-values index", chart_index(release)),
                                               ("chart-intent data", chart_intent(release))) if data is None]
            if not missing:
                continue
            have = ", ".join(t for t in indexed_releases() if chart_intent(t) is not None)
            path = ("operator", "version") if cluster.operator.version else ("operator", "channel")
            yield Problem(
                f"GPU Operator {release} has no {' or '.join(missing)} in gpuspec: on OpenShift render cannot build "
                "the ClusterPolicy the chart would write for these values",
                cluster.source_file, path, hint=f"pin a release gpuspec has chart data for: {have}")


RULES: list[Rule] = [WaitWithoutSelector(), MaxUnavailableZero(), OpenShiftWithoutChartData()]
