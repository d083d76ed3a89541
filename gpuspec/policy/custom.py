"""Run declarative custom rules: a JSON Schema asserted on every spec node a path pattern selects."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuspec.catalogue.engine import POLICY_SETTING_INVALID
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Finding, Severity
from gpuspec.policy.load import LocatedCustomRule
from gpuspec.policy.selectors import item_name, parse_selector, select
from gpuspec.redaction import contains_secret

if TYPE_CHECKING:
    from gpuspec.model.fleet import Fleet


def custom_findings(fleet: Fleet, rule: LocatedCustomRule, severity: Severity) -> Iterator[Finding]:
    """One finding per selected node that does not satisfy the rule's schema (at the most relevant error)."""
    import jsonschema  # imported only when a pack declares custom rules (start-up)
    from referencing.exceptions import Unresolvable

    spec = rule.rule
    entry = custom_entry(rule)
    validator = jsonschema.Draft202012Validator(spec.schema_, registry=_local_only())
    for selected in select(fleet, parse_selector(spec.select)):
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(selected.node))
        except Unresolvable as exc:
            yield POLICY_SETTING_INVALID.finding(
                f"custom rule {spec.id}: a reference of its JSON Schema cannot be resolved ({exc.ref!r})",
                rule.place.file, (*rule.place.path, "schema"))
            return
        if error is None:
            continue
        name = item_name(selected.node) or ""
        message = spec.message.replace("{name}", name)
        if contains_secret(error.instance):  # jsonschema's message repeats the value
            detail = f"the value does not satisfy the rule's {error.validator!r} condition"
        else:
            detail = error.message if len(error.message) <= 200 else error.message[:197] + "..."
        yield entry.finding(
            message, selected.file, (*selected.path, *_parts(error.absolute_path)), spec.hint or detail,
            at_key=error.validator == "additionalProperties", severity=severity,
        )


@functools.cache
def _local_only() -> Any:
    """A registry that resolves nothing beyond the schema itself (no network, no local files)."""
    from referencing import Registry, Resource
    from referencing.exceptions import NoSuchResource

    def refuse(uri: str) -> Resource[Any]:
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg]

    return Registry(retrieve=refuse)  # type: ignore[call-arg]


def _parts(path: Any) -> tuple[str | int, ...]:
    return tuple(p if isinstance(p, int) else str(p) for p in path)


def custom_entry(rule: LocatedCustomRule) -> Entry:
    """The catalogue-shaped declaration of an organisation's custom rule (stage "custom")."""
    spec = rule.rule
    return Entry(
        id=spec.id, title=spec.title, severity=spec.severity,
        rationale=spec.rationale or spec.title,
        doc=f"Custom rule from {rule.place.file}: selects `{spec.select}` and asserts a JSON Schema.",
        tags=("custom",),
    )
