"""The pip requirement the action installs: the `gpuspec` input in any source form, with the extra a check needs.

Run by action.yml's install step (before gpuspec is installed, so standard library only) as
``python requirement.py`` with ``GPUSPEC_REQUIREMENT`` (the input) and ``GPUSPEC_EXTRA`` (``verify`` or empty)
in the environment; prints the requirement, or nothing for an empty input.

    name==version          -> name[extra]==version
    name @ URL             -> name[extra] @ URL     (git+https://...@COMMIT, a wheel URL)
    git+URL, a wheel URL   -> gpuspec[extra] @ URL
    a wheel path           -> path[extra]
Extras already given are kept (merged, sorted).
"""

from __future__ import annotations

import os
import re

_NAMED = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?\s*"
                    r"(?P<rest>(?:===?|~=|>=|<=|!=|<|>|@).*)?", re.S)


def requirement(given: str, extra: str) -> str:
    """``given`` with ``extra`` added (see the module docstring)."""
    given = given.strip()
    named = _NAMED.fullmatch(given)
    if not given or not extra:
        return given
    if named and (named["rest"] or not given.endswith(".whl")):
        extras = {e.strip() for e in (named["extras"] or "").split(",") if e.strip()} | {extra}
        rest = named["rest"] or ""
        return f"{named['name']}[{','.join(sorted(extras))}]{' ' + rest if rest.startswith('@') else rest}"
    if "://" in given:
        return f"gpuspec[{extra}] @ {given}"
    return f"{given}[{extra}]"


if __name__ == "__main__":
    print(requirement(os.environ.get("GPUSPEC_REQUIREMENT", ""), os.environ.get("GPUSPEC_EXTRA", "")))
