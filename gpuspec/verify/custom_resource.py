"""GS950: a ClusterPolicy (or default NVIDIADriver) the overlay carries as a custom resource says what the chart says.

On OpenShift OLM runs the operator and gpuspec writes the ClusterPolicy itself (``gpuspec.render.openshift``).
``verify`` templates the chart with the same values; this module compares the chart's object with the overlay's,
field by field, both as the API server stores them (CRD defaults applied), and names every path that differs.

Compared as the operator reads them: a null, an empty string, list or map and an absent field are the same (Go's
zero value; the CRDs default none of them here), numbers equal their text, and the labels the chart's operand-labels
helper adds for Helm (``helm.sh/chart``, ``app.kubernetes.io/managed-by``) are not settings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuspec.catalogue import verify_openshift as ids
from gpuspec.findings import Finding
from gpuspec.matrix.chartspec import HELM_LABELS
from gpuspec.verify.checks import Origin, make_finding
from gpuspec.verify.manifests import Manifest
from gpuspec.verify.schemas import CrdSet

#: Kinds compared, with the name of the chart's object (None: the only one of its kind).
COMPARED: Mapping[str, str | None] = {"ClusterPolicy": None, "NVIDIADriver": "default"}
#: Where the chart writes labels for Helm into an object's ``spec``.
LABEL_PATHS = frozenset({("daemonsets", "labels")})


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """One ``spec`` path where the custom resource and the chart's object differ (``MISSING`` when absent)."""

    path: str
    chart: Any
    custom: Any


MISSING: Any = type("Missing", (), {"__repr__": lambda self: "(absent)"})()


def normalized(spec: Any, at: tuple[str, ...] = ()) -> Any:
    """``spec`` with zero values (null, "", [], {}) and Helm's bookkeeping labels left out."""
    if isinstance(spec, Mapping):
        out = {}
        for key, value in spec.items():
            if at in LABEL_PATHS and key in HELM_LABELS:
                continue
            inner = normalized(value, (*at, str(key)))
            if not _zero(inner):
                out[str(key)] = inner
        return out
    if isinstance(spec, list):
        return [normalized(item, at) for item in spec]
    return spec


def _zero(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def differences(chart: Any, custom: Any, prefix: str = "spec") -> Iterator[FieldDifference]:
    """Every path below ``prefix`` where the normalized ``chart`` and ``custom`` values differ (maps key by key)."""
    if isinstance(chart, Mapping) and isinstance(custom, Mapping):
        for key in sorted({*chart, *custom}):
            yield from differences(chart.get(key, MISSING), custom.get(key, MISSING), f"{prefix}.{key}")
        return
    if not _same(chart, custom):
        yield FieldDifference(prefix, chart, custom)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return not any(True for _ in differences(a, b))
    if isinstance(a, (int, float, str)) and isinstance(b, (int, float, str)):
        return a == b or str(a) == str(b)
    return bool(a == b)


def _name(obj: Mapping[str, Any]) -> Any:
    """``metadata.name``, or None when a hand-edited object's metadata is not a mapping (its schema check says so)."""
    meta = obj.get("metadata")
    return meta.get("name") if isinstance(meta, Mapping) else None


def find(objects: Iterable[Mapping[str, Any]], kind: str, name: str | None) -> Mapping[str, Any] | None:
    """The first object of ``kind`` (named ``name`` unless None)."""
    return next((o for o in objects if o.get("kind") == kind and (name is None or _name(o) == name)), None)


def compare(chart_obj: Mapping[str, Any], custom_obj: Mapping[str, Any]) -> list[FieldDifference]:
    """The ``spec`` paths where ``custom_obj`` differs from ``chart_obj`` (both already CRD-defaulted)."""
    return list(differences(normalized(chart_obj.get("spec") or {}), normalized(custom_obj.get("spec") or {})))


def check_custom_resources(templated: Sequence[Manifest], overlay: Sequence[tuple[dict[str, Any], Origin]],
                           crds: CrdSet, chart_label: str) -> list[Finding]:
    """GS950 for one cluster: the overlay's ClusterPolicy / default NVIDIADriver against helm's, path by path.

    ``templated`` is ``helm template``'s output for the cluster's values, ``chart_label`` names the chart in messages.
    Nothing is compared when helm rendered nothing (its own finding says why).
    """
    if not templated:
        return []
    chart_objects = [m.obj for m in templated]
    findings: list[Finding] = []
    for kind, chart_name in COMPARED.items():
        located = next(((obj, origin) for obj, origin in overlay if obj.get("kind") == kind
                        and (chart_name is None or _name(obj) == chart_name)), None)
        if located is None:
            continue
        custom, origin = located
        name = _name(custom)
        chart_obj = find(chart_objects, kind, chart_name)
        if chart_obj is None:
            findings.append(make_finding(
                ids.CUSTOM_RESOURCE_DIFFERS,
                f"{kind} {name}: the chart ({chart_label}) renders no {kind}"
                f"{f' {chart_name}' if chart_name else ''} for these values, but the overlay carries one",
                origin, hint="render again with `gpuspec render`, or drop the object"))
            continue
        for diff in compare(crds.defaulted(chart_obj), crds.defaulted(custom)):
            findings.append(make_finding(
                ids.CUSTOM_RESOURCE_DIFFERS,
                f"{kind} {name}: {diff.path} is {_show(diff.custom)}; the chart ({chart_label}) writes "
                f"{_show(diff.chart)} for the same values",
                origin, _present(custom, diff.path),
                hint="render again with `gpuspec render` (the custom resource is built from the chart's defaults "
                     "and the values); do not edit it by hand"))
    return findings


def _show(value: Any) -> str:
    if value is MISSING:
        return "absent"
    return json.dumps(value, sort_keys=True, default=str)


def _present(obj: Mapping[str, Any], dotted: str) -> tuple[str | int, ...]:
    """The longest prefix of ``dotted`` that ``obj`` has (an absent field is reported at its parent)."""
    found: list[str | int] = []
    node: Any = obj
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            break
        found.append(part)
        node = node[part]
    return tuple(found)
