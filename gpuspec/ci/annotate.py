"""After a gpuspec check exited 2 (unusable input) in a GitHub job: its errors as annotations and in the summary.

Run by the action's steps as ``python -m gpuspec.ci.annotate [--summary-only] CHECK STDERR_FILE [FLEET [POLICIES]]``
(``--summary-only``: the check printed its annotations itself, as ``lint --format github`` does).  The errors
of the spec itself (a typo, a broken policy pack) become ``::error file=…,line=…,col=…::`` annotations on their
lines, from ``gpuspec lint --format github``; an error that names no spec line (a base revision git does not know,
an output folder that cannot be read) becomes one ``::error title=gpuspec CHECK::`` annotation with the message the
check printed.  The same text goes to the job summary (``GITHUB_STEP_SUMMARY``) under a heading that says nothing
was checked.  Exit 0: the step that ran the check exits 2 itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

#: Most bytes of the check's standard error read (messages, not a dump).
MAX_ERR_BYTES = 64 * 1024
#: Most lines of the check's messages put into one annotation.
ANNOTATION_LINES = 20


def escape_data(text: str) -> str:
    """``text`` as the message of a workflow command (``%``, CR and LF escaped, as the runner unescapes them)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def spec_annotations(fleet: str, policies: str) -> list[str]:
    """The ``::error`` annotations ``gpuspec lint`` gives the unusable spec (none when the spec is usable)."""
    proc = subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "lint", fleet, "--policies", policies,
                           "--format", "github"], capture_output=True, text=True, check=False, timeout=1800)
    if proc.returncode != 2:
        return []
    return [line for line in proc.stdout.splitlines() if line.startswith("::error ")]


def check_annotations(check: str, message: str, fleet: str, policies: str) -> list[str]:
    """The annotations of an exit-2 run of ``check`` whose messages were ``message``."""
    found = spec_annotations(fleet, policies)
    if found:
        return found
    lines = [line for line in message.splitlines() if line.strip()][:ANNOTATION_LINES]
    text = "\n".join(lines) or f"gpuspec {check} exited 2 (unusable input or usage error) without a message"
    return [f"::error title=gpuspec {check}::{escape_data(text)}"]


def summary(check: str, message: str) -> str:
    """The job summary's section for an exit-2 run of ``check``."""
    fence = _fence(message)
    return (f"### gpuspec {check}: unusable input (exit 2)\n\n"
            "Nothing was checked: gpuspec could not use the input. Fix what it names (the annotations mark the "
            "lines) and push again.\n\n"
            f"{fence}text\n{message.rstrip()}\n{fence}\n")


def main(argv: list[str]) -> int:
    """``[--summary-only] CHECK STDERR_FILE [FLEET [POLICIES]]``: print the annotations, append the summary; exit 0
    (64: usage)."""
    summary_only = bool(argv) and argv[0] == "--summary-only"
    argv = argv[1:] if summary_only else argv
    if not 2 <= len(argv) <= 4:
        print("usage: python -m gpuspec.ci.annotate [--summary-only] CHECK STDERR_FILE [FLEET [POLICIES]]",
              file=sys.stderr)
        return 64
    check, err_file = argv[0], Path(argv[1])
    fleet = argv[2] if len(argv) > 2 else "fleet"
    policies = argv[3] if len(argv) > 3 else "policies"
    try:
        with err_file.open("rb") as handle:
            message = handle.read(MAX_ERR_BYTES).decode("utf-8", "replace")
    except OSError:
        message = ""
    if not summary_only:
        print("\n".join(check_annotations(check, message, fleet, policies)), flush=True)
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(summary(check, message))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
