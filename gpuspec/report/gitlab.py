"""GitLab Code Quality report: the JSON array a merge request's code-quality widget and diff annotations read."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence

from gpuspec.findings import Finding
from gpuspec.report.base import ReportContext
from gpuspec.report.sarif import repo_relative, repo_root

#: gpuspec severity -> Code Quality severity (info, minor, major, critical, blocker).
_SEVERITIES = {"error": "critical", "warning": "minor", "info": "info"}


def _description(finding: Finding) -> str:
    text = f"{finding.rule_id} {finding.message}"
    if finding.spec_path:
        text += f" ({finding.spec_path})"
    return text + (f" -- hint: {finding.hint}" if finding.hint else "")


class GitlabReporter:
    """Report as a GitLab Code Quality artifact (``artifacts:reports:codequality``)."""

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return the findings as a Code Quality JSON array, one issue per finding.

        Paths are relative to the repository root, as GitLab needs them to place an issue on a diff line.
        A fingerprint is stable across runs and unique within the report (GitLab merges issues that share one).
        """
        root = repo_root()
        seen: Counter[str] = Counter()
        issues = []
        for finding in findings:
            path = (repo_relative(finding.file, root) if finding.file else None) or "."
            key = "\0".join((finding.rule_id, path, finding.spec_path or "", finding.message))
            seen[key] += 1
            fingerprint = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()
            issues.append({
                "type": "issue",
                "check_name": finding.rule_id,
                "description": _description(finding),
                "severity": _SEVERITIES.get(finding.severity.value, "minor"),
                "fingerprint": fingerprint,
                "location": {"path": path, "lines": {"begin": finding.line or 1}},
            })
        return json.dumps(issues, indent=2, sort_keys=True) + "\n"
