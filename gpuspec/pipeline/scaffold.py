"""`gpuspec init`: the skeleton of a fleet repository that validates, lints and renders at once.

The commented files are shipped as text (``skeleton/``: comments are the point of a skeleton); the values that
vary (the fleet's name, its repository URL, where gpuspec comes from) are filled in and the result is parsed back,
so a broken template can never be written.  The editor schema is built as data from the spec models.

Where gpuspec comes from is :mod:`gpuspec.origin` (or ``init --source``): the workflow installs its pinned
requirement and uses its action pinned by commit, the pre-commit configuration pins its repository at that
commit.  A gpuspec that knows neither (a development build without ``--source``) writes no CI file rather than
one that cannot install gpuspec, and says so.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from gpuspec.errors import GpuspecError
from gpuspec.model.jsonschema import spec_schema
from gpuspec.origin import Origin, origin

SKELETON_DIR = Path(__file__).resolve().parent / "skeleton"

#: Output path → shipped template (paths relative to the new repository).
FILES: dict[str, str] = {
    "fleet/fleet.yaml": "fleet.yaml",
    "fleet/clusters/example.yaml": "cluster.yaml",
    "policies/site.yaml": "policy.yaml",
    ".github/workflows/gpuspec.yaml": "workflow.yaml",
    ".pre-commit-config.yaml": "pre-commit-config.yaml",
    ".gitignore": "gitignore.j2",
    "README.md": "README.md",
}
SCHEMA_FILE = "fleet/gpuspec.schema.json"
WORKFLOW_FILE = ".github/workflows/gpuspec.yaml"
PRE_COMMIT_FILE = ".pre-commit-config.yaml"
DEFAULT_REPO_URL = "https://git.example.com/platform/gpu-fleet.git"

_NAME = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True)
class Skeleton:
    """The files of a new fleet repository (relative path → bytes), and the CI files left out, with the reason."""

    files: dict[str, bytes]
    skipped: dict[str, str] = field(default_factory=dict)


def fleet_name(target: Path) -> str:
    """A DNS-label fleet name from the target folder's name (``gpu-fleet`` when nothing usable is left)."""
    name = _NAME.sub("-", Path(os.path.abspath(target)).name.lower()).strip("-")[:63].strip("-")
    return name if name and name[0].isalpha() else "gpu-fleet"


def _ci_values(source: Origin) -> tuple[dict[str, str], dict[str, str]]:
    """The template values of the CI files from ``source``, and the CI files it cannot fill (path → reason)."""
    skipped: dict[str, str] = {}
    values = {"@VERSION@": source.version}
    if source.action is None or source.install is None:
        skipped[WORKFLOW_FILE] = "needs gpuspec's GitHub repository and the commit to pin its action to"
    else:
        values |= {"@ACTION@": source.action, "@INSTALL@": json.dumps(source.install)}
    if source.repository is None or source.commit is None:
        skipped[PRE_COMMIT_FILE] = "needs gpuspec's repository and the commit to pin its hooks to"
    else:
        values |= {"@REPOSITORY@": json.dumps(source.repository), "@COMMIT@": source.commit}
    link = f"[gpuspec]({source.repository})" if source.repository else "gpuspec"
    ci = [f"CI (`{WORKFLOW_FILE}`) runs lint, `render --check` and plan on every pull request."
          if WORKFLOW_FILE not in skipped else "",
          f"`{PRE_COMMIT_FILE}` runs lint and render before each commit." if PRE_COMMIT_FILE not in skipped else ""]
    values |= {"@GPUSPEC@": link, "@CI@": "\n".join(filter(None, ci))}
    return values, skipped


def _check_ci(out: str, data: object, source: Origin) -> None:
    """A filled CI file names exactly the source it was filled from (the template's values parse back)."""
    if out == WORKFLOW_FILE:
        assert isinstance(data, dict)
        steps = [s for job in data["jobs"].values() for s in job["steps"] if s["uses"] == source.action]
        assert steps and all(s["with"]["gpuspec"] == source.install for s in steps), "workflow template"
    elif out == PRE_COMMIT_FILE:
        assert isinstance(data, dict)
        assert [(r["repo"], r["rev"]) for r in data["repos"]] == [(source.repository, source.commit)], "hooks"


def skeleton(name: str, repo_url: str = DEFAULT_REPO_URL, source: Origin | None = None) -> Skeleton:
    """The files of a fleet repository named ``name`` whose rendered output Argo CD / Flux sync from ``repo_url``;
    its CI installs gpuspec from ``source`` (default: :func:`gpuspec.origin.origin`).  The CI files ``source``
    cannot fill are left out (:attr:`Skeleton.skipped`)."""
    source = source or origin()
    ci_values, skipped = _ci_values(source)
    values = {"@NAME@": name, "@REPO_URL@": repo_url, **ci_values}
    files: dict[str, bytes] = {}
    for out, template in FILES.items():
        if out in skipped:
            continue
        text = (SKELETON_DIR / template).read_text(encoding="utf-8")
        for token, value in values.items():
            text = text.replace(token, value)
        if out.endswith(".yaml"):
            data = yaml.safe_load(text)  # a template that does not parse is a bug; never write it
            _check_ci(out, data, source)
        files[out] = text.encode("utf-8")
    files[SCHEMA_FILE] = (json.dumps(spec_schema("all"), indent=2, sort_keys=True) + "\n").encode("utf-8")
    return Skeleton(dict(sorted(files.items())), skipped)


def _occupied(target: Path) -> list[str]:
    """Entries of ``target`` (sorted names; empty when it does not exist)."""
    if not target.exists():
        return []
    if not target.is_dir():
        raise GpuspecError(f"{target} exists and is not a folder", hint="name a new or empty folder")
    return sorted(p.name for p in target.iterdir())


def write_skeleton(target: Path, files: Skeleton, *, force: bool = False) -> list[str]:
    """Write ``files`` below ``target`` (created when missing); return the paths written.

    A folder that holds anything is refused unless ``force`` (then the skeleton's files replace files of the
    same names; everything else stays).  Each file is written atomically and never through a link
    (:func:`gpuspec.loader.safefile.safe_write`); a name that is a symbolic link, a FIFO, device or folder, lies
    in ``.git`` or in a folder linked out of the repository is refused before anything is written.
    """
    present = _occupied(target)
    if present and not force:
        shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
        raise GpuspecError(f"{target} is not empty ({shown}); gpuspec init writes a new fleet repository",
                           hint="name a new or empty folder, or pass --force to write the skeleton's files into it "
                                "(files of the same names are replaced)")
    from gpuspec.loader.safefile import UnsafeFile, check_write, safe_write

    for rel in files.files:  # every name is checked before the first is written: a refusal leaves all as it was
        existing = target / rel
        try:
            check_write(existing)
        except UnsafeFile as refused:
            raise GpuspecError(f"{existing} {refused.message}; nothing was written") from None
    for rel, data in files.files.items():
        safe_write(target / rel, data, mode=0o644, parents=True)
    return list(files.files)
