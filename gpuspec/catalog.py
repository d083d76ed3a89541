"""Every finding id gpuspec can report, from every stage, as reporter data (for `rules` and `explain`)."""

from __future__ import annotations

from gpuspec.audit.rules import rule_docs as audit_rule_docs
from gpuspec.report.base import RuleDoc
from gpuspec.rules.registry import rule_docs as lint_rule_docs
from gpuspec.validate.ids import VALIDATE_RULES
from gpuspec.verify.ids import rule_docs as verify_rule_docs

#: Which command reports each id range.
STAGES = (
    ("GS0", "lint engine"), ("GS1", "validate"), ("GS2", "support matrix"), ("GS3", "MIG and sharing"),
    ("GS4", "air-gap"), ("GS5", "rollout"), ("GS6", "security"), ("GS75", "audit"), ("GS76", "audit"),
    ("GS77", "audit"), ("GS78", "audit"), ("GS79", "audit"), ("GS7", "observability"), ("GS8", "change set"),
    ("GS9", "verify"),
)


def all_rule_docs() -> dict[str, RuleDoc]:
    """Every finding id → its title, default severity and help, sorted by id."""
    docs: dict[str, RuleDoc] = {}
    for source in (VALIDATE_RULES, lint_rule_docs(), audit_rule_docs(), verify_rule_docs()):
        for rule_id, doc in source.items():
            if rule_id in docs:
                raise RuntimeError(f"finding id {rule_id} is defined twice")
            docs[rule_id] = doc
    return dict(sorted(docs.items()))


def stage_of(rule_id: str) -> str:
    """The area of gpuspec that reports ``rule_id`` ("custom" for an organisation's own rules)."""
    if not rule_id.startswith("GS"):
        return "custom"
    return next((name for prefix, name in STAGES if rule_id.startswith(prefix)), "custom")
