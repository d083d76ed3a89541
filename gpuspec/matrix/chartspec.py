"""The ``spec`` the GPU Operator chart's templates write for a values tree, computed from the chart-intent data (pure).

``helm template`` merges the chart's values.yaml under the given values and renders ``templates/clusterpolicy.yaml``
(and, with NVIDIADriver management and ``deployDefaultCR``, ``templates/nvidiadriver.yaml``).  This module does the
same from packaged data: the values index of the release (:mod:`gpuspec.matrix.chartvalues`, the defaults) and its
chart-intent data (:mod:`gpuspec.matrix.chartintent`, which values path each template line writes into which field,
under which ``if`` conditions, with which ``| default``).  A ClusterPolicy built without Helm (OLM on OpenShift) is
built from this answer so that it configures the operator as the chart would.

What the intent data does not describe is written here by name (:data:`INCLUDED`, :data:`LITERALS`); anything else the
templates add (``else`` branches writing empty lists, ``| quote``) is what ``gpuspec verify`` compares against the
real chart (GS950).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuspec.matrix.chartintent import ChartIntent, evaluate, lookup, merge_values, truthy
from gpuspec.matrix.chartvalues import ChartIndex

#: Values written through a template ``include`` (the operand labels helper of ``_helpers.tpl``), which the intent
#: data records as a read, not as a field: (kind, values path) -> field.  The helper also adds the chart's
#: ``helm.sh/chart`` and ``app.kubernetes.io/managed-by`` labels, which are Helm's bookkeeping (see
#: :data:`HELM_LABELS`).
INCLUDED: Mapping[tuple[str, str], str] = {("ClusterPolicy", "daemonsets.labels"): "spec.daemonsets.labels"}
#: Labels the chart's operand-labels helper writes into ``spec.daemonsets.labels`` that name Helm and the chart
#: package, not a setting: an object not installed by Helm does not carry them.
HELM_LABELS = frozenset({"helm.sh/chart", "app.kubernetes.io/managed-by"})
#: Constant fields of the templates (no values path): kind -> field -> value.
LITERALS: Mapping[str, Mapping[str, Any]] = {"NVIDIADriver": {"spec.default": True}}
#: The ``| default`` that names the chart's appVersion.
APP_VERSION = ".Chart.AppVersion"


def defaults_tree(index: ChartIndex) -> dict[str, Any]:
    """The chart's values.yaml defaults as a nested map (rebuilt from the flat index)."""
    tree: dict[str, Any] = {}
    for path, value in index.keys.items():
        *parents, leaf = path.split(".")
        node = tree
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
    return tree


@dataclass
class ChartSpec:
    """What the chart's template of one kind writes for a values tree."""

    kind: str
    #: Whether the template renders the object at all (its outer ``if`` holds).
    rendered: bool = False
    #: The object's ``spec``.
    spec: dict[str, Any] = field(default_factory=dict)
    #: Template conditions the evaluator cannot decide (the line is left out); verify compares with the real chart.
    undecided: list[str] = field(default_factory=list)


def chart_spec(values: Mapping[str, Any], defaults: Mapping[str, Any], intent: ChartIntent, app_version: str,
               kind: str = "ClusterPolicy") -> ChartSpec:
    """The ``spec`` the chart writes into its ``kind`` object for ``values`` over ``defaults``.

    Every template line of ``kind`` in the intent data is taken in template order: it writes when all its ``if``
    conditions hold for the merged values (the line's own test of the value included), the value being the merged
    one or, when that is empty, the line's ``| default`` (``.Chart.AppVersion`` is ``app_version``).  A field that
    an earlier line wrote (an ``if``/``else`` pair) is not overwritten.  Nulls (keys with no value) are left out.
    """
    merged = merge_values(defaults, values)
    out = ChartSpec(kind)
    outer: set[str] | None = None
    for source in intent.fields:
        if source.kind != kind:
            continue
        outer = set(source.guards) if outer is None else outer & set(source.guards)
        held = True
        for guard in source.guards:
            state = evaluate(guard, merged)
            if state is None:
                out.undecided.append(f"{source.template}: {guard}")
            if not state:
                held = False
                break
        if not held:
            continue
        value = lookup(merged, source.values)
        if source.default is not None and not truthy(value):
            value = app_version if source.default == APP_VERSION else yaml.safe_load(source.default)
        _put(out.spec, _spec_path(source.field), value)
    # The conditions every line of the kind shares are the template's outer ``if`` (deployCR, deployDefaultCR).
    out.rendered = outer is not None and all(evaluate(g, merged) for g in outer)
    if not out.rendered:
        out.spec = {}
        return out
    for (included_kind, path), target in INCLUDED.items():
        value = lookup(merged, path)
        if included_kind == kind and truthy(value):
            _put(out.spec, _spec_path(target), value)
    for target, value in LITERALS.get(kind, {}).items():
        _put(out.spec, _spec_path(target), value)
    return out


def _spec_path(field_path: str) -> list[str]:
    parts = field_path.split(".")
    return parts[1:] if parts[0] == "spec" else parts


def _put(tree: dict[str, Any], parts: list[str], value: Any) -> None:
    if value is None:
        return
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node.setdefault(parts[-1], value)
