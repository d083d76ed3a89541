"""The per-user cache folder and the fingerprint of the running gpuspec code (cheap to import).

Caches only ever save time: every entry is keyed by the content it was computed from plus
:func:`code_fingerprint`, a missing, stale or unreadable entry is recomputed, and a cache that cannot
be written is silently skipped.  ``GPUSPEC_CACHE_DIR`` moves the folder; ``GPUSPEC_NO_CACHE=1`` turns
every cache off.

A cache folder may be shared or restored from elsewhere (a self-hosted runner, actions/cache, a common
temporary folder), so no entry is trusted for what it says:

- every entry is sealed with an HMAC-SHA256 under a per-user secret kept *outside* the cache folder
  (``GPUSPEC_CACHE_KEY``, else the file ``$GPUSPEC_CACHE_KEY_FILE``, else ``$XDG_CONFIG_HOME/gpuspec/cache.key``
  or ``~/.config/gpuspec/cache.key``, created 0600 on first use) and bound to the entry's name, which is the
  digest of the inputs it stands for; an entry whose seal does not verify is ignored and recomputed;
- only plain data is ever decoded (marshal of dicts, lists, strings, numbers; JSON), and only after the seal
  verified: nothing in the cache can run code;
- the folders are created 0700 and used only when owned by the user and not writable by others.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import stat
import sys
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from gpuspec import __version__

_T = TypeVar("_T")

#: Bumped when the layout of any cache entry changes.
CACHE_FORMAT = 2
#: The first bytes of a sealed entry, then the 32-byte HMAC, then the payload.
_MAGIC = b"gpuspec-cache-2\n"
_MAC_SIZE = 32
ENV_KEY = "GPUSPEC_CACHE_KEY"
ENV_KEY_FILE = "GPUSPEC_CACHE_KEY_FILE"


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
    _stat_tree(Path(__file__).resolve().parent, digest)
    return digest.hexdigest()


def package_fingerprint(*names: str) -> str:
    """A digest that changes whenever any of the installed packages ``names`` could have changed.

    For values computed by another library (e.g. jsonschema's meta-schema check): the location, name, size
    and modification time of every file of each package, found without importing it.
    """
    import importlib.util

    digest = hashlib.sha256()
    for name in names:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        digest.update(f"{name}\0{origin}\0".encode("utf-8", "surrogateescape"))
        if origin:
            _stat_tree(Path(origin).parent, digest)
    return digest.hexdigest()


def _stat_tree(package: Path, digest: Any) -> None:
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
            digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))


def key_file() -> Path:
    """Where the per-user cache secret is kept: never inside the cache folder."""
    explicit = os.environ.get(ENV_KEY_FILE)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gpuspec" / "cache.key"


def _owned_private(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & 0o022


@lru_cache(maxsize=4)
def _secret(explicit: str | None, path: str) -> bytes | None:
    if explicit:
        return hashlib.sha256(b"gpuspec-cache-key\0" + explicit.encode("utf-8", "surrogateescape")).digest()
    key_path = Path(path)
    try:
        _private_dirs(key_path.parent)
        try:
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(32))
        fd = os.open(key_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
                return None  # a key others can read or write protects nothing
            key = os.read(fd, 64)
        finally:
            os.close(fd)
    except OSError:
        return None
    return key if len(key) >= 32 else None


def secret() -> bytes | None:
    """The per-user secret that seals cache entries, or None when there is none (caching is then off)."""
    return _secret(os.environ.get(ENV_KEY) or None, os.fspath(key_file()))


def _mac(key: bytes, name: str, payload: bytes | memoryview) -> bytes:
    """The HMAC binding ``payload`` to the entry ``name`` (taken over the parts: no copy of the payload)."""
    mac = hmac.new(key, name.encode("utf-8", "surrogateescape") + b"\0", "sha256")
    mac.update(payload)
    return mac.digest()


def _seal_head(name: str, payload: bytes) -> bytes | None:
    """What precedes ``payload`` in its sealed entry ``name``: the magic and the HMAC (None without a secret)."""
    key = secret()
    if key is None:
        return None
    return _MAGIC + _mac(key, name, payload)


def seal(name: str, payload: bytes) -> bytes | None:
    """``payload`` sealed for the entry ``name`` (None without a secret)."""
    head = _seal_head(name, payload)
    return None if head is None else head + payload


def _unsealed(name: str, data: bytes) -> memoryview | None:
    """The payload of ``data``, without copying it, when its seal verifies for ``name``."""
    key = secret()
    head = len(_MAGIC) + _MAC_SIZE
    if key is None or len(data) < head or not data.startswith(_MAGIC):
        return None
    payload = memoryview(data)[head:]
    return payload if hmac.compare_digest(_mac(key, name, payload), data[len(_MAGIC):head]) else None


def unseal(name: str, data: bytes) -> bytes | None:
    """The payload of the sealed entry ``data`` when its seal verifies for ``name``, else None."""
    payload = _unsealed(name, data)
    return None if payload is None else bytes(payload)


def _entry_name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _private_dirs(folder: Path, top: Path | None = None) -> None:
    """Create ``folder`` 0700 (parents too), then check it and its parents up to ``top``: each must be a folder
    (not a link) of this user that others cannot write; folders of the user's under ``top`` are made 0700.
    Raises OSError (PermissionError) when one is not safe."""
    folder = Path(os.path.abspath(folder))
    chain = [folder]
    if top is not None:
        top = Path(os.path.abspath(top))
        if top in folder.parents:
            chain += [p for p in folder.parents if top in p.parents or p == top]
    for created in reversed(chain):
        if not os.path.lexists(created):
            created.mkdir(mode=0o700, parents=True, exist_ok=True)
    for checked in chain:
        info = os.lstat(checked)
        if not stat.S_ISDIR(info.st_mode) or not _owned_private(info):
            raise PermissionError(f"{checked} is not a private folder of this user")
        if info.st_mode & 0o077 and top is not None and (checked == top or top in checked.parents):
            os.chmod(checked, 0o700)


def private_folder(folder: Path) -> bool:
    """True when ``folder`` is (or was just made) a folder of this user that others cannot write."""
    try:
        _private_dirs(folder)
    except OSError:
        return False
    return True


def entry_path(kind: str, *parts: str) -> Path | None:
    """Where the cache entry of ``kind`` named by ``parts`` lives (None when caching is off)."""
    folder = cache_dir()
    if folder is None:
        return None
    name = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return folder / kind / name


#: No entry larger than this is written or read: a planted sparse or oversized file costs nothing to refuse.
MAX_ENTRY_BYTES = 256 * 1024 * 1024
#: The largest entry of each kind (bytes), some 10 times what a fleet of 10,000 clusters of 10 pools stores (for
#: 1,000 such clusters: parsed 61 kB, render 54 kB, render-chunk 27 kB, handover 2 MB an entry): a larger entry is
#: a miss, refused after an ``fstat``, never read or hashed, and none is written.  A kind not named here may take
#: :data:`DEFAULT_ENTRY_BYTES`.
ENTRY_BYTES = {
    "parsed": 16 * 1024 * 1024,
    "render": 16 * 1024 * 1024,
    "render-chunk": 16 * 1024 * 1024,
    "credentials": 4 * 1024 * 1024,
    "matrix": 4 * 1024 * 1024,
    "matrix-data": 16 * 1024 * 1024,
    "custom-rule-schemas": 16 * 1024 * 1024,
    "results": 64 * 1024 * 1024,
    "handover": 128 * 1024 * 1024,
    "templates": 4 * 1024 * 1024,
}
DEFAULT_ENTRY_BYTES = 16 * 1024 * 1024


def entry_limit(kind: str) -> int:
    """The largest entry of ``kind`` that is written or read (never over :data:`MAX_ENTRY_BYTES`)."""
    return min(ENTRY_BYTES.get(kind, DEFAULT_ENTRY_BYTES), MAX_ENTRY_BYTES)


def _kind(path: Path) -> str:
    """The kind of the entry at ``path`` (the folder :func:`entry_path` puts it in)."""
    return path.parent.name


def load_bytes(path: Path | None) -> bytes | None:
    """The payload stored at ``path`` when its seal verifies, else None (absent, unreadable, foreign)."""
    payload = _load_view(path)
    return None if payload is None else bytes(payload)


def _load_view(path: Path | None) -> memoryview | None:
    """:func:`load_bytes` without the copy of the payload."""
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _owned_private(info) or info.st_size > entry_limit(_kind(path)):
            return None  # checked before a byte is read or hashed: an oversized entry is a miss
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(info.st_size + 1)  # no buffer of the largest allowed size for a small entry
        if len(data) != info.st_size:  # changed while being read
            return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return _unsealed(_entry_name(path), data)


def load(path: Path | None) -> Any:
    """The value stored at ``path`` (sealed marshal of plain data), or None when absent, unreadable or foreign."""
    data = _load_view(path)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
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
    """Seal ``data`` and write it to ``path`` atomically (a temporary file renamed over it), in private folders;
    errors are ignored.  The payload is written as it is, never copied (a memo of handover documents holds
    tens of megabytes)."""
    if len(_MAGIC) + _MAC_SIZE + len(data) > entry_limit(_kind(path)):
        return  # it would never be read
    head = _seal_head(_entry_name(path), data)
    if head is None:
        return
    try:
        _private_dirs(path.parent, cache_dir())
        import tempfile  # only when an entry is written

        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(head)
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


#: How many entries a cache of per-cluster values is split into (see :class:`ShardedMemo`).
SHARDS = 64


def shard_of(name: str, shards: int = SHARDS) -> int:
    """The number of the entry that holds the values of ``name`` (a cluster's name), out of ``shards``."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()[:4], "big") % shards


def by_shard(items: Iterable[_T], name_of: Callable[[_T], str], shards: int = SHARDS) -> dict[int, list[_T]]:
    """``items`` grouped by the shard (:func:`shard_of`, out of ``shards``) of their name, shards in ascending
    order, items in the order given."""
    groups: dict[int, list[_T]] = {}
    for item in items:
        groups.setdefault(shard_of(name_of(item), shards), []).append(item)
    return dict(sorted(groups.items()))


class ShardedMemo:
    """A :class:`Memo` split over :data:`SHARDS` entries by a name (a cluster's), plus one entry for values
    of no cluster (``name`` None).

    Whoever works on a whole shard's clusters opens, fills and saves that shard alone, so no process holds
    the values of the whole fleet at once.  A shard is opened on first use; :meth:`save` stores and forgets
    every shard opened so far.  Like a :class:`Memo`, a saved shard keeps only the keys used in this run:
    use it for whole shards (every cluster of a shard in one go), never for a part of one.
    """

    def __init__(self, kind: str, *scope: str) -> None:
        """Name the entries of ``kind`` for ``scope``; none is read yet."""
        self._kind = kind
        self._scope = scope
        self._open: dict[int | None, Memo] = {}

    def _memo(self, name: str | None) -> Memo:
        shard = None if name is None else shard_of(name)
        memo = self._open.get(shard)
        if memo is None:
            memo = self._open[shard] = Memo(self._kind, *self._scope, "fleet" if shard is None else f"shard-{shard}")
        return memo

    def get(self, name: str | None, key: Any) -> tuple[bool, Any]:
        """(True, value) when ``key`` was stored in the shard of ``name``, else (False, None)."""
        return self._memo(name).get(key)

    def put(self, name: str | None, key: Any, value: Any) -> None:
        """Remember ``value`` under ``key`` in the shard of ``name`` (plain data only)."""
        self._memo(name).put(key, value)

    def save(self) -> None:
        """Store the shards opened since the last save, and let go of them."""
        for memo in self._open.values():
            memo.save()
        self._open.clear()
