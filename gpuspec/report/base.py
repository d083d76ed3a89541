"""The reporter contract: findings in, report text out; what a reporter may show about an id is its catalogue entry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from gpuspec.findings import Finding, Suppressed

if TYPE_CHECKING:
    from gpuspec.catalogue.entry import Entry


@dataclass(frozen=True)
class ReportContext:
    """Everything besides the findings that a report may print."""

    tool_version: str
    command: str
    rule_docs: Mapping[str, Entry] = field(default_factory=dict)
    color: bool = False
    summary: str | None = None
    #: Findings a suppression or policy exception covers; only SARIF shows them (with ``suppressions``).
    suppressed: Sequence[Suppressed] = ()
    #: False when the input was unusable (exit 2): the findings say why, the check did not run to the end.
    execution_successful: bool = True


class Reporter(Protocol):
    """Turns a list of findings into the text of one report."""

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return the whole report for ``findings``."""
        ...
