"""Jinja2's bytecode cache for gpuspec's own templates, kept in the user cache and sealed like every entry there.

Compiling the handover document's template costs about 80 ms in every process that renders a document; with
the bytecode of each compiled template kept between runs, a process loads it instead.  Jinja2 keys an entry by
the template's name and checks it against the template's source and its own version and the Python's, so an
edited template or another Jinja2 compiles again.  Entries are read only when their seal verifies (see
:mod:`gpuspec.usercache`), so the cache folder cannot hand gpuspec code it did not write.  Nothing is generated
into the repository.
"""

from __future__ import annotations

import jinja2

from gpuspec import usercache

#: The user-cache kind of the entries.
KIND = "templates"


class SealedBytecodeCache(jinja2.BytecodeCache):
    """Template bytecode in sealed user-cache entries, one per template (none when caching is off)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Fill ``bucket`` from its entry when one was stored and verifies."""
        data = usercache.load_bytes(usercache.entry_path(KIND, bucket.key))
        if data:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Store the freshly compiled ``bucket``."""
        path = usercache.entry_path(KIND, bucket.key)
        if path is not None:
            usercache.store_bytes(path, bucket.bytecode_to_string())
