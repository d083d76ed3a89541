"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per finding."""

from __future__ import annotations

from collections.abc import Sequence

from gpuspec.escaping import workflow_data, workflow_property
from gpuspec.findings import Finding
from gpuspec.report.base import ReportContext
from gpuspec.report.sarif import repo_relative

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Escape the message part of a workflow command (``%``, CR, LF; terminal escapes and bidi shown)."""
    return workflow_data(text)


def escape_property(text: str) -> str:
    """Escape a property value of a workflow command (also ``:`` and ``,``)."""
    return workflow_property(text)


def annotation(finding: Finding, context: ReportContext) -> str:
    """The workflow command that annotates ``finding`` on its file and line."""
    props: list[str] = []
    if finding.file:
        props.append(f"file={escape_property(repo_relative(finding.file) or finding.file)}")
        if finding.line:
            props.append(f"line={finding.line}")
            props.append(f"col={finding.column or 1}")
    doc = context.rule_docs.get(finding.rule_id)
    title = f"{finding.rule_id} {doc.title}" if doc else finding.rule_id
    props.append(f"title={escape_property(title)}")
    message = finding.message
    if finding.spec_path:
        message += f" ({finding.spec_path})"
    if finding.hint:
        message += f"\nhint: {finding.hint}"
    return f"::{_COMMANDS.get(finding.severity.value, 'warning')} {','.join(props)}::{escape_data(message)}"


class GithubReporter:
    """Report as GitHub Actions annotations that land on the pull request's Files tab."""

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return one workflow command per finding (nothing when there are none)."""
        return "".join(annotation(f, context) + "\n" for f in findings)
