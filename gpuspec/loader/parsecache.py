"""Remember the parsed data of fleet files by content, between runs (pre-commit and CI re-read mostly
unchanged files).

One entry per fleet folder in the user cache (see :mod:`gpuspec.usercache`): the BLAKE2b digest of each
file's text → the plain data gpuspec's YAML reader made of it (dicts, lists, strings, integers, booleans,
None).  A file whose text is unchanged is not parsed again; the data is exactly what parsing it would
give, because the entry is also keyed by gpuspec's code (its YAML 1.2 scalar rules included).  Files that
do not parse are never stored, so their problems are always reported from the file itself; positions of
findings are always read from the files (:mod:`gpuspec.loader.positions`).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from gpuspec.usercache import Memo


def content_key(text: str) -> bytes:
    """The content key of a file's text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()


class ParseCache(Memo):
    """The parsed files of one fleet folder, by content key; saved once at the end of a load."""

    def __init__(self, fleet_dir: Path) -> None:
        """Open the entry of ``fleet_dir`` (empty when absent, unreadable or caching is off)."""
        super().__init__("parsed", os.path.abspath(fleet_dir))

    key = staticmethod(content_key)


M = TypeVar("M", bound=BaseModel)


class ModelCache(Memo):
    """Validated spec models of one fleet folder, by the content key of their file (pickled).

    A model read back is equal to what validating the file's data gives (same text, same code), and
    reading it needs no validator: the spec models build theirs only when first used (``defer_build``),
    so a run over unchanged files never builds them.
    """

    def __init__(self, fleet_dir: Path) -> None:
        """Open the entry of ``fleet_dir`` (empty when absent, unreadable or caching is off)."""
        super().__init__("models", os.path.abspath(fleet_dir))

    def validate(self, model: type[M], data: Any, key: bytes | None) -> M:
        """``model.model_validate(data)``, or the remembered result for the file with content ``key``."""
        if key is not None:
            hit, blob = self.get((model.__name__, key))
            if hit and isinstance(blob, bytes):
                try:
                    found = pickle.loads(blob)
                except Exception:  # a damaged entry: validate again
                    found = None
                if isinstance(found, model):
                    return found
        result = model.model_validate(data)
        if key is not None:
            self.put((model.__name__, key), pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        return result
