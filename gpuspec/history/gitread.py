"""Read files at a git revision straight from git objects, without a checkout.

Everything goes through ``git`` subprocesses with argument lists (never a
shell): ``rev-parse`` to resolve a revision, ``ls-tree`` to list files and
``cat-file --batch`` to read many blobs in one process.  This works in a
shallow CI clone as long as the base commit has been fetched.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpuspec.errors import GpuspecError
from gpuspec.tools.discover import find_git

#: Seconds one git command may run.
GIT_TIMEOUT = 60.0

SHALLOW_HINT = (
    "check the spelling; in a shallow CI clone fetch the base first, "
    "e.g. `git fetch --depth=1 origin main` and pass --base origin/main"
)


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One file of a git tree: its repository-relative path, mode, blob id and size in bytes."""

    path: str
    mode: str
    object_id: str
    size: int

    @property
    def is_symlink(self) -> bool:
        """True when the entry is a symbolic link (mode 120000)."""
        return self.mode == "120000"

    @property
    def is_submodule(self) -> bool:
        """True when the entry is a submodule commit (mode 160000)."""
        return self.mode == "160000"


def _git(repo_root: Path, args: Sequence[str], *, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    git = find_git()
    env = dict(os.environ)
    env.setdefault("LC_ALL", "C")
    env["GIT_TERMINAL_PROMPT"] = "0"
    try:
        return subprocess.run(
            [os.fspath(git), "-C", os.fspath(repo_root), *args],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise GpuspecError(f"git {args[0]} did not finish within {GIT_TIMEOUT:.0f}s in {repo_root}") from None
    except OSError as exc:
        raise GpuspecError(f"cannot run git: {exc.strerror or exc}") from None


def _stderr(proc: subprocess.CompletedProcess[bytes]) -> str:
    text = proc.stderr.decode("utf-8", errors="replace").strip()
    return text.splitlines()[-1] if text else f"exit code {proc.returncode}"


def repo_root(start: Path) -> Path:
    """The root of the git work tree that contains ``start`` (a file or folder)."""
    folder = start if start.is_dir() else start.parent
    if not folder.exists():
        folder = Path.cwd()
    proc = _git(folder, ["rev-parse", "--show-toplevel"])
    if proc.returncode != 0:
        raise GpuspecError(
            f"{start} is not inside a git repository: {_stderr(proc)}",
            hint="gpuspec plan and change-set rules compare the working tree with a git revision",
        )
    return Path(proc.stdout.decode("utf-8", errors="replace").strip())


def resolve_commit(repo_root: Path, rev: str) -> str:
    """The full commit id ``rev`` names in ``repo_root``; a clear error when it names no commit."""
    if not rev or rev.startswith("-") or any(c.isspace() or c == "\0" for c in rev):
        raise GpuspecError(f"{rev!r} is not a git revision", hint=SHALLOW_HINT)
    proc = _git(repo_root, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"])
    if proc.returncode != 0:
        raise GpuspecError(f"unknown git revision {rev!r} in {repo_root}", hint=SHALLOW_HINT)
    return proc.stdout.decode("ascii", errors="replace").strip()


def list_tree(repo_root: Path, commit: str, folder: str) -> list[TreeEntry]:
    """Every file below ``folder`` (repository-relative, POSIX) at ``commit``, recursively, sorted by path."""
    spec = folder.strip("/") or "."
    proc = _git(repo_root, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", spec])
    if proc.returncode != 0:
        raise GpuspecError(f"cannot list {spec} at {commit[:12]}: {_stderr(proc)}", hint=SHALLOW_HINT)
    entries: list[TreeEntry] = []
    for record in proc.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        parts = meta.decode("ascii", errors="replace").split()
        if len(parts) != 4:
            continue
        mode, _kind, object_id, size = parts
        entries.append(
            TreeEntry(
                name.decode("utf-8", errors="surrogateescape"), mode, object_id, int(size) if size.isdigit() else 0
            )
        )
    return sorted(entries, key=lambda e: e.path)


def read_blobs(repo_root: Path, object_ids: Sequence[str]) -> dict[str, bytes]:
    """The contents of the given blobs, read with one ``git cat-file --batch`` process."""
    wanted = list(dict.fromkeys(object_ids))
    if not wanted:
        return {}
    proc = _git(repo_root, ["cat-file", "--batch"], stdin="".join(f"{o}\n" for o in wanted).encode("ascii"))
    if proc.returncode != 0:
        raise GpuspecError(f"git cat-file failed: {_stderr(proc)}")
    out = proc.stdout
    blobs: dict[str, bytes] = {}
    pos = 0
    for object_id in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode("ascii", errors="replace").split()
        pos = end + 1
        if len(header) != 3:
            raise GpuspecError(f"git object {object_id} is missing", hint=SHALLOW_HINT)
        size = int(header[2])
        blobs[object_id] = out[pos : pos + size]
        pos += size + 1
    return blobs


def changed_paths(repo_root: Path, commit: str) -> list[str]:
    """Repository-relative paths that differ between ``commit`` and the working tree, untracked files included."""
    diff = _git(repo_root, ["diff", "--name-only", "--no-renames", "-z", commit, "--"])
    if diff.returncode != 0:
        raise GpuspecError(f"git diff against {commit[:12]} failed: {_stderr(diff)}", hint=SHALLOW_HINT)
    untracked = _git(repo_root, ["ls-files", "--others", "--exclude-standard", "-z", "--full-name"])
    if untracked.returncode != 0:
        raise GpuspecError(f"git ls-files failed: {_stderr(untracked)}")
    names = {
        n.decode("utf-8", errors="surrogateescape")
        for n in (*diff.stdout.split(b"\0"), *untracked.stdout.split(b"\0"))
        if n
    }
    return sorted(names)


def relative_to_repo(repo_root: Path, path: Path) -> str:
    """``path`` as a repository-relative POSIX path; an error when it lies outside the repository."""
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        rel = Path(os.path.normpath(absolute)).relative_to(os.path.normpath(repo_root.resolve()))
    except ValueError:
        try:
            rel = absolute.resolve().relative_to(repo_root.resolve())
        except ValueError:
            raise GpuspecError(f"{path} is outside the git repository {repo_root}") from None
    text = PurePosixPath(*rel.parts).as_posix()
    return "" if text == "." else text
