"""The reporter contract and the metadata a reporter may show about a rule id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gpuspec.findings import Finding


@dataclass(frozen=True, slots=True)
class RuleDoc:
    """What a reporter may show about a rule id: plain data handed in by the command."""

    rule_id: str
    title: str
    severity: str
    help: str = ""


@dataclass(frozen=True)
class ReportContext:
    """Everything besides the findings that a report may print."""

    tool_version: str
    command: str
    rule_docs: Mapping[str, RuleDoc] = field(default_factory=dict)
    color: bool = False
    summary: str | None = None


class Reporter(Protocol):
    """Turns a list of findings into the text of one report."""

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return the whole report for ``findings``."""
        ...
