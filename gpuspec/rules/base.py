"""The rule contract: a rule implements one catalogue entry as a pure function of the typed fleet.

A rule never prints and never stamps an id or a severity on what it finds: it yields
:class:`Problem` records, and :func:`run_rule` turns each into a
:class:`~gpuspec.findings.Finding` through the rule's catalogue entry, with the severity the policy
gives it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import YIELDS, DocPath, Finding, Severity
from gpuspec.model.fleet import Fleet


@dataclass(frozen=True, slots=True)
class Problem:
    """What a rule found: a message at a place in a spec file, optionally with a hint."""

    message: str
    file: str
    path: DocPath = ()
    hint: str | None = None
    at_key: bool = False
    #: For a preference of gpuspec's own (not an NVIDIA constraint) that this change cannot meet because of one:
    #: why it yields.  The finding is then reported at warning severity at most, with the reason.
    yields: str | None = None


@dataclass(frozen=True)
class RuleContext:
    """What a rule may look at: the fleet, its parameters and the date lifecycle checks judge at.

    ``params`` holds every parameter of the rule's entry (the policy's value, else the default).
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
    """Base class of every rule: ``entry`` is the catalogue entry it reports, :meth:`check` finds the problems."""

    entry: Entry
    #: True for change-set rules: they run only when a base revision is given (`lint --base`).
    needs_base: bool = False
    #: True when every problem the rule finds is about one cluster and depends only on that cluster, fleet.yaml's
    #: settings and the rule's parameters.  Lint then judges the fleet one cluster at a time (a fleet of that
    #: cluster alone, see :mod:`gpuspec.rules.percluster`), so an unchanged cluster's problems can come from an
    #: earlier run: a rule that reads other clusters must leave this False.
    per_cluster: bool = False

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield every problem this rule finds in ``ctx.fleet``."""
        raise NotImplementedError

    def param(self, ctx: RuleContext, name: str) -> Any:
        """The policy's value of parameter ``name``, else the entry's default."""
        return ctx.params[name] if name in ctx.params else self.entry.defaults()[name]


def run_rule(rule: Rule, ctx: RuleContext, severity: Severity | None = None) -> list[Finding]:
    """Run one rule and report every problem it yields through its entry, at the policy's severity (a preference
    that yields to an NVIDIA constraint at warning severity at most, its reason appended)."""
    return report_problems(rule, rule.check(ctx), severity)


def report_problems(rule: Rule, problems: Iterable[Problem], severity: Severity | None = None) -> list[Finding]:
    """The findings of ``rule``'s ``problems``, as :func:`run_rule` reports them."""
    entry = rule.entry
    out = []
    for p in problems:
        if p.yields is None:
            out.append(entry.finding(p.message, p.file, p.path, p.hint, at_key=p.at_key, severity=severity))
            continue
        out.append(entry.finding(f"{p.message}; this preference yields: {p.yields}", p.file, p.path, p.hint,
                                 at_key=p.at_key, tags=(YIELDS,)).with_severity(severity or entry.severity))
    return out
