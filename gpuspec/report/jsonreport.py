"""Machine-readable JSON report."""

from __future__ import annotations

import json
from collections.abc import Sequence

from gpuspec.findings import Finding
from gpuspec.report.base import ReportContext


def finding_to_dict(finding: Finding) -> dict[str, object]:
    """A finding as a JSON-ready mapping with stable keys."""
    return {
        "ruleId": finding.rule_id,
        "severity": finding.severity.value,
        "message": finding.message,
        "file": finding.file,
        "line": finding.line,
        "column": finding.column,
        "specPath": finding.spec_path,
        "hint": finding.hint,
    }


class JsonReporter:
    """Report as one JSON document: tool, command, summary counts and findings."""

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return the findings as a JSON document."""
        counts = {s: sum(1 for f in findings if f.severity.value == s) for s in ("error", "warning", "info")}
        doc = {
            "tool": {"name": "gpuspec", "version": context.tool_version},
            "command": context.command,
            "summary": counts,
            "findings": [finding_to_dict(f) for f in findings],
        }
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"
