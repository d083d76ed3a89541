"""The per-user cache folder and the fingerprint of the running gpuspec code (cheap to import).

Caches only ever save time: every entry is keyed by the content it was computed from plus
:func:`code_fingerprint`, a missing, stale or unreadable entry is recomputed, and a cache that cannot
be written is silently skipped.  ``GPUSPEC_CACHE_DIR`` moves the folder; ``GPUSPEC_NO_CACHE=1`` turns
every cache off.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuspec import __version__

#: Bumped when the layout of any cache entry changes.
CACHE_FORMAT = 1


def cache_dir() -> Path | None:
    """The folder for gpuspec's caches, or None when caching is turned off."""
    if os.environ.get("GPUSPEC_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("GPUSPEC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return default_cache_root()


def default_cache_root() -> Path:
    """The per-user cache folder of the platform: ``$XDG_CACHE_HOME/gpuspec`` or ``~/.cache/gpuspec`` on Linux,
    ``~/Library/Caches/gpuspec`` on macOS, ``%LOCALAPPDATA%\\gpuspec\\Cache`` on Windows (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("gpuspec", appauthor=False))


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest that changes whenever gpuspec's code or packaged data could have changed.

    gpuspec's version, the Python version, and the name, size and modification time of every file of
    the installed package (a stat per file, no reading).
    """
    digest = hashlib.sha256(f"{CACHE_FORMAT}\0{__version__}\0{sys.version}\0".encode())
    package = Path(__file__).resolve().parent
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            try:
                st = os.stat(os.path.join(root, name))
            except OSError:
                continue
            rel = os.path.relpath(os.path.join(root, name), package)
            digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def entry_path(kind: str, *parts: str) -> Path | None:
    """Where the cache entry of ``kind`` named by ``parts`` lives (None when caching is off)."""
    folder = cache_dir()
    if folder is None:
        return None
    name = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return folder / kind / name


def load(path: Path | None) -> Any:
    """The value stored at ``path`` (marshal), or None when absent or unreadable."""
    if path is None:
        return None
    try:
        data = path.read_bytes()
        return marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def store(path: Path | None, value: Any) -> None:
    """Write ``value`` (plain data: dict, list, tuple, str, bytes, int, float, bool, None) atomically."""
    if path is None:
        return
    try:
        data = marshal.dumps(value)
    except ValueError:
        return
    store_bytes(path, data)


def store_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it); errors are ignored."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a cache that cannot be written only costs speed


class Memo:
    """Values remembered by content key between runs, one entry file per ``kind`` and scope.

    Open it, ``get``/``put`` by key, then ``save``: only the keys used in this run are kept, so the
    entry never grows past what the inputs need now.  Keys must cover every input of the value
    (the code is covered by :func:`code_fingerprint`, which is part of the entry's name).
    """

    def __init__(self, kind: str, *scope: str) -> None:
        """Open the entry of ``kind`` for ``scope`` (e.g. the fleet folder); empty when absent or off."""
        self.slot = entry_path(kind, code_fingerprint(), *scope)
        stored = load(self.slot)
        self._stored: dict[Any, Any] = stored if isinstance(stored, dict) else {}
        self._used: dict[Any, Any] = {}

    def get(self, key: Any) -> tuple[bool, Any]:
        """(True, value) when ``key`` was stored, else (False, None)."""
        if key in self._stored:
            value = self._stored[key]
            self._used[key] = value
            return True, value
        return False, None

    def put(self, key: Any, value: Any) -> None:
        """Remember ``value`` under ``key`` (plain data only)."""
        self._used[key] = value

    def save(self) -> None:
        """Store this run's entries; nothing is written when they are the stored ones."""
        if self.slot is None or self._used.keys() == self._stored.keys():
            return
        store(self.slot, self._used)
