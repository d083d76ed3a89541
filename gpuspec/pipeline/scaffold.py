"""`gpuspec init`: the skeleton of a fleet repository that validates, lints and renders at once.

The commented files are shipped as text (``skeleton/``: comments are the point of a skeleton); the values that
vary (the fleet's name, its repository URL, gpuspec's version) are filled in and the result is parsed back, so
a broken template can never be written.  The editor schema is built as data from the spec models.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpuspec import __version__
from gpuspec.errors import GpuspecError
from gpuspec.spec.jsonschema import spec_schema

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
DEFAULT_REPO_URL = "https://git.example.com/platform/gpu-fleet.git"

_NAME = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True)
class Skeleton:
    """The files of a new fleet repository: relative path → bytes."""

    files: dict[str, bytes]


def fleet_name(target: Path) -> str:
    """A DNS-label fleet name from the target folder's name (``gpu-fleet`` when nothing usable is left)."""
    name = _NAME.sub("-", Path(os.path.abspath(target)).name.lower()).strip("-")[:63].strip("-")
    return name if name and name[0].isalpha() else "gpu-fleet"


def skeleton(name: str, repo_url: str = DEFAULT_REPO_URL) -> Skeleton:
    """The files of a fleet repository named ``name`` whose rendered output Argo CD / Flux sync from ``repo_url``."""
    values = {"@NAME@": name, "@REPO_URL@": repo_url, "@VERSION@": __version__}
    files: dict[str, bytes] = {}
    for out, template in FILES.items():
        text = (SKELETON_DIR / template).read_text(encoding="utf-8")
        for token, value in values.items():
            text = text.replace(token, value)
        if out.endswith(".yaml"):
            yaml.safe_load(text)  # a template that does not parse is a bug; never write it
        files[out] = text.encode("utf-8")
    files[SCHEMA_FILE] = (json.dumps(spec_schema("all"), indent=2, sort_keys=True) + "\n").encode("utf-8")
    return Skeleton(dict(sorted(files.items())))


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
    same names; everything else stays).  Each file is written atomically (a temporary file, then a rename).
    """
    present = _occupied(target)
    if present and not force:
        shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
        raise GpuspecError(f"{target} is not empty ({shown}); gpuspec init writes a new fleet repository",
                           hint="name a new or empty folder, or pass --force to write the skeleton's files into it "
                                "(files of the same names are replaced)")
    for rel in files.files:
        existing = target / rel
        if existing.is_symlink() or (existing.exists() and not existing.is_file()):
            raise GpuspecError(f"{existing} exists and is not a regular file; nothing was written")
    for rel, data in files.files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".gpuspec-tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return list(files.files)
