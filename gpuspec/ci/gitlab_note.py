"""Post a Markdown file as one merge-request note on GitLab, updating gpuspec's earlier note on later pushes.

Run in a GitLab CI merge-request pipeline as ``python -m gpuspec.ci.gitlab_note FILE``. It reads GitLab's
predefined variables (``CI_API_V4_URL``, ``CI_PROJECT_ID``, ``CI_MERGE_REQUEST_IID``) and the token in
``GPUSPEC_GITLAB_TOKEN`` (a project access token with the ``api`` scope; the job token cannot write notes).
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

#: The first line of every note gpuspec posts: how a later run finds the note to update.
MARKER = "<!-- gpuspec-plan -->"
#: GitLab refuses notes longer than 1,000,000 characters.
LIMIT = 1_000_000
_TRUNCATED = "\n\n_(truncated; the full plan is in the job's artifacts)_\n"


class NoteError(Exception):
    """The note could not be posted (missing variables, an HTTP error): one line for the job log."""


def note_body(text: str) -> str:
    """The note's body: the marker first, cut to GitLab's limit."""
    body = text if text.startswith(MARKER) else f"{MARKER}\n{text}"
    return body if len(body) <= LIMIT else body[: LIMIT - len(_TRUNCATED)] + _TRUNCATED


def _request(method: str, url: str, token: str, payload: dict[str, str] | None = None) -> Any:
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"PRIVATE-TOKEN": token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as err:
        raise NoteError(f"GitLab answered {err.code} to {method} {urllib.parse.urlsplit(url).path}") from None
    except (urllib.error.URLError, TimeoutError, ValueError) as err:
        raise NoteError(f"cannot reach GitLab's API: {err}") from None


def post_note(text: str, environ: dict[str, str]) -> str:
    """Create or update gpuspec's note on the merge request; return ``created`` or ``updated``."""
    try:
        api, project, mr, token = (environ[k] for k in (
            "CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID", "GPUSPEC_GITLAB_TOKEN"))
    except KeyError as missing:
        raise NoteError(f"{missing.args[0]} is not set (run in a merge-request pipeline)") from None
    notes = f"{api.rstrip('/')}/projects/{urllib.parse.quote(project, safe='')}/merge_requests/{mr}/notes"
    body = note_body(text)
    page = 1
    while True:
        listed = _request("GET", f"{notes}?per_page=100&page={page}&sort=asc", token)
        if not isinstance(listed, list):
            raise NoteError("GitLab's notes API did not return a list")
        for note in listed:
            if isinstance(note, dict) and str(note.get("body", "")).startswith(MARKER):
                _request("PUT", f"{notes}/{note['id']}", token, {"body": body})
                return "updated"
        if len(listed) < 100:
            break
        page += 1
    _request("POST", notes, token, {"body": body})
    return "created"


def main(argv: list[str] | None = None) -> int:
    """Post the file named on the command line; exit 0 when posted, 1 when GitLab refused, 2 on usage errors."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m gpuspec.ci.gitlab_note FILE", file=sys.stderr)
        return 2
    from gpuspec.errors import GpuspecError
    from gpuspec.loader.safefile import safe_read

    try:  # read as every file read by name is: never .git/config (the job's token), a FIFO or a device
        data = safe_read(Path(args[0]), 4 * LIMIT, expected="a Markdown file")
        text = (data or b"").decode("utf-8")
    except GpuspecError as err:
        print(f"gitlab_note: {err}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as err:
        print(f"gitlab_note: cannot read {args[0]}: {err}", file=sys.stderr)
        return 2
    try:
        done = post_note(text, dict(os.environ))
    except NoteError as err:
        print(f"gitlab_note: {err}", file=sys.stderr)
        return 1
    print(f"gitlab_note: merge-request note {done}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
