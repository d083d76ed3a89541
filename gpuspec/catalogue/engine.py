"""Findings of the lint engine itself (GS0xx): policy packs, exceptions, inline suppressions, crashed rules."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

RULE_CRASHED = Entry(
    id="GS000",
    title="A rule failed with an internal error",
    severity=Severity.ERROR,
    rationale="A gate must say when it could not check something instead of passing silently.",
    doc="""
A rule stopped with an internal error; the other rules still ran.

This is a bug in gpuspec (or in the rule): please report it with the
message.  Set `GPUSPEC_DEBUG=1` to see the traceback.
""",
    tags=("engine",),
)

POLICY_FILE_INVALID = Entry(
    id="GS001",
    title="Policy pack is unreadable or does not match its schema",
    severity=Severity.ERROR,
    rationale="A mistyped policy must not silently weaken the gate.",
    doc="""
A policy pack cannot be read: YAML syntax, unknown keys, wrong value types.

Reported at file:line:col of the pack; lint exits with code 2.
""",
    tags=("engine", "policy"),
    input_error=True,
)

POLICY_SETTING_INVALID = Entry(
    id="GS002",
    title="Policy pack setting is invalid",
    severity=Severity.ERROR,
    rationale="A policy that names a rule that does not exist checks nothing.",
    doc="""
A policy pack refers to something that does not exist or sets a value a rule cannot take.

Unknown rule ids (with a did-you-mean), unknown or mistyped parameters,
`extends` of a missing pack or an `extends` cycle, custom rules with a
`GS` id, a clashing id, a bad selector or an invalid JSON Schema.
Lint exits with code 2.
""",
    tags=("engine", "policy"),
    input_error=True,
)

EXCEPTION_EXPIRED = Entry(
    id="GS003",
    title="Policy exception has expired",
    severity=Severity.WARNING,
    rationale="Exceptions are time-boxed so that accepted risks are reviewed again.",
    doc="""
A policy exception is past its `expires` date (judged against today, or `--today`).

An expired exception no longer hides anything: the findings it covered are
reported again, and this finding points at the exception to renew or drop.
""",
    tags=("engine", "policy"),
)

EXCEPTION_UNUSED = Entry(
    id="GS004",
    title="Policy exception matches nothing",
    severity=Severity.WARNING,
    rationale="Stale exceptions hide future problems; remove them once they are not needed.",
    doc="""
A policy exception matches no finding: the problem is fixed or the scope is wrong.

Only reported when every rule the exception names is enabled.
""",
    tags=("engine", "policy"),
)

SUPPRESSION_WITHOUT_REASON = Entry(
    id="GS005",
    title="Inline suppression has no reason",
    severity=Severity.ERROR,
    rationale="A suppression without a reason cannot be reviewed.",
    doc="""
An inline `# gpuspec: ignore GSxxx` comment gives no reason (`-- reason`); it suppresses nothing.

Write `# gpuspec: ignore GS604 -- why this is acceptable` on the line of
the finding or on the line above it.
""",
    tags=("engine", "suppression"),
)

SUPPRESSION_UNUSED = Entry(
    id="GS006",
    title="Inline suppression matches nothing",
    severity=Severity.WARNING,
    rationale="Stale suppressions hide future problems on that line.",
    doc="""
An inline suppression matches no finding on its line.

Only reported when every rule it names is enabled.
""",
    tags=("engine", "suppression"),
)

SUPPRESSION_UNKNOWN_RULE = Entry(
    id="GS007",
    title="Inline suppression names an unknown rule",
    severity=Severity.WARNING,
    rationale="A misspelt id suppresses nothing.",
    doc="""
An inline suppression names a rule id gpuspec does not know.
""",
    tags=("engine", "suppression"),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    RULE_CRASHED,
    POLICY_FILE_INVALID,
    POLICY_SETTING_INVALID,
    EXCEPTION_EXPIRED,
    EXCEPTION_UNUSED,
    SUPPRESSION_WITHOUT_REASON,
    SUPPRESSION_UNUSED,
    SUPPRESSION_UNKNOWN_RULE,
)
