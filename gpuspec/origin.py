"""Where gpuspec comes from: its repository, the commit of this build, and how a fleet repository installs it.

One place names it, the data file ``origin.json`` beside this module: ``repository`` (gpuspec's own git
repository, an https URL; null while the project names none), ``commit`` (the commit this build was made from,
stamped into the wheel by ``scripts/release-check``) and ``index`` (true once this project publishes gpuspec on
PyPI).  ``gpuspec init`` writes the fleet repository's install line, action pin and pre-commit pin from it (or
from ``--source``), SARIF's ``helpUri`` and ``rules --format json`` link the rule reference of that repository,
and nothing links a repository the data does not name.

This module imports nothing of gpuspec but its version, so every floor may read it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gpuspec import __version__

#: The data file (package data; ``scripts/release-check`` rewrites it in the tree it builds the release from).
DATA_FILE = Path(__file__).resolve().parent / "origin.json"
#: A full git commit id: the only ref a pin may name (tags and branches move).
COMMIT = re.compile(r"[0-9a-f]{40}\Z")
_GITHUB = re.compile(r"https://github\.com/(?P<owner>[A-Za-z0-9][A-Za-z0-9-]{0,38})/(?P<name>[A-Za-z0-9._-]{1,100})\Z")
_NAME = re.compile(r"\s*gpuspec\s*(?:\[[A-Za-z0-9,\s_-]*\])?\s*", re.IGNORECASE)
_WHEEL = re.compile(r"gpuspec-(?P<version>[0-9][^-]*)-[^/]*\.whl\Z")


class SourceError(ValueError):
    """A ``--source`` (or origin data) that names no usable gpuspec source; the message says why."""


@dataclass(frozen=True)
class Origin:
    """Where a gpuspec comes from and how to install it (see the module docstring)."""

    version: str
    #: gpuspec's git repository (https URL, no ``.git`` suffix needed), or None when unknown.
    repository: str | None = None
    #: The commit of that repository this gpuspec was built from (40 hex digits), or None.
    commit: str | None = None
    #: Published on PyPI by this project: install ``gpuspec==<version>``.
    index: bool = False
    #: A wheel (path or URL) to install instead of the repository or the index.
    wheel: str | None = None

    @property
    def install(self) -> str | None:
        """The pip requirement that installs this gpuspec, pinned (None when nothing names one).

        A wheel; else ``gpuspec==<version>`` when published on the index; else ``gpuspec @ git+<repository>@<commit>``.
        """
        if self.wheel:
            return self.wheel
        if self.index:
            return f"gpuspec=={self.version}"
        if self.repository and self.commit:
            return f"gpuspec @ git+{self.repository}@{self.commit}"
        return None

    @property
    def github(self) -> str | None:
        """``owner/name`` of the repository when it is on github.com, else None."""
        match = _GITHUB.match((self.repository or "").removesuffix(".git"))
        return f"{match.group('owner')}/{match.group('name')}" if match else None

    @property
    def action(self) -> str | None:
        """The action reference pinned by commit (``owner/name@<commit>``), or None when either is unknown."""
        return f"{self.github}@{self.commit}" if self.github and self.commit else None

    def docs_url(self, page: str) -> str | None:
        """The URL of ``page`` (``docs/rules.md``) of this version in the repository, or None when unknown."""
        if self.github is None:
            return None
        return f"https://github.com/{self.github}/blob/{self.commit or f'v{self.version}'}/{page}"


def _load(data: Any) -> Origin:
    """The origin of the data file's content; a SourceError for a value of the wrong type or form."""
    if not isinstance(data, dict):
        raise SourceError("origin data is not a mapping")
    repository, commit, index = data.get("repository"), data.get("commit"), data.get("index", False)
    if repository is not None and not (isinstance(repository, str) and repository.startswith("https://")):
        raise SourceError(f"origin repository {repository!r} is not an https URL")
    if commit is not None and not (isinstance(commit, str) and COMMIT.match(commit)):
        raise SourceError(f"origin commit {commit!r} is not a full commit id")
    if not isinstance(index, bool):
        raise SourceError(f"origin index {index!r} is not true or false")
    return Origin(__version__, repository.removesuffix("/") if repository else None, commit, index)


@lru_cache(maxsize=1)
def origin() -> Origin:
    """This gpuspec's origin, from ``origin.json`` (an unreadable or malformed file: an origin that names nothing)."""
    try:
        return _load(json.loads(DATA_FILE.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return Origin(__version__)


def parse_source(text: str, base: Origin | None = None) -> Origin:
    """The origin ``gpuspec init --source`` names, on top of ``base`` (default: :func:`origin`).

    Accepted: ``gpuspec==X.Y.Z`` (from the package index), ``gpuspec @ git+<https URL>@<commit>`` or
    ``git+<https URL>@<commit>`` (the repository and commit become the action's and the hooks' pin too), and a
    wheel path or URL (``…/gpuspec-X.Y.Z-py3-none-any.whl``).  Extras (``gpuspec[verify]``) are dropped: the
    action adds the ones a check needs.  A SourceError says what is wrong.
    """
    base = base or origin()
    text = text.strip()
    if not text or any(ch in text for ch in "\n\r\t\0") or len(text) > 2048:
        raise SourceError("name one source on one line")
    name = _NAME.match(text)
    rest = text[name.end():] if name else text
    if name and rest.startswith("=="):
        version = rest[2:].strip()
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)*([a-z0-9.+-]*)", version):
            raise SourceError(f"{version!r} is not a version")
        return replace(base, version=version, index=True, wheel=None)
    rest = rest[1:].strip() if name and rest.startswith("@") else text
    if rest.startswith("git+"):
        return _git_source(rest[len("git+"):], base)
    wheel = _WHEEL.search(re.split(r"[?#]", rest, maxsplit=1)[0])
    if wheel is not None and " " not in rest:
        return replace(base, version=wheel.group("version"), wheel=rest, index=False)
    raise SourceError(f"{text!r} is no gpuspec source: use gpuspec==X.Y.Z, git+https://HOST/OWNER/gpuspec@COMMIT "
                      "or the path or URL of a gpuspec wheel")


def _git_source(url: str, base: Origin) -> Origin:
    """The origin of ``<https URL>@<commit>`` (the part after ``git+``)."""
    location, at, ref = url.rpartition("@")
    parts = urlsplit(location)
    if not at or parts.scheme != "https" or not parts.netloc or "@" in parts.netloc or parts.query or parts.fragment:
        raise SourceError(f"git+{url!r} is not git+https://HOST/PATH@COMMIT")
    if not COMMIT.match(ref):
        raise SourceError(f"{ref!r} is not a full commit id: pin the commit of a release (a tag or branch can move)")
    return replace(base, repository=location.removesuffix("/"), commit=ref, index=False, wheel=None)


#: How a text names a gpuspec release: a pin by version (gpuspec==X.Y.Z), a git URL or action at a tag
#: (…gpuspec@vX.Y.Z), a pre-commit rev (rev: vX.Y.Z) or the version comment of a pin by commit (# vX.Y.Z,
#: # frozen: vX.Y.Z).  Placeholders (vX.Y.Z) are no version.
_NAMED_VERSION = re.compile(
    r"gpuspec(?:\[[^\]\s]*\])?==(?P<pin>[0-9]+\.[0-9]+\.[0-9]+)"
    r"|gpuspec(?:\.git)?@v(?P<tag>[0-9]+\.[0-9]+\.[0-9]+)"
    r"|git\+[^'\"\n]*?@v(?P<git>[0-9]+\.[0-9]+\.[0-9]+)"
    r"|\brev: v(?P<rev>[0-9]+\.[0-9]+\.[0-9]+)"
    r"|gpuspec(?:\.git)?@[0-9a-f]{40}\s+#\s+v(?P<comment>[0-9]+\.[0-9]+\.[0-9]+)"
    r"|#\s+frozen:\s+v(?P<frozen>[0-9]+\.[0-9]+\.[0-9]+)")


def named_versions(text: str) -> set[str]:
    """The gpuspec release versions ``text`` names (see :data:`_NAMED_VERSION`), as ``X.Y.Z``."""
    return {next(v for v in match.groupdict().values() if v) for match in _NAMED_VERSION.finditer(text)}


def _check_tags(argv: list[str]) -> int:
    """``check-tags RELEASING_VERSION TAGS_FILE FILE...``: every gpuspec version the files name is the version being
    released or a tag of TAGS_FILE (``git tag -l`` output); print each that is neither, exit 1 then."""
    releasing, tags_file, *files = argv
    tags = {line.strip() for line in Path(tags_file).read_text(encoding="utf-8").splitlines()}
    bad = 0
    for name in files:
        for version in sorted(named_versions(Path(name).read_text(encoding="utf-8"))):
            if version != releasing and f"v{version}" not in tags:
                print(f"{name} names gpuspec {version}, which has no tag v{version} and is not the release")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    import sys

    if len(sys.argv) >= 4 and sys.argv[1] == "check-tags":
        raise SystemExit(_check_tags(sys.argv[2:]))
    print("usage: python -m gpuspec.origin check-tags RELEASING_VERSION TAGS_FILE FILE...", file=sys.stderr)
    raise SystemExit(64)
