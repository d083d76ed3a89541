"""Remember the parsed data of fleet files by content, between runs (pre-commit and CI re-read mostly
unchanged files).

Entries per fleet folder in the user cache (see :mod:`gpuspec.usercache`), one for fleet.yaml and one per
shard of the cluster files (chosen by the file's name): the BLAKE2b digest of each file's text → the plain
data gpuspec's YAML reader made of it (dicts, lists, strings, integers, booleans, None).  A file whose text
is unchanged is not parsed again; the data is exactly what parsing it would give, because the entry is also
keyed by gpuspec's code (its YAML 1.2 scalar rules included).  Files that do not parse are never stored, so
their problems are always reported from the file itself; positions of findings are always read from the
files (:mod:`gpuspec.loader.positions`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from gpuspec.usercache import ShardedMemo


def content_key(text: str) -> bytes:
    """The content key of a file's text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()


class ParseCache(ShardedMemo):
    """The parsed files of one fleet folder, by cluster name (None: fleet.yaml) and content key; a load opens
    the shards of the files it reads and saves them at its end."""

    def __init__(self, fleet_dir: Path) -> None:
        """Name the entries of ``fleet_dir`` (each is read when first used; empty when absent, unreadable or
        caching is off)."""
        super().__init__("parsed", os.path.abspath(fleet_dir))

    key = staticmethod(content_key)
