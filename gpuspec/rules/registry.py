"""The explicit rule registry: every area's rule list, imported by name, mapped id → rule class.

No rule registers itself; adding a rule means adding it to its area's list.
"""

from __future__ import annotations

import difflib
import inspect

from gpuspec.matrix.checks import MATRIX_RULES
from gpuspec.plan.rules import CHANGESET_RULES
from gpuspec.report.base import RuleDoc
from gpuspec.rules import airgap, meta, observability, rollout, security
from gpuspec.rules.base import Rule

#: Every area's rules: engine (GS0xx), support matrix (GS2xx/GS3xx), air-gap, rollout, security, observability,
#: change-set (GS8xx; they run only under `lint --base`).
AREAS: tuple[list[type[Rule]], ...] = (
    meta.RULES,
    MATRIX_RULES,
    airgap.RULES,
    rollout.RULES,
    security.RULES,
    observability.RULES,
    CHANGESET_RULES,
)


def _build() -> dict[str, type[Rule]]:
    rules: dict[str, type[Rule]] = {}
    for area in AREAS:
        for rule in area:
            if rule.id in rules:
                raise RuntimeError(f"rule id {rule.id} is defined twice ({rules[rule.id].__name__}, {rule.__name__})")
            rules[rule.id] = rule
    return dict(sorted(rules.items()))


#: Rule id → rule class, sorted by id.
RULES: dict[str, type[Rule]] = _build()


def get_rule(rule_id: str) -> type[Rule] | None:
    """The rule class with id ``rule_id`` (case-insensitive), or None."""
    return RULES.get(rule_id.strip().upper())


def suggest(rule_id: str, known: list[str] | None = None) -> list[str]:
    """Ids close to ``rule_id``, best first (for did-you-mean messages)."""
    choices = known if known is not None else list(RULES)
    wanted = rule_id.strip().upper()
    close = difflib.get_close_matches(wanted, choices, n=6, cutoff=0.6)
    # Ids are fixed-width: a typo usually keeps the other characters in place, so rank by those first.
    close.sort(key=lambda c: -sum(a == b for a, b in zip(c, wanted, strict=False)))
    return close[:3]


def rule_doc_text(rule: type[Rule]) -> str:
    """The long documentation of a rule: its docstring, dedented."""
    return inspect.cleandoc(rule.__doc__ or "")


def rule_doc(rule: type[Rule]) -> RuleDoc:
    """Reporter metadata of a rule: id, title, default severity and help (rationale and doc)."""
    help_text = f"{rule.rationale}\n\n{rule_doc_text(rule)}".strip()
    return RuleDoc(rule.id, rule.title, rule.severity.value, help_text)


def rule_docs() -> dict[str, RuleDoc]:
    """Reporter metadata of every registered rule."""
    return {rule_id: rule_doc(rule) for rule_id, rule in RULES.items()}
