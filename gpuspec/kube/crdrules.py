"""Evaluate a CRD's ``x-kubernetes-validations`` rules on one custom resource, as on create (no ``oldSelf``).

The API server defaults the object, then runs each rule with ``self`` bound to the value of the schema node
that carries it, for every value present (every list item, every map value); transition rules (naming
``oldSelf``) are skipped here (:mod:`gpuspec.kube.immutable` runs them on updates).  Source: apiextensions-apiserver
``pkg/apiserver/schema/cel/validation.go`` (Kubernetes v1.35).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.kube import cel

#: RuleOutcome.status values.
FAILED = "failed"
NOT_VERIFIED = "not-verified"


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    """A rule that failed (``status`` FAILED) or could not be evaluated (NOT_VERIFIED) at ``path``."""

    status: str
    path: tuple[str | int, ...]
    rule: str
    message: str


def evaluate_rules(obj: Any, schema: Mapping[str, Any]) -> list[RuleOutcome]:
    """Every non-transition rule of ``schema`` (an ``openAPIV3Schema``) that fails or is not verified on ``obj``."""
    return list(_walk(obj, schema, ()))


def _defaulted(value: Any, schema: Mapping[str, Any]) -> Any:
    if not isinstance(value, Mapping):
        return value
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return value
    missing = {k: s["default"] for k, s in properties.items()
               if k not in value and isinstance(s, Mapping) and "default" in s}
    return {**value, **copy.deepcopy(missing)} if missing else value


def _walk(value: Any, schema: Mapping[str, Any], path: tuple[str | int, ...]) -> Iterator[RuleOutcome]:
    value = _defaulted(value, schema)
    for entry in schema.get("x-kubernetes-validations") or []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("rule"), str):
            continue
        text = entry["rule"]
        message = str(entry.get("message") or f"failed rule: {text}")
        try:
            rule = cel.parse(text)
            if rule.transition:
                continue
            if not rule.evaluate(value):
                yield RuleOutcome(FAILED, path, text, message)
        except (cel.Unsupported, cel.EvalError) as exc:
            yield RuleOutcome(NOT_VERIFIED, path, text, str(exc))
    if isinstance(value, Mapping):
        properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        assert isinstance(properties, Mapping)
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            child = properties.get(key) if key in properties else (extra if isinstance(extra, Mapping) else None)
            if isinstance(child, Mapping):
                yield from _walk(sub, child, (*path, str(key)))
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            yield from _walk(item, schema["items"], (*path, index))
