"""gpuspec's packaged YAML data files, parsed once per installation: their plain data kept in the user cache.

A command that compiles one cluster (a re-render after one edit) reads the chart data of one release: tens of
kilobytes of YAML whose parse costs more than the cluster's compile.  The parsed data is stored in the user
cache (sealed like every entry, :mod:`gpuspec.usercache`) under gpuspec's code fingerprint, which changes with
any packaged file, so an entry always holds the data of the files installed.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from gpuspec import usercache

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: Bumped when what an entry holds changes.
FORMAT = 1


def packaged_yaml(*parts: str) -> Any:
    """The parsed YAML of the packaged file ``gpuspec/matrix/data/<parts…>`` (plain data), from the user cache
    when this installation parsed it before."""
    slot = usercache.entry_path("packaged-data", str(FORMAT), usercache.code_fingerprint(), *parts)
    stored = usercache.load(slot)
    if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == "/".join(parts):
        return stored[1]
    with resources.files("gpuspec.matrix").joinpath("data", *parts).open("r", encoding="utf-8") as fh:
        data = yaml.load(fh, Loader=_Loader)
    usercache.store(slot, ("/".join(parts), data))  # (data marshal cannot hold, such as a date, is not stored)
    return data
