"""Remember a successful render so that re-rendering or checking unchanged inputs costs little more than
hashing them.

After ``gpuspec render`` (or a clean ``render --check``) a stamp goes into the user cache: a digest of every
input file's bytes and of gpuspec's own code, the findings that were reported, and the size, mtime, ctime
and inode of every file in the output folder.  When the inputs hash the same and the output folder's files
are exactly the stamped ones, neither has changed since, so the output is current: the stored findings are
reported again and nothing is validated, compiled or compared.  Any edit of an output file (even with its
mtime restored) changes its ctime, so a hand-edited file always takes the full path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuspec import usercache
from gpuspec.findings import Finding, Severity
from gpuspec.render.inputs import read_input_digests
from gpuspec.templating.environment import override_files

#: relative path → (size, mtime_ns, ctime_ns, inode)
TreeState = dict[str, tuple[int, int, int, int]]


def tree_state(out: Path) -> TreeState | None:
    """The stat fingerprint of every regular file below ``out``; None when absent or holding anything else."""
    state: TreeState = {}
    stack = [("", os.fspath(out))]
    try:
        if out.is_symlink() or not out.is_dir():
            return None
        while stack:
            rel, folder = stack.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = rel + entry.name
                    if entry.is_symlink():
                        return None
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((name + "/", entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        state[name] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                    else:
                        return None
    except OSError:
        return None
    return state


def _finding_data(finding: Finding) -> tuple[Any, ...]:
    return (finding.rule_id, finding.severity.value, finding.message, finding.file, finding.path, finding.hint,
            finding.at_key, finding.line, finding.column, finding.spec_path, finding.tags)


def _finding(data: tuple[Any, ...]) -> Finding:
    rule_id, severity, message, file, path, hint, at_key, line, column, spec_path, tags = data
    return Finding(rule_id, Severity(severity), message, file, tuple(path), hint, at_key, line, column, spec_path,
                   tuple(tags))


@dataclass(frozen=True)
class Stamped:
    """What the last successful render of unchanged inputs reported."""

    findings: list[Finding]
    files: int
    clusters: int


@dataclass(frozen=True)
class RenderStamp:
    """The stamp slot of one (fleet, policies, output) triple and the digest of the inputs as they are now."""

    path: Path
    key: str
    out: Path

    @classmethod
    def open(cls, fleet_dir: Path, policies_dir: Path | None, out: Path,
             today: dt.date | None = None) -> RenderStamp | None:
        """Hash the inputs; None when caching is off or an input cannot be read (the full path reports why).

        ``today`` (the day policy exceptions expire against; default today in UTC) is part of the key: a stamp
        of yesterday's run does not vouch for an exception that expired overnight.
        """
        slot = usercache.entry_path("render", os.getcwd(), os.fspath(fleet_dir), os.fspath(policies_dir or ""),
                                    os.path.abspath(out))
        if slot is None:
            return None
        try:
            inputs = read_input_digests(fleet_dir, policies_dir)
        except (OSError, ValueError):
            return None
        digest = hashlib.sha256(usercache.code_fingerprint().encode())
        day = today or dt.datetime.now(dt.UTC).date()
        digest.update(f"today\0{day.isoformat()}\n".encode())
        templates = override_files(fleet_dir)
        for name, sha in sorted({**inputs.shared, **inputs.clusters, **templates}.items()):
            digest.update(f"{name}\0{sha}\n".encode("utf-8", "surrogateescape"))
        return cls(slot, digest.hexdigest(), out)

    def current(self) -> Stamped | None:
        """The stored result when inputs and output folder are exactly as stamped, else None."""
        data = usercache.load(self.path)
        if not isinstance(data, dict) or data.get("key") != self.key:
            return None
        if tree_state(self.out) != data.get("tree"):
            return None
        try:
            return Stamped([_finding(f) for f in data["findings"]], int(data["files"]), int(data["clusters"]))
        except (KeyError, TypeError, ValueError):
            return None

    def save(self, findings: list[Finding], files: int, clusters: int) -> None:
        """Stamp the output folder as it is now (call after it has been written or checked)."""
        tree = tree_state(self.out)
        if tree is None:
            return
        usercache.store(self.path, {"key": self.key, "tree": tree, "files": files, "clusters": clusters,
                                    "findings": [_finding_data(f) for f in findings]})
