"""Whether a custom rule's JSON Schema is itself valid, remembered between runs.

jsonschema's meta-schema check needs jsonschema imported (a sixth of ``gpuspec rules``' start-up); its answer
depends only on the schema and the installed jsonschema, so it is kept in the user cache under both.
"""

from __future__ import annotations

import hashlib
from typing import Any

from gpuspec.usercache import Memo, package_fingerprint

#: The packages whose code decides the answer: the validator, its bundled meta-schemas, its reference resolver.
_CHECKER_PACKAGES = ("jsonschema", "jsonschema_specifications", "referencing")

Problem = tuple[tuple[str | int, ...], str]


class SchemaChecks:
    """Meta-schema checks of one run: ``problem`` per schema, then ``save`` to remember them."""

    def __init__(self) -> None:
        """Open the remembered checks (none when caching is off or jsonschema changed)."""
        self._memo: Memo | None = None

    def problem(self, schema: dict[str, Any]) -> Problem | None:
        """Where in ``schema`` and why it is not a valid JSON Schema (draft 2020-12), or None."""
        if self._memo is None:
            self._memo = Memo("custom-rule-schemas", package_fingerprint(*_CHECKER_PACKAGES))
        # repr, not sorted JSON: YAML keys may mix ints and strings (unsortable), and 1, 1.0, True and "1" differ
        key = hashlib.sha256(repr(schema).encode("utf-8", "surrogatepass")).hexdigest()
        hit, stored = self._memo.get(key)
        if hit and _is_problem(stored):
            return None if stored is None else (tuple(stored[0]), stored[1])
        found = schema_problem(schema)
        self._memo.put(key, found)
        return found

    def save(self) -> None:
        """Remember this run's checks for the next run."""
        if self._memo is not None:
            self._memo.save()


def _is_problem(stored: Any) -> bool:
    if stored is None:
        return True
    return (isinstance(stored, tuple) and len(stored) == 2 and isinstance(stored[0], tuple)
            and all(isinstance(p, str | int) for p in stored[0]) and isinstance(stored[1], str))


def schema_problem(schema: dict[str, Any]) -> Problem | None:
    """Where in ``schema`` and why it is not a valid JSON Schema (draft 2020-12), or None.

    The message names the place and the keyword, never the offending value (it may sit under a key such as
    ``apiKey`` and be a credential; the finding points at it, so reports treat it as one).
    """
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        at = tuple(p for p in exc.path if isinstance(p, str | int))
        where = ".".join(str(p) for p in at) or "the top level"
        expected = exc.validator_value if isinstance(exc.validator_value, list) else [exc.validator_value]
        if exc.validator == "type" and all(isinstance(t, str) for t in expected):
            return at, f"{where} must be of type {' or '.join(repr(t) for t in expected)}"
        return at, f"{where} fails the meta-schema's {str(exc.validator)!r} keyword"
    return None
