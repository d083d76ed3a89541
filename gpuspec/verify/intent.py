"""The intent check: every value the rendered values set reaches the chart's ClusterPolicy / NVIDIADriver as set.

``gpuspec.matrix.chartintent`` says which field each values path becomes (data generated from the chart's
templates at the release's tag); this module compares those fields with the objects ``helm template`` produced,
as the API server would store them (CRD defaults applied), and reports GS930 (the object carries something else,
or nothing) and GS931 (no template reads the key).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuspec.catalogue import verify_intent as ids
from gpuspec.findings import Finding
from gpuspec.matrix.chartintent import ChartIntent, Expectation, chart_intent, expected_fields, truthy
from gpuspec.verify.checks import Origin, make_finding
from gpuspec.verify.manifests import Manifest
from gpuspec.verify.schemas import CrdSet

_MISSING = object()


def check_intent(values: Mapping[str, Any], defaults: Mapping[str, Any], manifests: Sequence[Manifest],
                 crds: CrdSet, release: str, origin: Origin, *, subcharts: frozenset[str] = frozenset(),
                 intent: ChartIntent | None = None) -> list[Finding]:
    """GS930/GS931 for one cluster: ``values`` (rendered) against helm's ``manifests`` of chart ``release``.

    ``defaults`` are the chart's values.yaml; ``intent`` replaces the packaged data of ``release`` (tests).
    Releases without packaged data are not checked.
    """
    intent = intent or chart_intent(release)
    if intent is None:
        return []
    expected = expected_fields(values, defaults, intent, skip_roots=subcharts | {"global"})
    findings: list[Finding] = []
    objects = _objects(manifests, crds, {s.kind for s in intent.fields})
    missing_kinds: set[str] = set()
    for expectation in expected.expectations:
        source = expectation.source
        obj = _object_for(objects, source.kind, source.name)
        if obj is None:
            if source.kind not in missing_kinds:
                missing_kinds.add(source.kind)
                findings.append(make_finding(
                    ids.VALUE_NOT_CARRIED,
                    f"{expectation.values_path} = {_show(expectation.value)} is written by {source.template} at "
                    f"{intent.release} into {_label(source.kind, source.name)}, but helm's output has no such object",
                    origin, _doc_path(expectation.values_path)))
            continue
        actual = _get(obj, expectation.path)
        if _carries(actual, expectation.value):
            continue
        findings.append(make_finding(
            ids.VALUE_NOT_CARRIED, _mismatch(expectation, actual, intent.release), origin,
            _doc_path(expectation.values_path), hint=_hint(expectation, actual)))
    for gone in expected.not_rendered:
        findings.append(make_finding(
            ids.VALUE_NOT_CARRIED,
            f"{gone.values_path} = {_show(gone.value)} never reaches {_label(gone.source.kind, gone.source.name)}: "
            f"{gone.source.template} at {intent.release} writes it only when `{gone.guard}` holds, and it does not "
            "with these values", origin, _doc_path(gone.values_path),
            hint="set what the condition needs, or drop the value"))
    for path in expected.unread:
        findings.append(make_finding(
            ids.VALUE_NOT_READ,
            f"values key {path} is read by no template of the GPU Operator chart {intent.release}; helm keeps it "
            "and nothing uses it", origin, _doc_path(path), at_key=True,
            hint="the templates may read it under another name: see the chart's templates at the tag"))
    return findings


def _objects(manifests: Sequence[Manifest], crds: CrdSet, kinds: set[str]) -> list[tuple[str, str, Any]]:
    out = []
    for manifest in manifests:
        if manifest.kind in kinds:
            out.append((manifest.kind, manifest.name, crds.defaulted(manifest.obj)))
    return out


def _object_for(objects: Sequence[tuple[str, str, Any]], kind: str, name: str | None) -> Any:
    return next((obj for k, n, obj in objects if k == kind and (name is None or n == name)), None)


def _get(obj: Any, path: str) -> Any:
    node = obj
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _carries(actual: Any, value: Any) -> bool:
    """True when the stored field means ``value``: equal (numbers and their text alike), or absent for an empty
    value the CRD does not default (Go's zero value)."""
    if actual is _MISSING:
        return not truthy(value)
    return _same(actual, value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float, str)) and isinstance(b, (int, float, str)):
        return a == b or str(a) == str(b)
    return bool(a == b)


def _mismatch(expectation: Expectation, actual: Any, release: str) -> str:
    source = expectation.source
    where = f"{_label(source.kind, source.name)} {expectation.path}"
    what = f"{expectation.values_path} is {_show(expectation.value)}, but {where}"
    line = f"{source.template} at {release}"
    if actual is _MISSING:
        why = (f" (the `if .Values.{source.values}` around it leaves it out)" if source.self_guard in source.guards
               else "")
        return f"{what} is absent: {line} does not write it{why}"
    how = f": `| default {source.default}` replaces {_show(expectation.value)}" if source.default is not None else ""
    return f"{what} is {_show(actual)} ({line}{how})"


def _hint(expectation: Expectation, actual: Any) -> str:
    if expectation.source.default is not None and actual is not _MISSING:
        return (f"the template takes {_show(expectation.value)} for empty and writes its default: choose a value the "
                "template keeps, or refuse this one in the spec")
    return "fix the value at its source in the spec (gpuspec render) so the chart writes what it says"


def _label(kind: str, name: str | None) -> str:
    return f"{kind} {name}" if name else kind


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value).replace("True", "true").replace("False", "false")


def _doc_path(dotted: str) -> tuple[str, ...]:
    return tuple(dotted.split("."))
