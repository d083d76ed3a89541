"""What ``gpuspec lint --base REV`` adds to a lint run: located GS8xx findings and their rule docs."""

from __future__ import annotations

from pathlib import Path

from gpuspec.findings import Finding
from gpuspec.loader.positions import locate_findings
from gpuspec.plan.rules import CHANGESET_RULES, changeset_findings
from gpuspec.report.base import RuleDoc
from gpuspec.rules.registry import rule_doc
from gpuspec.spec.models import Fleet


def changeset_report(
    base_rev: str, fleet_dir: Path, policies_dir: Path | None = None, head: Fleet | None = None
) -> tuple[list[Finding], dict[str, RuleDoc]]:
    """The change-set findings from ``base_rev`` to the working tree (located) and the docs of the rules that fired.

    Rules run at their default severities and parameters.
    """
    findings = locate_findings(changeset_findings(None, base_rev, fleet_dir, policies_dir=policies_dir, head=head))
    fired = {f.rule_id for f in findings}
    docs = {rule.id: rule_doc(rule) for rule in CHANGESET_RULES if rule.id in fired}
    return findings, docs
