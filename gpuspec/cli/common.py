"""Options, defaults and output helpers shared by every command."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from gpuspec import __version__, exitcodes
from gpuspec.cli.resultcache import Report
from gpuspec.findings import Finding, Severity, Suppressed
from gpuspec.redaction import redact_text
from gpuspec.report.registry import REPORTERS, reporter

if TYPE_CHECKING:
    from gpuspec.catalogue.entry import Entry
    from gpuspec.pipeline.validate import ValidationResult

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_FLEET = Path("fleet")
DEFAULT_POLICIES = Path("policies")
DEFAULT_RENDERED = Path("rendered")


def outside_git(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback: refuse a path (or each of several) inside a ``.git`` folder, read or written."""
    from gpuspec.loader.safefile import in_git_dir

    for item in value if isinstance(value, tuple | list) else (value,):
        if isinstance(item, str | os.PathLike) and in_git_dir(item):
            raise click.BadParameter(f"{os.fspath(item)} is inside a .git folder (git's own data, where CI keeps "
                                     "its token); gpuspec never reads or writes there", ctx, param)
    return value


def fleet_argument(func: F) -> F:
    """The optional FLEET_DIR argument, defaulting to ./fleet."""
    return click.argument(
        "fleet_dir", required=False, default=str(DEFAULT_FLEET),
        type=click.Path(path_type=Path, file_okay=True, dir_okay=True), callback=outside_git,
    )(func)


def _policies_folder(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """A --policies the user named must be a folder; the default ./policies may be absent (built-in pack)."""
    source = ctx.get_parameter_source(param.name or "")
    if source is not ParameterSource.DEFAULT and not value.is_dir():
        raise click.BadParameter(f"{value} is not a folder of policy packs", ctx, param)
    outside_git(ctx, param, value)
    return value


def policies_option(func: F) -> F:
    """The --policies option, defaulting to ./policies; a folder named explicitly must exist."""
    return click.option(
        "--policies", "policies_dir", default=str(DEFAULT_POLICIES), show_default=True,
        type=click.Path(path_type=Path, file_okay=False), callback=_policies_folder, help="Folder of policy packs.",
    )(func)


def _parse_date(_ctx: click.Context, _param: click.Parameter, value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date such as 2026-09-30") from None


def today_option(func: F) -> F:
    """The --today option: the day policy exceptions expire against (default: today's date in UTC)."""
    return click.option(
        "--today", callback=_parse_date, metavar="YYYY-MM-DD", default=None,
        help="Date policy exceptions expire against (default: today, UTC).",
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
        callback=outside_git,
        help="Write the report to this file instead of standard output.",
    )(func)


def use_color(stream: Any = None) -> bool:
    """True when writing to a terminal and NO_COLOR is not set."""
    stream = stream or sys.stdout
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def redact_findings(findings: Sequence[Finding], raw: Mapping[str, Any] | None = None) -> list[Finding]:
    """Findings as every report may show them: no credential in a message or hint, none in a code frame.

    Findings on a credential (same file, same or enclosing document path) are tagged sensitive, so no
    reporter prints their source line; ``raw`` holds the files' data when the caller already read them,
    other files are read here (bounded, regular files only).  Credential shapes in messages and hints
    (tokens, keys, URL ``user:password@``) are replaced by ``<redacted>``.
    """
    from gpuspec.loader.yamlread import YamlProblem, read_yaml
    from gpuspec.rules.secrets import mark_sensitive

    data: dict[str, Any] = dict(raw or {})
    for file in sorted({f.file for f in findings if f.file is not None and f.file not in data}):
        try:
            data[file] = read_yaml(Path(file), file)
        except YamlProblem:
            continue
    marked = mark_sensitive(findings, data)
    return [
        replace(f, message=redact_text(f.message), hint=redact_text(f.hint) if f.hint else f.hint)
        for f in marked
    ]


def write_report(text: str, output_file: Path | None, err: bool = False) -> None:
    """Write a report to ``output_file``, else to standard output (standard error with ``err``).

    Credential shapes are replaced in the whole text.  The file is written as every file gpuspec names is
    (:func:`gpuspec.loader.safefile.safe_write`): never through a symbolic link, never into a FIFO, device or
    ``.git``, replaced atomically.  A file that cannot be written (missing folder, no permission, a folder of
    that name, a link) is a clear GpuspecError (exit 2), never an internal error.
    """
    from gpuspec.loader.safefile import safe_write

    text = redact_text(text)  # a last net: no credential shape leaves gpuspec in any report
    if output_file is None:
        click.echo(text, nl=False, err=err)
        return
    safe_write(output_file, text, what="the report",
               hint="pass --output a file in an existing, writable folder")


def emit_report(
    findings: Sequence[Finding],
    output_format: str,
    command: str,
    output_file: Path | None = None,
    rule_docs: dict[str, Entry] | None = None,
    summary: str | None = None,
    *,
    raw: Mapping[str, Any] | None = None,
    err: bool = False,
    located: bool = False,
    suppressed: Sequence[Suppressed] = (),
    successful: bool = True,
) -> list[Finding]:
    """Locate, redact and render findings in ``output_format``, write the report; return the located findings.

    The one report path of every command: credentials never reach a report (see :func:`redact_findings`),
    and an unwritable ``output_file`` is an exit-2 error.  ``err`` writes to standard error instead of
    standard output; ``located`` says the findings already carry their positions.  Reporters see the
    catalogue entry of every id that fired; ``rule_docs`` adds entries the catalogue does not hold (an
    organisation's custom rules).  ``suppressed`` findings (located) appear only where a format can mark them
    suppressed (SARIF); ``successful`` False says the input was unusable (SARIF ``executionSuccessful``).
    """
    report = prepare_report(findings, summary, raw=raw, located=located, suppressed=suppressed,
                            successful=successful)
    publish_report(report, output_format, command, output_file, rule_docs, err=err)
    return report.findings


def prepare_report(
    findings: Sequence[Finding],
    summary: str | None = None,
    *,
    raw: Mapping[str, Any] | None = None,
    located: bool = False,
    suppressed: Sequence[Suppressed] = (),
    successful: bool = True,
) -> Report:
    """Findings and suppressed findings as every report shows them: located and redacted (see
    :func:`emit_report` for the arguments)."""
    if not located:
        from gpuspec.loader.positions import locate_findings

        findings = locate_findings(findings)
    shown = redact_findings(list(findings), raw)
    hidden = redact_findings([s.finding for s in suppressed], raw)
    kept = [replace(s, finding=f) for s, f in zip(suppressed, hidden, strict=True)]
    return Report(shown, kept, summary, successful)


def validation_report(result: ValidationResult) -> Report:
    """The report of a validation (the whole fleet's or a chunk's): located, redacted findings and the findings
    policy exceptions accept."""
    return prepare_report(result.findings, raw=result.load.raw, successful=result.usable,
                          suppressed=[a.suppressed() for a in result.accepted])


def validation_parts(result: ValidationResult) -> tuple[list[Finding], list[Suppressed]]:
    """The findings and suppressed findings of :func:`validation_report` (what a chunked run merges)."""
    report = validation_report(result)
    return list(report.findings), list(report.suppressed)


def publish_report(
    report: Report,
    output_format: str,
    command: str,
    output_file: Path | None = None,
    rule_docs: Mapping[str, Entry] | None = None,
    *,
    err: bool = False,
    omit_suppressed: bool = False,
) -> None:
    """Render a prepared report in ``output_format`` and write it (``omit_suppressed`` leaves the suppressed
    findings out)."""
    from gpuspec.report.base import ReportContext

    hidden = () if omit_suppressed else report.suppressed
    fired = (*report.findings, *(s.finding for s in hidden))
    docs: dict[str, Entry] = {}
    if fired:  # the catalogue is imported only when there is something to explain
        from gpuspec.catalogue import CATALOGUE

        docs = {f.rule_id: CATALOGUE[f.rule_id] for f in fired if f.rule_id in CATALOGUE}
    stream = sys.stderr if err else sys.stdout
    context = ReportContext(
        tool_version=__version__, command=command, rule_docs={**docs, **(rule_docs or {})},
        color=output_file is None and output_format == "text" and use_color(stream),
        summary=report.summary, suppressed=list(hidden), execution_successful=report.usable,
    )
    text = reporter(output_format).render(report.findings, context)
    write_report(text, output_file, err)
    if output_file is not None and not report.usable and report.findings:
        # Unusable input (exit 2) is never silent: the report went to a file (a CI artifact nobody opens), so the
        # errors are also written to standard error, where the job log shows them.
        plain = replace(context, color=False)
        write_report(f"gpuspec: the input is unusable; the {output_format} report is in {output_file}:\n"
                     + reporter("text").render(report.findings, plain), None, err=True)


def exit_code(findings: Sequence[Finding], fail_on: Severity = Severity.ERROR) -> int:
    """Exit code for findings: 1 when any is at or above ``fail_on``, else 0."""
    return exitcodes.FINDINGS if any(f.severity.rank >= fail_on.rank for f in findings) else exitcodes.OK
