"""`gpuspec upgrade --apply N`: write one step's spec edits into the working tree, in place and atomically."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gpuspec.errors import GpuspecError
from gpuspec.history.gitread import list_tree, relative_to_repo, repo_root, resolve_commit
from gpuspec.history.revision import blob_texts
from gpuspec.loader.fleetload import display_path
from gpuspec.loader.safefile import UnsafeFile, check_write
from gpuspec.pipeline.upgrade.check import digest, read_texts
from gpuspec.pipeline.upgrade.edits import apply_edit, lookup, scalar_text, write_atomic
from gpuspec.pipeline.upgrade.model import Step


def texts_at(fleet_dir: Path, rev: str) -> dict[str, str]:
    """The spec texts of the fleet folder at git revision ``rev`` (by path relative to the folder), read bounded as
    ``plan --base`` reads them: an oversized or non-UTF-8 file is a GpuspecError (exit 2) naming it."""
    root = repo_root(fleet_dir)
    commit = resolve_commit(root, rev)
    rel = relative_to_repo(root, fleet_dir)
    entries = [e for e in list_tree(root, commit, rel) if not e.is_symlink and not e.is_submodule]
    prefix = rel.strip("/") + "/" if rel.strip("/") not in ("", ".") else ""
    wanted = {
        e.path[len(prefix) :]: e
        for e in entries
        if e.path[len(prefix) :] == "fleet.yaml"
        or (
            e.path[len(prefix) :].startswith("clusters/")
            and e.path.endswith((".yaml", ".yml"))
            and e.path[len(prefix) :].count("/") == 1
        )
    }
    if "fleet.yaml" not in wanted:
        raise GpuspecError(f"{rel}/fleet.yaml is not in revision {rev}")
    return blob_texts(root, rev, wanted)


def _dirty(path: Path) -> bool:
    """True when ``path`` differs from HEAD in its git work tree (False outside git)."""
    try:
        proc = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--", path.name], cwd=path.parent, capture_output=True, check=False
        )
    except OSError:
        return False
    return proc.returncode == 1


def apply_step(fleet_dir: Path, step: Step, *, force: bool = False) -> list[Path]:
    """Write ``step``'s edits into the spec files of ``fleet_dir``; the files it wrote.

    The spec files must be those the step starts from and a file with uncommitted changes is refused, unless
    ``force``; every edited key must hold what the step expects before it: GpuspecErrors (exit 2), raised before
    anything is written.
    """
    texts = read_texts(fleet_dir)
    if not force and step.starts_from and digest(texts) != step.starts_from:
        raise GpuspecError(
            f"the spec in {display_path(fleet_dir)} is not at the state before step {step.number}: its files differ "
            "from what the plan expects there",
            hint="apply the earlier steps first and commit each, or plan from the revision they start from "
            "(`--from REV`), or plan again from the working tree and apply step 1",
        )
    new = dict(texts)
    for edit in step.edits:
        if edit.file not in new:
            raise GpuspecError(f"{display_path(fleet_dir / edit.file)} does not exist")
        if edit.comment is not None:  # a comment changes no value: it goes above the value the step edits
            new[edit.file] = apply_edit(new[edit.file], edit)
            continue
        held = lookup(new[edit.file], edit.file, edit.path)
        held_scalar = held if isinstance(held, (str, int, bool)) else None
        if (held_scalar == edit.value and held is not None) or (held is None and edit.value is None):
            continue  # already as the step wants it
        if held_scalar != edit.before or (held is not None and held_scalar is None):
            now = "absent" if held is None else scalar_text(held_scalar) if held_scalar is not None else "a mapping"
            expected = "absent" if edit.before is None else scalar_text(edit.before)
            raise GpuspecError(
                f"{display_path(fleet_dir / edit.file)}: {edit.shown} is {now}, but step {step.number} starts from "
                f"{expected}: the working tree is not at the state before step {step.number}",
                hint="apply the earlier steps first, or plan from the revision they start from "
                "(`--from REV`), or plan again from the working tree and apply step 1",
            )
        new[edit.file] = apply_edit(new[edit.file], edit)
    changed = [name for name in new if new[name] != texts[name]]
    paths = [fleet_dir / name for name in changed]
    if not force:
        dirty = [p for p in paths if _dirty(p)]
        if dirty:
            raise GpuspecError(
                f"{display_path(dirty[0])} has uncommitted changes; step {step.number} would mix with them",
                hint="commit or stash them first, or pass --force",
            )
    for path in paths:  # every file is checked before the first is written (safe_write checks each again)
        try:
            check_write(path)
        except UnsafeFile as refused:
            raise GpuspecError(
                f"{display_path(path)} {refused.message}; nothing was written",
                hint="gpuspec edits only regular spec files: edit the file a link points to, or replace the link "
                "by the file",
            ) from None
    for name, path in zip(changed, paths, strict=True):
        write_atomic(path, new[name], shown=display_path(path))
    return paths
