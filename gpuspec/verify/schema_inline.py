"""Resolve the ``$ref``\\ s of a Kubernetes JSON schema into the schema itself, once per kind.

The strict schemas that ``kubernetes-validate`` ships point into one shared ``_definitions.json``
(``PodSpec``, ``ObjectMeta``, …), and jsonschema looks every such reference up again at every use,
about half of validating an acceptance Job.  :func:`inline_refs` gives the same schema with each
reference replaced by the definition it names: a definition used twice is one shared dict, and a
recursive one (``JSONSchemaProps``) becomes a cycle of dicts, which validation follows as far as the
object goes.  Validation results and messages are unchanged (jsonschema reports errors under
``$ref`` and ``allOf`` without wrapping them); only the schema paths of errors differ, which gpuspec
does not report.

Only references jsonschema would resolve into the definitions document are inlined.  Anything else
(another document, a JSON pointer that needs unescaping, a name not defined, a nested ``$id`` or a
``$dynamicRef``) makes the result
``None``, and the caller validates with references as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from jsonschema import Draft202012Validator

#: Keywords whose value maps names to subschemas, holds one subschema, or a list of them (draft 2020-12,
#: plus the draft 4-7 spellings the Kubernetes schemas never use but a future one might).
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_ONE = frozenset({"additionalProperties", "items", "not", "contains", "propertyNames", "if", "then",
                         "else", "unevaluatedProperties", "unevaluatedItems", "additionalItems"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
#: Keywords jsonschema evaluates; beside a ``$ref`` anything else (``description``, ``x-kubernetes-*``) is
#: an annotation and may be dropped.
_EVALUATED = frozenset(Draft202012Validator.VALIDATORS)


class _NotInlinable(Exception):
    """A reference that does not point into the definitions document by a plain name."""


def inline_refs(schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` with every ``$ref`` into ``definitions`` (a ``$defs`` document) replaced by its target.

    ``None`` when some reference cannot be resolved that way, so that the caller keeps references.
    The inputs are not changed.
    """
    defs_id = definitions.get("$id")
    defs = definitions.get("$defs")
    base = schema.get("$id")
    if not isinstance(defs_id, str) or not isinstance(defs, Mapping) or not isinstance(base, str):
        return None
    prefix = f"{defs_id}#/$defs/"
    resolved: dict[str, dict[str, Any]] = {}

    def target(ref: object, scope: str) -> dict[str, Any]:
        if not isinstance(ref, str):
            raise _NotInlinable
        full = urljoin(scope, ref)
        name = full[len(prefix):] if full.startswith(prefix) else ""
        if not name or any(c in name for c in "~%/") or not isinstance(defs.get(name), Mapping):
            raise _NotInlinable
        if name not in resolved:
            resolved[name] = out = {}  # registered before its body, so recursion closes the cycle
            out.update(node(defs[name], defs_id))
        return resolved[name]

    def node(value: Any, scope: str) -> Any:
        if not isinstance(value, Mapping):
            return value
        if "$id" in value and value is not schema:
            raise _NotInlinable  # a nested base URI would change what later references mean
        if "$dynamicRef" in value:
            raise _NotInlinable  # resolved at validation time: it needs the registry
        if "$ref" in value:
            found = target(value["$ref"], scope)
            rest = {k: keyword(k, v, scope) for k, v in value.items() if k != "$ref" and k in _EVALUATED}
            return found if not rest else {"allOf": [found], **rest}
        return {k: keyword(k, v, scope) for k, v in value.items()}

    def keyword(key: str, value: Any, scope: str) -> Any:
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            return {name: node(sub, scope) for name, sub in value.items()}
        if key in _SCHEMA_ONE:
            return [node(sub, scope) for sub in value] if isinstance(value, list) else node(value, scope)
        if key in _SCHEMA_LISTS and isinstance(value, list):
            return [node(sub, scope) for sub in value]
        return value

    try:
        out = node(schema, base)
    except _NotInlinable:
        return None
    return out if isinstance(out, dict) else None


__all__ = ["inline_refs"]
