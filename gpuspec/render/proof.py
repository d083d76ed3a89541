"""The render proof: a committed file that lets ``render --check`` of a fresh clone compare digests instead of
rendering again.

``rendered/render-proof.yaml`` records, when ``gpuspec render`` writes the output, two digests and a window:

- ``inputs``: sha256 over gpuspec's version and its own code and packaged data (the support matrix,
  templates: the bytes of every file of the installed package), the Python version and the versions of the
  libraries that shape the bytes (PyYAML, Jinja2, MarkupSafe, ruamel.yaml, pydantic), and every file below
  the fleet folder (fleet.yaml, the cluster files, template overrides, anything else there) and the policies
  folder, by relative path;
- ``outputs``: sha256 over the relative path and sha256 of every other file of the output folder;
- ``validFrom``/``validThrough``: the days for which the policy exceptions that accept findings are the same
  as on the day of the render (the only way the date enters the output); absent when unbounded.

A check whose inputs hash to ``inputs`` on a day inside the window, and whose output files hash to
``outputs``, holds exactly the bytes gpuspec rendered from these inputs: there is nothing to render.  Any other
outcome (an input, gpuspec or a library changed, an exception expired, a file edited, added or removed, a
proof missing or not gpuspec's) takes the full path: validate, render, compare and print the diff.

What the proof cannot rule out is a proof forged to match a hand-edited output: it is a digest, not a
signature (CI holds no secret that a contributor lacks).  ``render --check --full`` (or
``GPUSPEC_CHECK_FULL=1``) always renders; run it where a forged proof matters (a protected branch, nightly).

The proof, like the generator stamp, is left as it is while every other output file is unchanged, so a
gpuspec upgrade that changes nothing changes no file (its check then takes the full path until the output
next changes, which rewrites the proof).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuspec import usercache
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.render.filestate import file_state
from gpuspec.render.generator import current_version
from gpuspec.render.inputs import InputStates
from gpuspec.render.serialize import HEADER_MARK
from gpuspec.render.spool import Layered
from gpuspec.templating.environment import override_files

#: Path of the proof, relative to the output folder.
PROOF_PATH = "render-proof.yaml"
#: Libraries whose version can change the rendered bytes.
_SHAPING = ("PyYAML", "Jinja2", "MarkupSafe", "ruamel.yaml", "pydantic", "pydantic_core")
_MAX_INPUT_BYTES = 16 * 1024 * 1024
_LINE = re.compile(
    r"^(inputs|outputs|validFrom|validThrough): '?([0-9a-f]{64}|[0-9]{4}-[0-9]{2}-[0-9]{2})'?$", re.MULTILINE
)


@dataclass(frozen=True, slots=True)
class Proof:
    """What a render proof says."""

    inputs: str
    outputs: str
    valid_from: dt.date | None = None
    valid_through: dt.date | None = None

    def covers(self, day: dt.date) -> bool:
        """True when ``day`` is inside the proof's window."""
        return (self.valid_from is None or self.valid_from <= day) and (
            self.valid_through is None or day <= self.valid_through
        )

    def to_bytes(self) -> bytes:
        """The proof file's exact bytes."""
        lines = [
            f"{HEADER_MARK}: digests of gpuspec, its inputs and the other",
            "# files of this folder, which `gpuspec render --check` compares",
            "# instead of rendering again. Do not edit.",
            "---",
            f"inputs: {self.inputs}",
            f"outputs: {self.outputs}",
        ]
        if self.valid_from is not None:
            lines.append(f"validFrom: '{self.valid_from.isoformat()}'")
        if self.valid_through is not None:
            lines.append(f"validThrough: '{self.valid_through.isoformat()}'")
        return ("\n".join(lines) + "\n").encode()


def parse_proof(data: bytes | None) -> Proof | None:
    """The proof in a file's bytes, or None when they are absent or not one gpuspec wrote."""
    if not data or not data.startswith(HEADER_MARK.encode()) or len(data) > 4096:
        return None
    fields = dict(_LINE.findall(data.decode("utf-8", "replace")))
    if "inputs" not in fields or "outputs" not in fields:
        return None
    try:
        start = dt.date.fromisoformat(fields["validFrom"]) if "validFrom" in fields else None
        end = dt.date.fromisoformat(fields["validThrough"]) if "validThrough" in fields else None
    except ValueError:
        return None
    proof = Proof(fields["inputs"], fields["outputs"], start, end)
    return proof if proof.to_bytes() == data else None


@lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 of what shapes the output besides the inputs: the bytes of every file of the installed gpuspec
    package, the Python version and the versions of the libraries in :data:`_SHAPING` (kept in the user cache
    per :func:`gpuspec.usercache.code_fingerprint`, so it is read once per installation)."""
    slot = usercache.entry_path("code-digest", usercache.code_fingerprint())
    stored = usercache.load(slot)
    if isinstance(stored, str):
        return stored
    from importlib import metadata

    digest = hashlib.sha256(f"python\0{sys.version_info[:2]}\n".encode())
    for name in _SHAPING:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{name}\0{version}\n".encode())
    package = Path(__file__).resolve().parent.parent
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(root, name)
            with open(path, "rb") as fh:
                sha = hashlib.sha256(fh.read()).hexdigest()
            digest.update(f"{os.path.relpath(path, package)}\0{sha}\n".encode("utf-8", "surrogateescape"))
    value = digest.hexdigest()
    usercache.store(slot, value)
    return value


def input_digest(fleet_dir: Path, policies_dir: Path | None, known: Mapping[str, str] | None = None,
                 states: InputStates | None = None) -> str | None:
    """The ``inputs`` digest of a proof (see the module docstring); None when an input cannot be read safely.

    ``known``: sha256 already taken this run, by path (``os.path.join`` of the folder and the relative path).
    ``states``: where the state of each file read here goes, just before it is read, by path (see
    :func:`gpuspec.render.inputs.unchanged`); a file of ``known`` is not read here, so its state is left to
    whoever hashed it (the render keeps it in :attr:`gpuspec.render.inputs.InputDigests.states`).
    """
    digest = hashlib.sha256(f"code\0{code_digest()}\0{current_version()}\n".encode())
    try:
        for label, folder in (("fleet", fleet_dir), ("policies", policies_dir)):
            if folder is None or not folder.is_dir():
                digest.update(f"{label}\0absent\n".encode())
                continue
            for rel, sha in _folder_digests(folder, known or {}, states):
                digest.update(f"{label}/{rel}\0{sha}\n".encode("utf-8", "surrogateescape"))
        for name, sha in sorted(override_files(fleet_dir).items()):
            digest.update(f"override/{name}\0{sha}\n".encode("utf-8", "surrogateescape"))
    except (OSError, UnsafeFile):
        return None
    return digest.hexdigest()


def _folder_digests(folder: Path, known: Mapping[str, str], states: InputStates | None) -> Iterable[tuple[str, str]]:
    base = os.fspath(folder)
    for root, dirs, files in os.walk(base):
        dirs.sort()
        if ".git" in dirs:
            dirs.remove(".git")
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            sha = known.get(path)
            if sha is None and states is not None:
                states[path] = (path, file_state(os.stat(path)))
            yield rel, sha or hashlib.sha256(read_bounded(Path(path), _MAX_INPUT_BYTES)).hexdigest()


def output_digest(shas: Mapping[str, bytes]) -> str:
    """The ``outputs`` digest: over every output path (the proof's own excluded) and its file's sha256."""
    digest = hashlib.sha256()
    for rel in sorted(shas):
        if rel != PROOF_PATH:
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + shas[rel] + b"\n")
    return digest.hexdigest()


def window(expiries: Iterable[dt.date], today: dt.date) -> tuple[dt.date | None, dt.date | None]:
    """The days around ``today`` on which the same exceptions (of these expiry days) are live: from the day after
    the last one that expired before today, through the first one still live."""
    dates = list(expiries)
    past = [d for d in dates if d < today]
    live = [d for d in dates if d >= today]
    return (max(past) + dt.timedelta(days=1) if past else None, min(live) if live else None)


@dataclass(frozen=True, slots=True)
class ProofInputs:
    """What the writer needs to write the proof: the inputs digest, the window, and the sha256 of output files
    already known (those of kept files, whose bytes it is not given, and of files hashed when serialized)."""

    inputs: str
    valid_from: dt.date | None = None
    valid_through: dt.date | None = None
    known_shas: Mapping[str, bytes] | None = None


def settle_proof(inputs: ProofInputs, files: Mapping[str, bytes], current: bytes | None, others_same: bool) -> bytes:
    """The proof to write: the current one while every other file is unchanged and it is a proof, else the proof
    of ``files`` (every other output file's bytes, generator stamp included) and the kept files."""
    if others_same and parse_proof(current) is not None:
        assert current is not None
        return current
    known = inputs.known_shas or {}
    # Only files hashed nowhere else are read (``files`` may read its bytes back from a spool), and the known
    # digests are not copied (a large fleet has tens of thousands).
    unknown = {rel: hashlib.sha256(files[rel]).digest() for rel in files if rel not in known}
    return Proof(inputs.inputs, output_digest(Layered(unknown, known)), inputs.valid_from,
                 inputs.valid_through).to_bytes()


def proven(out: Path, fleet_dir: Path, policies_dir: Path | None, today: dt.date) -> int | None:
    """When the output folder's committed proof vouches for it (see the module docstring), the number of its
    files; else None (no proof, another day, other inputs, or any output file that differs)."""
    from gpuspec.errors import GpuspecError
    from gpuspec.render.writer import _read, scan_output, stale_temporaries

    try:
        proof = parse_proof(_read(out / PROOF_PATH))
        if proof is None or not proof.covers(today) or stale_temporaries(out):
            return None
        if input_digest(fleet_dir, policies_dir) != proof.inputs:
            return None
        files = scan_output(out)
    except (OSError, GpuspecError):
        return None
    shas: dict[str, bytes] = {}
    for rel, path in files.items():
        data = _read(path)
        if data is None:
            return None
        shas[rel] = hashlib.sha256(data).digest()
    return len(files) if output_digest(shas) == proof.outputs else None
