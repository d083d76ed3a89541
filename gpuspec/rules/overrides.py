"""Checks of deliberate deviations (GS130-GS135): override paths and values against the pinned chart.

A cluster's ``overrides`` are Helm values of the GPU Operator chart it pins; a pool's
``driverOverrides`` are fields of its NVIDIADriver ``spec``.  Paths must exist in that release
(with a did-you-mean), must not touch what gpuspec renders from spec fields (the message names the
field), and values must have the chart default's type.  Findings point at the override's ``path``
or ``value`` key, so they carry the exact file:line:column.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from gpuspec.catalogue.validate import (
    OVERRIDE_MANAGED_PATH,
    OVERRIDE_NO_NVIDIADRIVER,
    OVERRIDE_REPEATED_PATH,
    OVERRIDE_UNKNOWN_PATH,
    OVERRIDE_UNVERIFIED,
    OVERRIDE_WRONG_TYPE,
)
from gpuspec.errors import GpuspecError
from gpuspec.findings import DocPath, Finding
from gpuspec.matrix.chartvalues import ChartIndex, chart_index, indexed_releases, same_type, type_name
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import ValueOverride
from gpuspec.model.resolve import operator_version
from gpuspec.render.context import ClusterContext, cluster_context
from gpuspec.render.deviations import (
    MANAGED_DRIVER_FIELDS,
    driver_field_type,
    driver_fields,
    managed_by,
    managed_values_paths,
)
from gpuspec.render.facts import ReleaseFacts, release_facts
from gpuspec.render.values import helm_values


def _overlapping(overrides: list[ValueOverride], file: str, where: DocPath) -> Iterator[Finding]:
    seen: list[tuple[int, str]] = []
    for index, override in enumerate(overrides):
        path = override.path
        for other_index, other in seen:
            if path == other or path.startswith(other + ".") or other.startswith(path + "."):
                yield OVERRIDE_REPEATED_PATH.finding(
                    f"override of {path!r} overlaps the override of {other!r} "
                    f"({where[-1]}[{other_index}])",
                    file, (*where, index, "path"), hint="merge them into one override")
                break
        seen.append((index, path))


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _quote_hint(default: Any, value: Any) -> str | None:
    if isinstance(default, str) and isinstance(value, int | float) and not isinstance(value, bool):
        return f'quote it: "{value}"'
    return None


def _check_value(index: ChartIndex, path: str, value: Any, file: str, at: DocPath) -> Iterator[Finding]:
    """Type of ``value`` against the chart default at ``path``; maps key by key."""
    info = index.lookup(path)
    if not info.known:
        yield from _nested_unknown(index, path, file, at)
        return
    if not info.typed:
        return
    default = info.default
    if not same_type(default, value):
        shown = repr(default) if not isinstance(default, Mapping | list) else type_name(default)
        yield OVERRIDE_WRONG_TYPE.finding(
            f"override of {path!r} is {_a(type_name(value))}, but the chart default ({index.release}) is "
            f"{_a(type_name(default))}: {shown}", file, at, hint=_quote_hint(default, value))
        return
    if info.kind == "map" and isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _check_value(index, f"{path}.{key}", inner, file, (*at, str(key)))


def _nested_unknown(index: ChartIndex, path: str, file: str, at: DocPath) -> Iterator[Finding]:
    for finding in _unknown(index, path, file, at):
        yield OVERRIDE_UNKNOWN_PATH.finding(finding.message, file, at, hint=finding.hint, at_key=True)


def _unknown(index: ChartIndex, path: str, file: str, at: DocPath) -> Iterator[Finding]:
    info = index.lookup(path)
    if info.kind == "in-list":
        message = f"{info.known_parent!r} is a list in the chart ({index.release}); {path!r} reaches into it"
        hint = f"override the whole list: path {info.known_parent}"
    elif info.kind == "in-scalar":
        message = (f"{info.known_parent!r} is a {type_name(info.default)} in the chart ({index.release}), "
                   f"it has no key {path[len(info.known_parent) + 1:]!r}")
        hint = f"override {info.known_parent} itself"
    else:
        message = f"{path!r} is not a values key of the GPU Operator chart {index.release}"
        hint = f"did you mean {info.suggestion!r}?" if info.suggestion else (
            f"keys under {info.known_parent or 'the top level'}: "
            f"{', '.join(sorted(index.children(info.known_parent))[:12])}")
    yield OVERRIDE_UNKNOWN_PATH.finding(message, file, at, hint=hint)


def _context(fleet: Fleet, cluster: Cluster) -> tuple[ReleaseFacts, ClusterContext | None] | None:
    version = operator_version(fleet, cluster)
    if version is None:
        return None
    try:
        facts = release_facts(version)
    except GpuspecError:
        return None  # the support-matrix checks report the unknown release
    try:
        return facts, cluster_context(fleet, cluster)
    except GpuspecError:
        return facts, None


def _cluster_overrides(cluster: Cluster, facts: ReleaseFacts, ctx: ClusterContext | None) -> Iterator[Finding]:
    file = cluster.source_file
    yield from _overlapping(cluster.overrides, file, ("overrides",))
    rendered = helm_values(ctx) if ctx is not None else None
    managed = managed_values_paths(facts)
    index = chart_index(facts.tag)
    if index is None:
        yield OVERRIDE_UNVERIFIED.finding(
            f"gpuspec has no chart values index for GPU Operator {facts.tag}; the paths and types of "
            f"{len(cluster.overrides)} override(s) are not verified", file, ("overrides",), at_key=True,
            hint=f"indexed releases: {', '.join(indexed_releases())}; or check with `gpuspec verify`")
    for i, override in enumerate(cluster.overrides):
        field = managed_by(override.path, managed, rendered)
        if field is not None:
            yield OVERRIDE_MANAGED_PATH.finding(
                f"{override.path!r} is managed by gpuspec: set {field}", file, ("overrides", i, "path"),
                hint="overrides are for chart values the spec does not model")
            continue
        if index is None:
            continue
        info = index.lookup(override.path)
        if not info.known:
            yield from _unknown(index, override.path, file, ("overrides", i, "path"))
            continue
        yield from _check_value(index, override.path, override.value, file, ("overrides", i, "value"))


def _pool_overrides(cluster: Cluster, facts: ReleaseFacts, ctx: ClusterContext | None) -> Iterator[Finding]:
    file = cluster.source_file
    has_cr = {d.pool.name for d in ctx.pool_drivers} if ctx is not None else set()
    fields = driver_fields(facts.version)
    for p, pool in enumerate(cluster.pools):
        if not pool.driver_overrides:
            continue
        where: DocPath = ("pools", p, "driverOverrides")
        if ctx is not None and pool.name not in has_cr:
            why = ("the operator does not manage its driver" if ctx.driver_mode != "none" else
                   "no pool's driver is managed by the operator")
            if ctx.driver_mode == "clusterpolicy":
                why = "the cluster's pools share one driver configuration (ClusterPolicy)"
            elif ctx.driver_mode == "nvidiadriver" and any(d.pool is pool for d in ctx.drivers):
                why = "it runs the default NVIDIADriver, which the chart renders from the driver.* values"
            yield OVERRIDE_NO_NVIDIADRIVER.finding(
                f"pool {pool.name!r} has no NVIDIADriver: {why}", file, where, at_key=True,
                hint="set the value as a cluster override of the chart's driver.* values instead")
            continue
        yield from _overlapping(pool.driver_overrides, file, where)
        for i, override in enumerate(pool.driver_overrides):
            top = override.path.split(".", 1)[0]
            if top in MANAGED_DRIVER_FIELDS:
                yield OVERRIDE_MANAGED_PATH.finding(
                    f"NVIDIADriver spec.{top} is managed by gpuspec: set {MANAGED_DRIVER_FIELDS[top]}",
                    file, (*where, i, "path"),
                    hint="driverOverrides are for NVIDIADriver fields the spec does not model")
                continue
            field = fields.get(top)
            if field is None:
                close = difflib.get_close_matches(top, sorted(fields), n=1, cutoff=0.6)
                yield OVERRIDE_UNKNOWN_PATH.finding(
                    f"{top!r} is not a spec field of NVIDIADriver in GPU Operator {facts.tag}", file,
                    (*where, i, "path"),
                    hint=f"did you mean {close[0]!r}?" if close else f"fields: {', '.join(sorted(fields))}")
                continue
            want = driver_field_type(field)
            if "." not in override.path and want is not None and type_name(override.value) != want:
                yield OVERRIDE_WRONG_TYPE.finding(
                    f"NVIDIADriver spec.{top} takes {_a(want)} ({field.type}), the override is "
                    f"{_a(type_name(override.value))}", file, (*where, i, "value"))


def override_findings(fleet: Fleet) -> list[Finding]:
    """GS130-GS135 for every cluster that has overrides (clusters without any cost nothing)."""
    findings: list[Finding] = []
    for cluster in fleet.clusters:
        if not cluster.overrides and not any(p.driver_overrides for p in cluster.pools):
            continue
        resolved = _context(fleet, cluster)
        if resolved is None:
            continue
        facts, ctx = resolved
        if cluster.overrides:
            findings.extend(_cluster_overrides(cluster, facts, ctx))
        findings.extend(_pool_overrides(cluster, facts, ctx))
    return findings
