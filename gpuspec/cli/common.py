"""Options, defaults and output helpers shared by every command."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from gpuspec import __version__, exitcodes
from gpuspec.catalogue import CATALOGUE
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Finding, Severity
from gpuspec.loader.positions import locate_findings
from gpuspec.report.base import ReportContext
from gpuspec.report.registry import REPORTERS, reporter

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_FLEET = Path("fleet")
DEFAULT_POLICIES = Path("policies")
DEFAULT_RENDERED = Path("rendered")


def fleet_argument(func: F) -> F:
    """The optional FLEET_DIR argument, defaulting to ./fleet."""
    return click.argument(
        "fleet_dir", required=False, default=str(DEFAULT_FLEET),
        type=click.Path(path_type=Path, file_okay=True, dir_okay=True),
    )(func)


def policies_option(func: F) -> F:
    """The --policies option, defaulting to ./policies."""
    return click.option(
        "--policies", "policies_dir", default=str(DEFAULT_POLICIES), show_default=True,
        type=click.Path(path_type=Path, file_okay=False), help="Folder of policy packs.",
    )(func)


def format_option(choices: Sequence[str] | None = None) -> Callable[[F], F]:
    """The --format option over the registered reporters (or the given choices)."""
    names = list(choices or REPORTERS)

    def decorate(func: F) -> F:
        return click.option(
            "--format", "output_format", type=click.Choice(names), default="text", show_default=True,
            help="Output format.",
        )(func)

    return decorate


def output_option(func: F) -> F:
    """The --output option: write the report to a file instead of standard output."""
    return click.option(
        "--output", "output_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
        help="Write the report to this file instead of standard output.",
    )(func)


def use_color(stream: Any = None) -> bool:
    """True when writing to a terminal and NO_COLOR is not set."""
    stream = stream or sys.stdout
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def emit_report(
    findings: Sequence[Finding],
    output_format: str,
    command: str,
    output_file: Path | None = None,
    rule_docs: dict[str, Entry] | None = None,
    summary: str | None = None,
) -> list[Finding]:
    """Locate findings, render them in ``output_format`` and write the report; return the located findings.

    Reporters see the catalogue entry of every id that fired; ``rule_docs`` adds entries the catalogue does
    not hold (an organisation's custom rules).
    """
    located = locate_findings(findings)
    docs = {f.rule_id: CATALOGUE[f.rule_id] for f in located if f.rule_id in CATALOGUE}
    context = ReportContext(
        tool_version=__version__, command=command, rule_docs={**docs, **(rule_docs or {})},
        color=output_file is None and output_format == "text" and use_color(), summary=summary,
    )
    text = reporter(output_format).render(located, context)
    if output_file is not None:
        output_file.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    return located


def exit_code(findings: Sequence[Finding], fail_on: Severity = Severity.ERROR) -> int:
    """Exit code for findings: 1 when any is at or above ``fail_on``, else 0."""
    return exitcodes.FINDINGS if any(f.severity.rank >= fail_on.rank for f in findings) else exitcodes.OK
