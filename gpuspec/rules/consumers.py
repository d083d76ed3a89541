"""GS136: strings of the spec that reach a program which parses them, checked as that program parses them.

The driver upgrade controller's pod selectors (``rollout.drain.podSelector``, ``rollout.waitForCompletion.
podSelector``: a label selector the API server parses for every pod list), the maintenance window's time zone
(the IANA tz database), and every string an override writes into the chart's values or a pool's NVIDIADriver,
by the consumer ``gpuspec/kube/data/rendered-fields.yaml`` names for that field.  A value the consumer refuses
validates as a string in gpuspec's schema, renders verbatim and fails only at upgrade time or on sync.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuspec.catalogue.validate import CONSUMER_REFUSES
from gpuspec.findings import DocPath, Finding
from gpuspec.kube.consumers import consumers, field_key, rule_for, string_fields
from gpuspec.kube.formats import time_zone
from gpuspec.kube.selectors import label_selector
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import ValueOverride

_SELECTOR_CONSUMER = ("the driver upgrade controller lists pods with it (k8s-operator-libs pkg/upgrade); the API "
                      "server parses it with apimachinery labels.Parse")


def _selector(cluster: Cluster, value: str, path: DocPath) -> Iterator[Finding]:
    for problem in label_selector(value):
        yield CONSUMER_REFUSES.finding(
            f"cluster {cluster.name}: {'.'.join(map(str, path))} {value!r} is not a label selector: {problem} "
            f"({_SELECTOR_CONSUMER}); the upgrade would stop with nodes cordoned",
            cluster.source_file, path,
            hint="write a label selector such as app=training or 'tier in (batch, etl),!canary'")


def _rollout(cluster: Cluster) -> Iterator[Finding]:
    rollout = cluster.rollout
    if rollout.drain is not None and rollout.drain.pod_selector:
        yield from _selector(cluster, rollout.drain.pod_selector, ("rollout", "drain", "podSelector"))
    if rollout.wait_for_completion is not None:
        yield from _selector(cluster, rollout.wait_for_completion.pod_selector,
                             ("rollout", "waitForCompletion", "podSelector"))
    if rollout.window is not None:
        for problem in time_zone(rollout.window.time_zone):
            yield CONSUMER_REFUSES.finding(
                f"cluster {cluster.name}: rollout.window.timeZone: {problem}; gpuspec cannot place the window",
                cluster.source_file, ("rollout", "window", "timeZone"),
                hint="use a name of the IANA tz database, e.g. Europe/Berlin or UTC")


def _overrides(cluster: Cluster, overrides: list[ValueOverride], doc: str, prefix: tuple[str, ...],
               where: DocPath) -> Iterator[Finding]:
    for index, override in enumerate(overrides):
        base = (*prefix, *override.path.split("."))
        value: Any = override.value
        for sub, text in string_fields(value):
            rule = rule_for(field_key(doc, (*base, *sub)))
            if rule is None or rule.check is None:
                continue
            problems = rule.run(text, "", "")
            if problems:
                consumer = consumers().get(rule.check)
                source = f" [{consumer.source}]" if consumer is not None else ""
                dotted = ".".join(str(p) for p in (*base[len(prefix):], *sub))
                yield CONSUMER_REFUSES.finding(
                    f"cluster {cluster.name}: override of {dotted} = {text!r}: {problems[0]}; {rule.consumer} "
                    f"reads it and refuses it{source}",
                    cluster.source_file, (*where, index, "value", *sub),
                    hint="write the value in the form its consumer reads (the chart's values.yaml shows one)")


def consumer_findings(fleet: Fleet) -> list[Finding]:
    """GS136 for every cluster: spec strings and override values their consumer cannot parse."""
    findings: list[Finding] = []
    for cluster in fleet.clusters:
        findings += _rollout(cluster)
        findings += _overrides(cluster, cluster.overrides, "gpu-operator.values.yaml", (), ("overrides",))
        for position, pool in enumerate(cluster.pools):
            findings += _overrides(cluster, pool.driver_overrides, "NVIDIADriver", ("spec",),
                                   ("pools", position, "driverOverrides"))
    return findings
