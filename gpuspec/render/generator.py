"""The generator stamp: the one file in ``rendered/`` that names the gpuspec version that last changed the output.

Rendered files carry no gpuspec version, so upgrading gpuspec changes nothing
when the output stays the same.  When a newer gpuspec does change the output,
``gpuspec render`` rewrites the stamp together with the changed files: the
change-set rule GS806 and ``gpuspec plan`` read it to tell a regeneration by a
newer gpuspec from a hand edit.  The stamp is left as it is while the rest of
the output is unchanged, whichever gpuspec version runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import gpuspec
from gpuspec.render.serialize import HEADER_MARK, dump_documents

#: Path of the stamp, relative to the output folder.
STAMP_PATH = "generator.yaml"
_VERSION_LINE = re.compile(r"^version: '?([0-9A-Za-z.+!_-]+)'?$", re.MULTILINE)


def current_version() -> str:
    """The version of the running gpuspec (read at call time, so tests can simulate an upgrade)."""
    return str(gpuspec.__version__)


def stamp_bytes(version: str) -> bytes:
    """The stamp file's exact bytes for ``version``."""
    head = (f"{HEADER_MARK}: the gpuspec version that last changed\n"
            "# the files in this folder. Do not edit: `gpuspec render` updates it.\n")
    return (head + dump_documents([{"generator": "gpuspec", "version": version}])).encode("utf-8")


def stamp_version(data: bytes | None) -> str | None:
    """The version recorded in a stamp file's bytes, or None when they are absent or not a stamp: a stamp is
    exactly the bytes gpuspec writes for the version it names, so an edited one (a changed comment, a broken
    line, an extra key) is no stamp and a render or ``render --check`` replaces it."""
    if not data or not data.startswith(HEADER_MARK.encode()):
        return None
    match = _VERSION_LINE.search(data.decode("utf-8", "replace"))
    if match is None or stamp_bytes(match.group(1)) != data:
        return None
    return match.group(1)


def version_key(version: str) -> tuple[tuple[int, str], ...]:
    """A sort key for versions: numeric parts compare as numbers (0.10.0 > 0.9.1), others as text."""
    parts = re.split(r"[.+-]", version)
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in parts)


def is_newer(version: str, than: str) -> bool:
    """True when ``version`` is a later gpuspec release than ``than``."""
    return version_key(version) > version_key(than)


@dataclass(frozen=True, slots=True)
class Regeneration:
    """The generator stamps of two revisions of the output and what they say."""

    before: str | None
    after: str | None

    @property
    def by_newer(self) -> bool:
        """True when the later output was stamped by a newer gpuspec than the earlier one (or the first stamp)."""
        return self.after is not None and (self.before is None or is_newer(self.after, self.before))


def settle_stamp(expected: Mapping[str, bytes], current: Mapping[str, bytes | None]) -> bytes:
    """The stamp to write: the current one when every other file is unchanged, else one naming this version.

    ``expected`` is the output without the stamp; ``current`` maps output paths (stamp included) to the bytes
    the output folder holds now (None when missing) and must cover every path of the output folder.
    """
    others_same = all(current.get(rel) == data for rel, data in expected.items()) and not (
        set(current) - set(expected) - {STAMP_PATH})
    return stamp_to_write(current.get(STAMP_PATH), others_same)


def stamp_to_write(existing: bytes | None, others_same: bool) -> bytes:
    """The stamp to write, given the stamp file's present bytes (None when missing) and whether every other
    output file is unchanged: the present stamp then (when it is one), else one naming this version."""
    if others_same and existing is not None and stamp_version(existing) is not None:
        return existing
    return stamp_bytes(current_version())
