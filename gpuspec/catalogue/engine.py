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
    severity=Severity.ERROR,
    rationale="Exceptions are time-boxed so that accepted risks are reviewed again; a fleet must not silently "
              "stay out of support once the agreed date has passed.",
    doc="""
A policy exception is past its `expires` date: the last day it applies, judged against today's date in UTC
(or `--today YYYY-MM-DD` of validate, lint, render, handover and plan).

An expired exception no longer accepts anything: the findings it covered are
reported again, and this finding points at the exception to renew or drop.
It is an error in every command (validate, lint, render, handover, plan); a
policy pack cannot lower or disable it.
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

Each rule of an exception is judged on its own: when the exception still accepts findings of some of its rules,
every rule that accepts nothing is reported at its line (`rules: [GS202, GS302]` once the MIG layout is written:
GS302 at its place in the list), so a stale id does not hide behind a live one.

Only reported for rules that ran: enabled, and the change-set rules (GS8xx) only under `lint --base`.
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

EXCEPTION_NOT_ACCEPTABLE = Entry(
    id="GS008",
    title="Exception or suppression names a finding that cannot be accepted",
    severity=Severity.ERROR,
    rationale="Structural errors make the output wrong or unsafe, whatever anyone agrees to; being outside "
              "NVIDIA's support matrix is acceptable only with an owner and an expiry date.",
    doc="""
Some findings can never be accepted: schema, YAML and reference findings
(GS1xx), findings of the lint engine itself (GS0xx), a credential in the
spec (GS405) and the findings of verify and audit. A policy exception or an
inline suppression that names one is an error, and accepts nothing for that id.

Support-matrix findings (GS2xx, GS3xx) can be accepted only by a policy
exception, which names an owner and an expiry date; an inline
`# gpuspec: ignore GS202` has neither, so it is refused too.

Failing:

```yaml
exceptions:
  - rules: [GS101]
    cluster: c1
    owner: platform
    reason: the schema is wrong
    expires: 2099-01-01
```

Passing: fix the spec; accept only findings of the support matrix and the policy rules.
""",
    tags=("engine", "policy", "suppression"),
)

EXCEPTION_PLACEHOLDER = Entry(
    id="GS009",
    title="Policy exception is not filled in",
    severity=Severity.ERROR,
    rationale="An exception nobody owns, or one without an end, is a silent permanent waiver.",
    doc="""
An exception's `owner`, `reason` or `expires` is still a placeholder starting with `TODO`
(as `gpuspec import` writes them, e.g. `owner: "TODO: review"`). Such an exception
accepts nothing until a person fills it in: an owner who answers for it, the reason,
and the last day it applies (YYYY-MM-DD).

Failing:

```yaml
exceptions:
  - rules: [GS202]
    cluster: c1
    owner: "TODO: review"
    reason: the cluster runs v24.9.2 today; upgrade planned
    expires: "TODO: review"
```

Passing: `owner: gpu-platform@example.com` and `expires: 2027-03-31`.
""",
    tags=("engine", "policy"),
)

#: Ids a policy pack cannot configure (enable, disable, change severity): they are errors in every command.
FIXED_IDS: frozenset[str] = frozenset({"GS003", "GS008", "GS009"})

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
    EXCEPTION_NOT_ACCEPTABLE,
    EXCEPTION_PLACEHOLDER,
)
