"""The rule contract: rules are pure functions of the typed fleet that yield problems.

A rule never prints and never stamps its own id or severity on what it finds:
the engine turns each :class:`Problem` into a :class:`~gpuspec.findings.Finding`
with the rule's id and the severity the policy gives it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, ClassVar

from gpuspec.findings import DocPath, Finding, Severity
from gpuspec.spec.models import Fleet


@dataclass(frozen=True, slots=True)
class Param:
    """A typed rule parameter with its default and meaning."""

    name: str
    type: type
    default: Any
    description: str


@dataclass(frozen=True, slots=True)
class Problem:
    """What a rule found: a message at a place in a spec file, optionally with a hint."""

    message: str
    file: str
    path: DocPath = ()
    hint: str | None = None
    at_key: bool = False


@dataclass(frozen=True)
class RuleContext:
    """What a rule may look at: the fleet, its parameters and the date lifecycle checks judge at.

    ``raw`` maps each spec file (display path) to its plain YAML data, for rules
    that must see every written value (e.g. the credential scan).  ``shared`` is a
    memo that lives for one lint run and is handed to every rule of that run, so
    rules that judge the same facts (the support-matrix rules) compute them once;
    keys name the fact and everything it depends on besides the fleet.
    """

    fleet: Fleet
    params: Mapping[str, Any] = field(default_factory=dict)
    as_of: date | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)
    shared: dict[Any, Any] = field(default_factory=dict)


class Rule:
    """Base class of every rule; subclasses set the class attributes and implement :meth:`check`.

    The class docstring is the rule's long documentation (shown by ``gpuspec explain``).
    """

    id: ClassVar[str]
    title: ClassVar[str]
    rationale: ClassVar[str]
    severity: ClassVar[Severity]
    params: ClassVar[tuple[Param, ...]] = ()
    tags: ClassVar[tuple[str, ...]] = ()

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield every problem this rule finds in ``ctx.fleet``."""
        raise NotImplementedError

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The rule's parameters with their default values."""
        return {p.name: p.default for p in cls.params}


def run_rule(rule: Rule, ctx: RuleContext, severity: Severity | None = None) -> list[Finding]:
    """Run one rule and stamp its id and (policy) severity on every problem it yields."""
    level = severity or rule.severity
    return [
        Finding(rule.id, level, p.message, p.file, p.path, p.hint, at_key=p.at_key, tags=rule.tags)
        for p in rule.check(ctx)
    ]
