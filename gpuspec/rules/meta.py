"""Findings of the lint engine itself (GS0xx): policy packs, exceptions and inline suppressions.

These rules are produced by the engine, not by :meth:`Rule.check`; they are
registered so that ``gpuspec rules``/``explain`` document them and policy packs
can change the severity of GS003–GS007.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.findings import Severity
from gpuspec.rules.base import Problem, Rule, RuleContext


class EngineRule(Rule):
    """A finding the lint engine raises itself; it has nothing to check on the fleet."""

    #: True when the finding makes the input unusable (exit 2) and policies cannot change it.
    input_error = False

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield nothing: the engine produces these findings."""
        return iter(())


class RuleCrashed(EngineRule):
    """A rule stopped with an internal error; the other rules still ran.

    This is a bug in gpuspec (or in the rule): please report it with the
    message.  Set ``GPUSPEC_DEBUG=1`` to see the traceback.
    """

    id = "GS000"
    title = "A rule failed with an internal error"
    rationale = "A gate must say when it could not check something instead of passing silently."
    severity = Severity.ERROR
    tags = ("engine",)


class PolicyFileInvalid(EngineRule):
    """A policy pack cannot be read: YAML syntax, unknown keys, wrong value types.

    Reported at file:line:col of the pack; lint exits with code 2.
    """

    id = "GS001"
    title = "Policy pack is unreadable or does not match its schema"
    rationale = "A mistyped policy must not silently weaken the gate."
    severity = Severity.ERROR
    tags = ("engine", "policy")
    input_error = True


class PolicySettingInvalid(EngineRule):
    """A policy pack refers to something that does not exist or sets a value a rule cannot take.

    Unknown rule ids (with a did-you-mean), unknown or mistyped parameters,
    ``extends`` of a missing pack or an ``extends`` cycle, custom rules with a
    ``GS`` id, a clashing id, a bad selector or an invalid JSON Schema.
    Lint exits with code 2.
    """

    id = "GS002"
    title = "Policy pack setting is invalid"
    rationale = "A policy that names a rule that does not exist checks nothing."
    severity = Severity.ERROR
    tags = ("engine", "policy")
    input_error = True


class ExceptionExpired(EngineRule):
    """A policy exception is past its ``expires`` date (judged against today, or ``--today``).

    An expired exception no longer hides anything: the findings it covered are
    reported again, and this finding points at the exception to renew or drop.
    """

    id = "GS003"
    title = "Policy exception has expired"
    rationale = "Exceptions are time-boxed so that accepted risks are reviewed again."
    severity = Severity.WARNING
    tags = ("engine", "policy")


class ExceptionUnused(EngineRule):
    """A policy exception matches no finding: the problem is fixed or the scope is wrong.

    Only reported when every rule the exception names is enabled.
    """

    id = "GS004"
    title = "Policy exception matches nothing"
    rationale = "Stale exceptions hide future problems; remove them once they are not needed."
    severity = Severity.WARNING
    tags = ("engine", "policy")


class SuppressionWithoutReason(EngineRule):
    """An inline ``# gpuspec: ignore GSxxx`` comment gives no reason (``-- reason``); it suppresses nothing.

    Write ``# gpuspec: ignore GS604 -- why this is acceptable`` on the line of
    the finding or on the line above it.
    """

    id = "GS005"
    title = "Inline suppression has no reason"
    rationale = "A suppression without a reason cannot be reviewed."
    severity = Severity.ERROR
    tags = ("engine", "suppression")


class SuppressionUnused(EngineRule):
    """An inline suppression matches no finding on its line.

    Only reported when every rule it names is enabled.
    """

    id = "GS006"
    title = "Inline suppression matches nothing"
    rationale = "Stale suppressions hide future problems on that line."
    severity = Severity.WARNING
    tags = ("engine", "suppression")


class SuppressionUnknownRule(EngineRule):
    """An inline suppression names a rule id gpuspec does not know."""

    id = "GS007"
    title = "Inline suppression names an unknown rule"
    rationale = "A misspelt id suppresses nothing."
    severity = Severity.WARNING
    tags = ("engine", "suppression")


RULES: list[type[Rule]] = [
    RuleCrashed,
    PolicyFileInvalid,
    PolicySettingInvalid,
    ExceptionExpired,
    ExceptionUnused,
    SuppressionWithoutReason,
    SuppressionUnused,
    SuppressionUnknownRule,
]
