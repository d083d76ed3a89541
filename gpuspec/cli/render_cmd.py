"""`gpuspec render`: validate, then compile the fleet into rendered/ (or check that rendered/ is current)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack, suppress
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpuspec import exitcodes
from gpuspec.cli.common import (
    DEFAULT_RENDERED,
    emit_report,
    fleet_argument,
    outside_git,
    policies_option,
    publish_report,
    today_option,
)
from gpuspec.cli.resultcache import Report
from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding
from gpuspec.loader.files import cluster_files
from gpuspec.redaction import redact_text

if TYPE_CHECKING:
    from gpuspec.pipeline.render import Prepared, Rendered
    from gpuspec.render.inputs import InputDigests, InputStates
    from gpuspec.render.stamp import RenderStamp


def report_findings(findings: Sequence[Finding], command: str, *, located: bool = False,
                    raw: Mapping[str, Any] | None = None) -> list[Finding]:
    """Print findings as text on standard error (standard output stays for the diff / summary).

    Goes through the shared report path (credentials redacted).  Returns them located (line, column, spec
    path); ``located=True`` when they already are.
    """
    if not findings:
        return []
    return emit_report(findings, "text", command, raw=raw, err=True, located=located)


def prepared_or_exit(fleet_dir: Path, policies_dir: Path, command: str, *, render: bool = True,
                     only: Sequence[str] | None = None, today: date | None = None, pages_only: bool = False,
                     out_dir: Path | None = None) -> Prepared:
    """Validate and compile; on unusable input exit 2, on errors exit 1 (after printing the findings).

    ``render=False``: validate and list images only (see :func:`gpuspec.pipeline.render.prepare`).
    ``today``: the day policy exceptions expire against (default: today in UTC).  ``pages_only``: the handover
    documents and their index alone, a large fleet a chunk at a time (their bytes wait next to ``out_dir``).
    """
    return _prepared(fleet_dir, policies_dir, command, render=render, only=only, today=today, out_dir=out_dir,
                     chunked=pages_only, pages_only=pages_only)[0]


def _prepared(fleet_dir: Path, policies_dir: Path, command: str, *, render: bool = True,
              only: Sequence[str] | None = None, today: date | None = None,
              stamp: RenderStamp | None = None, out_dir: Path | None = None,
              chunked: bool = False, inputs: InputDigests | None = None,
              pages_only: bool = False) -> tuple[Prepared, list[Finding]]:
    """Validate and render (``chunked``: a large fleet a chunk of clusters at a time, see
    :mod:`gpuspec.pipeline.render_chunked`; ``inputs``: the input digests read before; ``pages_only``: the
    handover documents alone), print the findings; exit 2 or 1 as :func:`prepared_or_exit`."""
    from gpuspec.pipeline.render import prepare

    if only and fleet_dir.is_dir():
        _check_cluster_names(fleet_dir, only)
    # Rendered bytes wait on the output's disk (next to the output folder), not in memory.
    near = out_dir.absolute().parent if out_dir is not None else None
    streamed = _prepared_in_chunks(fleet_dir, policies_dir, today, stamp, near, inputs, pages_only) \
        if chunked and not only else None
    if streamed is not None:
        prepared = streamed
        reported = _publish_prepared(prepared.validation.findings, command)
    else:
        prepared = prepare(fleet_dir, policies_dir, only, render=render, today=today, stamp=stamp, spool_near=near,
                           inputs=inputs, pages_only=pages_only)
        reported = report_findings(prepared.validation.findings, command, raw=prepared.validation.load.raw)
    if not prepared.validation.usable:
        raise SystemExit(exitcodes.INPUT_ERROR)
    if prepared.rendered is None:
        click.echo(f"gpuspec {command}: the fleet has errors; nothing was written", err=True)
        raise SystemExit(exitcodes.FINDINGS)
    return prepared, reported


def _publish_prepared(findings: Sequence[Finding], command: str) -> list[Finding]:
    """Print findings already in report form (located and redacted chunk by chunk, as
    :func:`_prepared_in_chunks` gives them) as :func:`report_findings` prints findings; return them."""
    if findings:
        publish_report(Report(list(findings)), "text", command, err=True)
    return list(findings)


def _prepared_in_chunks(fleet_dir: Path, policies_dir: Path, today: date | None, stamp: RenderStamp | None,
                        near: Path | None, inputs: InputDigests | None = None,
                        pages_only: bool = False) -> Prepared | None:
    """The render of a fleet large enough to be validated and rendered in chunks, else None; its findings are
    located and redacted."""
    from gpuspec.cli.common import validation_parts
    from gpuspec.pipeline.render_chunked import prepare_in_chunks

    done = prepare_in_chunks(fleet_dir, policies_dir, validation_parts, today=today, stamp=stamp, spool_near=near,
                             inputs=inputs, pages_only=pages_only)
    return done.prepared if done is not None else None


def _check_cluster_names(fleet_dir: Path, names: Sequence[str]) -> None:
    """Refuse names of clusters the fleet has no file for, before anything is read."""
    known = {p.name.rsplit(".", 1)[0] for p in cluster_files(fleet_dir)}
    unknown = sorted(set(names) - known)
    if unknown:
        raise GpuspecError(f"no cluster named {', '.join(unknown)} in {fleet_dir}",
                           hint=f"clusters: {', '.join(sorted(known))}")


def _summary(out_dir: Path, check: bool, files: int, clusters: int, written: int = 0, deleted: int = 0) -> str:
    if check:
        return f"{out_dir}: up to date ({files} files, {clusters} clusters)"
    return (f"rendered {clusters} cluster(s) into {out_dir}: {written} written, "
            f"{files - written} unchanged, {deleted} deleted")


def _stale_reason(out_dir: Path) -> str:
    """Why the output differs: a hand edit or stale output, or output of another gpuspec version."""
    from gpuspec.loader.safefile import UnsafeFile, read_bounded
    from gpuspec.render.generator import STAMP_PATH, current_version, stamp_version

    try:  # the stamp is a few lines: an oversized or special file is not read
        recorded = stamp_version(read_bounded(out_dir / STAMP_PATH, 64 * 1024))
    except (OSError, UnsafeFile):
        recorded = None
    running = current_version()
    if recorded is not None and recorded != running:
        return (f"differ from what gpuspec {running} renders (they were written by gpuspec {recorded}; "
                "re-rendering records this version as a regeneration)")
    return "are stale or hand-edited"


def _input_digests(fleet_dir: Path, policies_dir: Path) -> InputDigests | None:
    """The inputs' digests, read before validation; None when one cannot be read safely (validation reports it)."""
    from gpuspec.render.inputs import read_input_digests

    try:
        return read_input_digests(fleet_dir, policies_dir)
    except (GpuspecError, OSError):
        return None


def _override_states(fleet_dir: Path) -> InputStates:
    """The state of every template override file now (each must be in it once the output is made)."""
    import os

    from gpuspec.render.filestate import file_state
    from gpuspec.templating.environment import override_dir

    states: InputStates = {}
    folder = override_dir(fleet_dir)
    if folder is not None:
        for root, _dirs, names in os.walk(folder):
            for name in names:
                path = os.path.join(root, name)
                with suppress(OSError):  # the render itself reports a file it cannot read
                    states[f"override:{path}"] = (path, file_state(os.stat(path)))
    return states


@click.command("render")
@fleet_argument
@policies_option
@click.option("--out", "out_dir", default=str(DEFAULT_RENDERED), show_default=True,
              type=click.Path(path_type=Path, file_okay=False), callback=outside_git, help="Output folder.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff when the output folder is stale.")
@click.option("--base", "base", metavar="REV",
              help="With --check: compare with the output of git revision REV (a pull request's target branch): "
                   "clusters whose inputs did not change must be byte for byte the base's, the others are rendered.")
@click.option("--full", is_flag=True, envvar="GPUSPEC_CHECK_FULL",
              help="With --check --base: render and compare every cluster all the same (a protected branch).")
@today_option
def render_command(fleet_dir: Path, policies_dir: Path, out_dir: Path, check: bool, base: str | None, full: bool,
                   today: date | None) -> None:
    """Compile the fleet into pinned Helm values, Kustomize overlays and Argo CD / Flux objects.

    Runs `validate` first: any error writes nothing (exit 1), unusable input exits 2.
    Findings a policy exception accepts are recorded in the cluster's
    deviations.yaml and handover document, with owner and expiry.
    The output is byte-stable and written atomically; only changed files are
    rewritten and files of removed clusters are deleted. With --check nothing
    is written: exit 0 when the output folder is up to date, else exit 1 and
    print a unified diff. A check renders every cluster; with --base REV (the
    pull request's base) only the clusters whose inputs changed, and every
    other file must be byte for byte the base's: nothing the change commits
    is taken on trust.
    """
    from gpuspec.render.stamp import RenderStamp
    from gpuspec.render.writer import cleanup_stale, holds_lock, output_lock

    if base is not None and not check:
        raise click.UsageError("--base needs --check (a render writes every cluster's output)")
    if base is not None:
        from gpuspec.pipeline.render_base import base_commit

        base_commit(fleet_dir, base)  # a revision that names no commit is unusable input, whatever else holds
    with ExitStack() as stack:
        # Held from the stamp's look at the output to the write: no other render changes it meanwhile, so the
        # clusters the stamp proves current stay so.  (No folder to lock, or one we may not open: unlocked.)
        with suppress(OSError, GpuspecError):
            stack.enter_context(output_lock(out_dir))
        if not check and holds_lock(out_dir):
            # A transaction a killed run committed is completed before anything looks at the output (else its
            # files would change under the stamp's look); one that fails here fails again, and is reported, when
            # the output is written.
            with suppress(OSError, GpuspecError):
                cleanup_stale(out_dir.absolute().parent, out_dir.name)
        # The output's state, on the second core while this process hashes and validates (not for the gate:
        # it compares with the base, not with a stamp).
        ahead = RenderStamp.scan_ahead(fleet_dir, policies_dir, out_dir) if base is None or full else None
        if ahead is not None:
            stack.callback(ahead.close)
        from gpuspec.policy.acceptance import utc_today

        today = today or utc_today()
        # The gate (--base) hashes every input: the digest memo serves local runs only.
        stamp = RenderStamp.open(fleet_dir, policies_dir, out_dir, today, remembered=base is None, ahead=ahead)
        if stamp is not None:
            stack.callback(stamp.release_scan)
        stamped = stamp.current() if stamp is not None else None
        if stamped is not None and not check:
            from gpuspec.render.writer import stale_temporaries

            if stale_temporaries(out_dir):  # a killed run left a tree behind: write (and clean up) properly
                stamped = None
        if stamped is not None:
            # Inputs, gpuspec and every output file are exactly as after this user's last successful run (the
            # stamp is sealed in the user cache: nothing in the repository can forge it).
            report_findings(stamped.findings, "render", located=True)
            click.echo(_summary(out_dir, check, stamped.files, stamped.clusters))
            raise SystemExit(exitcodes.OK)
        if base is not None and not full:
            _check_against_base(fleet_dir, policies_dir, out_dir, base, today)
        _render_or_check(fleet_dir, policies_dir, out_dir, check, today, stamp)


def _check_against_base(fleet_dir: Path, policies_dir: Path, out_dir: Path, base: str, today: date) -> None:
    """Check the output against the base revision ``base`` and exit; return only when every cluster is to be
    rendered and compared (the reasons printed)."""
    from gpuspec.pipeline.render_base import Full, check_against_base

    outcome = check_against_base(fleet_dir, policies_dir, out_dir, base, today)
    if isinstance(outcome, Full):
        click.echo(redact_text(f"gpuspec render --check: checking every cluster: {'; '.join(outcome.reasons)}"),
                   err=True)
        return
    report_findings(outcome.validation.findings, "render", raw=outcome.validation.load.raw)
    if not outcome.validation.usable:
        raise SystemExit(exitcodes.INPUT_ERROR)
    if not outcome.renderable:
        click.echo("gpuspec render: the fleet has errors; nothing was checked", err=True)
        raise SystemExit(exitcodes.FINDINGS)
    for found in outcome.drifts:
        click.echo(redact_text(found.diff), nl=False)
    if outcome.drifts:
        click.echo(redact_text(f"gpuspec render --check: {len(outcome.drifts)} file(s) in {out_dir} "
                               f"{_stale_reason(out_dir)} (checked against the base {base}); run `gpuspec render` "
                               "and commit the result"), err=True)
        raise SystemExit(exitcodes.FINDINGS)
    changed = ", ".join(outcome.rendered) or "none"
    click.echo(redact_text(f"{out_dir}: up to date against {base} ({outcome.compared} files compared; "
                           f"clusters rendered: {changed})"))
    raise SystemExit(exitcodes.OK)


def _drop_output_index(rendered: Rendered) -> None:
    """Let go of where each output file's bytes lie (tens of megabytes for thousands of clusters) once the
    output is written or checked, before the stamp is built: the stamp needs the paths and digests only."""
    from gpuspec.render.spool import OutputFiles

    rendered.files = OutputFiles()


def _render_or_check(fleet_dir: Path, policies_dir: Path, out_dir: Path, check: bool, today: date,
                     stamp: RenderStamp | None) -> None:
    from gpuspec.render.inputs import unchanged
    from gpuspec.render.writer import check_output, write_output

    # Every input is hashed before validation reads it, and must be in the same state once the output is made.
    digests = stamp.inputs if stamp is not None else _input_digests(fleet_dir, policies_dir)
    states = _override_states(fleet_dir)
    prepared, reported = _prepared(fleet_dir, policies_dir, "render", today=today, stamp=stamp, out_dir=out_dir,
                                   chunked=True, inputs=digests)
    rendered = prepared.rendered
    assert rendered is not None
    # The output's scan (under the lock held since): the writer need not list and stat the folder again.
    scanned = stamp.take_scan() if stamp is not None else None
    if (digests is not None and not digests.unchanged()) or not unchanged(states):
        # Validation and rendering read an input after it was hashed: the output and the stamp would each
        # describe other bytes.
        what = "checked the output" if check else "rendered; nothing was written"
        raise GpuspecError(f"a file in the fleet or policy folder changed while gpuspec {what}",
                           hint="run the command again once the edit is saved")
    expected, kept = rendered.files, rendered.kept
    count = len(rendered.clusters)
    if check:
        del scanned  # a check compares every file it does not reuse
        drifts = check_output(out_dir, expected, out_dir.name or "rendered", stamp=True, kept=kept)
        for found in drifts:
            click.echo(redact_text(found.diff), nl=False)
        if drifts:
            reason = _stale_reason(out_dir)
            click.echo(redact_text(f"gpuspec render --check: {len(drifts)} file(s) in {out_dir} {reason}; "
                                   "run `gpuspec render` and commit the result"), err=True)
            raise SystemExit(exitcodes.FINDINGS)
        total = len(expected) + len(kept) + 1
        del expected
        if stamp is not None:
            _drop_output_index(rendered)
            stamp.save(reported, total, count, rendered.parts())
        click.echo(_summary(out_dir, True, total, count))
        raise SystemExit(exitcodes.OK)
    result = write_output(out_dir, expected, stamp=True, kept=kept, scanned=scanned)
    del scanned
    files = len(result.written) + len(result.unchanged)
    del expected
    if stamp is not None:
        _drop_output_index(rendered)
        stamp.save(reported, files, count, rendered.parts(), result.tree)
    click.echo(_summary(out_dir, False, files, count, len(result.written), len(result.deleted)))
    raise SystemExit(exitcodes.OK)
