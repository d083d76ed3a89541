"""The explicit rule registry: every area's rules, imported by name, mapped id → rule.

No rule registers itself; adding a rule means declaring its entry in the catalogue and adding the rule
to its area's list here.
"""

from __future__ import annotations

from gpuspec.rules import airgap, observability, rollout, security
from gpuspec.rules.base import Rule
from gpuspec.rules.changeset import CHANGESET_RULES
from gpuspec.rules.matrix import MATRIX_RULES

#: Every area's rules: support matrix (GS2xx/GS3xx), air-gap, rollout, security, observability,
#: change-set (GS8xx; they run only under `lint --base`).
AREAS: tuple[list[Rule], ...] = (
    MATRIX_RULES,
    airgap.RULES,
    rollout.RULES,
    security.RULES,
    observability.RULES,
    CHANGESET_RULES,
)


def _build() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for area in AREAS:
        for rule in area:
            if rule.entry.id in rules:
                raise RuntimeError(f"rule id {rule.entry.id} has two implementations")
            rules[rule.entry.id] = rule
    return dict(sorted(rules.items()))


#: Rule id → rule, sorted by id.
RULES: dict[str, Rule] = _build()
