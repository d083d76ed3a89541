"""The explicit rule registry: every area's rules, imported by name, mapped id → rule.

No rule registers itself; adding a rule means declaring its entry in the catalogue and adding the rule
to its area's list here.  The change-set rules (GS8xx) judge a change between two revisions and run only
under `lint --base`, so they and the plan's change records are imported only when asked for.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from gpuspec.rules import airgap, observability, operations, rollout, security
from gpuspec.rules.base import Rule
from gpuspec.rules.matrix import MATRIX_RULES

#: The areas whose rules judge one revision of the fleet: support matrix (GS2xx/GS3xx), air-gap,
#: rollout, security, observability.
AREAS: tuple[list[Rule], ...] = (
    MATRIX_RULES,
    airgap.RULES,
    rollout.RULES,
    security.RULES,
    observability.RULES,
    operations.RULES,
)


def _build(areas: Iterable[list[Rule]], taken: Iterable[str] = ()) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    seen = set(taken)
    for area in areas:
        for rule in area:
            if rule.entry.id in rules or rule.entry.id in seen:
                raise RuntimeError(f"rule id {rule.entry.id} has two implementations")
            rules[rule.entry.id] = rule
    return dict(sorted(rules.items()))


#: Rule id → rule of every rule that judges one revision, sorted by id.
RULES: dict[str, Rule] = _build(AREAS)


@functools.cache
def changeset_rules() -> dict[str, Rule]:
    """Rule id → rule of the change-set rules (GS8xx), sorted by id; imported on first use."""
    from gpuspec.rules.changeset import CHANGESET_RULES
    from gpuspec.rules.changeset_apiserver import CHANGESET_RULES as APISERVER_RULES
    from gpuspec.rules.changeset_drivers import DRIVER_RULES
    from gpuspec.rules.changeset_rollback import ROLLBACK_RULES
    from gpuspec.rules.changeset_waves import WAVE_RULES
    from gpuspec.rules.changeset_windows import WINDOW_RULES

    return _build((CHANGESET_RULES, APISERVER_RULES, DRIVER_RULES, WAVE_RULES, WINDOW_RULES, ROLLBACK_RULES),
                  taken=RULES)


def all_rules() -> dict[str, Rule]:
    """Every rule, sorted by id."""
    return dict(sorted({**RULES, **changeset_rules()}.items()))
