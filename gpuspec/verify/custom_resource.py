"""GS950: a ClusterPolicy (or default NVIDIADriver) the overlay carries as a custom resource says what the chart says.

On OpenShift OLM runs the operator and gpuspec writes the ClusterPolicy itself (``gpuspec.render.openshift``).
``verify`` templates the chart with the same values; this module compares the chart's object with the overlay's,
field by field, both as the API server stores them (CRD defaults applied), and names every path that differs.

Compared as the operator reads them: a null, an empty string, list or map and an absent field are the same (Go's
zero value; the CRDs default none of them here), numbers equal their text, and the labels the chart's operand-labels
helper adds for Helm (``helm.sh/chart``, ``app.kubernetes.io/managed-by``) are not settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuspec.matrix.chartspec import HELM_LABELS

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


def find(objects: Iterable[Mapping[str, Any]], kind: str, name: str | None) -> Mapping[str, Any] | None:
    """The first object of ``kind`` (named ``name`` unless None)."""
    return next((o for o in objects if o.get("kind") == kind
                 and (name is None or (o.get("metadata") or {}).get("name") == name)), None)


def compare(chart_obj: Mapping[str, Any], custom_obj: Mapping[str, Any]) -> list[FieldDifference]:
    """The ``spec`` paths where ``custom_obj`` differs from ``chart_obj`` (both already CRD-defaulted)."""
    return list(differences(normalized(chart_obj.get("spec") or {}), normalized(custom_obj.get("spec") or {})))


def compared_pairs(chart_objects: Sequence[Mapping[str, Any]], custom_objects: Sequence[Mapping[str, Any]],
                   ) -> Iterator[tuple[str, Mapping[str, Any] | None, Mapping[str, Any]]]:
    """``(kind, chart object or None, custom resource)`` for every compared kind the overlay carries."""
    for kind, chart_name in COMPARED.items():
        custom = find(custom_objects, kind, chart_name)
        if custom is not None:
            yield kind, find(chart_objects, kind, chart_name), custom
