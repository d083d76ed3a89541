"""Find Helm values keys a chart does not know (helm ignores them silently).

A key is *known* when the chart's own ``values.yaml`` has it, or documents it in a commented-out
line (``  #version: ""`` under ``operator:`` — charts read such keys with ``default``).  Below some
keys anything goes, so they are *open* and not descended into:

- keys whose default is an empty map ``{}`` (``nodeSelector``, ``labels``, ``annotations``,
  ``resources``, ``data`` …), a list (``env``, ``tolerations``, ``imagePullSecrets`` …) or null;
- keys named in :data:`DEFAULT_OPEN_KEYS` even when their default is a non-empty map
  (``operator.annotations`` defaults to an OpenShift SCC annotation, ``operator.resources`` to
  cpu/memory limits: both take any Kubernetes map);
- ``global`` and the chart's dependencies (subchart values are the subchart's business);
- dotted patterns passed as ``extra_known`` (``fnmatch`` syntax, e.g. ``*.env`` or ``driver.*``).
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuspec.errors import GpuspecError
from gpuspec.verify.helm import chart_metadata, parse_chart_yaml, read_chart_file

KeyPath = tuple[str, ...]

#: Key names whose value is a free-form Kubernetes map/list wherever the chart has them.
DEFAULT_OPEN_KEYS: frozenset[str] = frozenset({
    "annotations", "labels", "nodeSelector", "tolerations", "affinity", "resources", "env",
    "securityContext", "podSecurityContext", "additionalLabels", "data",
})

_LIST = "\0list"  # marks a list item on the indentation stack
_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*|\"[^\"]+\"|'[^']+')\s*:(?:\s|$)")
_ITEM_LINE = re.compile(r"^(?P<indent> *)-(?:\s|$)")
_COMMENTED_KEY = re.compile(
    r"^(?P<indent> *)# ?(?P<key>[a-z_][A-Za-z0-9_-]*)\s*:(?P<rest>\s*(?:\"[^\"]*\"|'[^']*'|\S*)\s*)$"
)


@dataclass(frozen=True, slots=True)
class ChartValues:
    """A chart's default values plus the key paths its values.yaml documents only in comments."""

    defaults: Mapping[str, Any]
    commented: frozenset[KeyPath] = frozenset()
    open_roots: frozenset[str] = field(default_factory=lambda: frozenset({"global"}))

    @classmethod
    def from_text(cls, text: str, *, subcharts: Iterable[str] = ()) -> ChartValues:
        """Parse a values.yaml text; ``subcharts`` are dependency names/aliases whose keys stay open."""
        data = parse_chart_yaml(text, "chart values.yaml") if text.strip() else {}
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise GpuspecError("chart values.yaml is not a mapping")
        return cls(defaults=data, commented=frozenset(commented_keys(text)),
                   open_roots=frozenset({"global", *subcharts}))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, subcharts: Iterable[str] = ()) -> ChartValues:
        """Read a values.yaml file (for example one from ``../shared/upstream``).

        ``subcharts`` are dependency names whose keys stay open (see :func:`dependency_names`).
        """
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise GpuspecError(f"cannot read values file {path}: {exc}") from exc
        return cls.from_text(text, subcharts=subcharts)

    @classmethod
    def from_chart(cls, chart: Path) -> ChartValues:
        """Read values.yaml and the dependency names of a chart directory or .tgz."""
        return cls.from_text(read_chart_file(chart, "values.yaml") or "",
                             subcharts=dependency_names(chart_metadata(chart)))


def dependency_names(chart_yaml: Mapping[str, Any]) -> list[str]:
    """Names and aliases of the dependencies listed in a parsed Chart.yaml (their values keys are open)."""
    names: list[str] = []
    for dep in chart_yaml.get("dependencies") or []:
        if isinstance(dep, Mapping):
            names += [str(dep[k]) for k in ("name", "alias") if dep.get(k)]
    return names


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """A values key the chart does not know, with the closest known sibling as a suggestion."""

    path: KeyPath
    suggestion: str | None = None

    @property
    def dotted(self) -> str:
        """The key path joined with dots, e.g. ``driver.upgradePolicy.maxParalelUpgrades``."""
        return ".".join(self.path)

    def __str__(self) -> str:
        hint = f" (did you mean {self.suggestion!r}?)" if self.suggestion else ""
        return f"{self.dotted}{hint}"


def unknown_values_keys(
    values: Mapping[str, Any],
    chart_values: ChartValues,
    *,
    extra_known: Iterable[str] = (),
    open_keys: Iterable[str] = DEFAULT_OPEN_KEYS,
) -> list[UnknownKey]:
    """List the keys of ``values`` the chart does not know, in document order of ``values``.

    Only the topmost unknown key of a subtree is listed.  Below a known key named in ``open_keys``
    nothing is checked.  A value whose type differs from the default (a map where the chart has a
    string) is not reported here: only unknown keys are.
    """
    found: list[UnknownKey] = []
    _walk(values, chart_values.defaults, (), _Context(chart_values, tuple(extra_known), frozenset(open_keys)),
          found)
    return found


def commented_keys(text: str) -> set[KeyPath]:
    """Key paths that a values.yaml documents only as commented-out lines (``  #version: ""``).

    The parent of a commented key is the nearest uncommented key with a smaller indentation.
    Comment lines inside list items and prose comments (several words after the colon) are ignored.
    """
    stack: list[tuple[int, str]] = []
    found: set[KeyPath] = set()
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            match = _COMMENTED_KEY.match(line)
            if match is None:
                continue
            indent = len(match.group("indent"))
            parents = [key for level, key in stack if level < indent]
            if _LIST in parents:
                continue
            found.add((*parents, match.group("key")))
            continue
        item = _ITEM_LINE.match(line)
        if item is not None:
            indent = len(item.group("indent"))
            stack = [(level, key) for level, key in stack if level < indent]
            stack.append((indent, _LIST))
            continue
        match = _KEY_LINE.match(line)
        if match is None:
            continue
        indent = len(match.group("indent"))
        stack = [(level, key) for level, key in stack if level < indent]
        stack.append((indent, match.group("key").strip("\"'")))
    return found


@dataclass(frozen=True, slots=True)
class _Context:
    chart_values: ChartValues
    patterns: tuple[str, ...]
    open_keys: frozenset[str]


@lru_cache(maxsize=64)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """One compiled test for "matches any of ``patterns``" (what ``fnmatchcase`` does with each)."""
    if not patterns:
        return lambda _: None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match


@lru_cache(maxsize=4096)
def _suggestion(key: str, known: tuple[str, ...]) -> str | None:
    """The known sibling closest to an unknown key (remembered: every cluster repeats the same keys)."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return close[0] if close else None


def _walk(
    values: Mapping[str, Any],
    defaults: Mapping[str, Any],
    prefix: KeyPath,
    context: _Context,
    found: list[UnknownKey],
) -> None:
    for raw_key, value in values.items():
        key = str(raw_key)
        path = (*prefix, key)
        if not prefix and key in context.chart_values.open_roots:
            continue
        if _matcher(context.patterns)(".".join(path)) is not None:
            continue
        if key not in defaults:
            if path in context.chart_values.commented:
                continue
            found.append(UnknownKey(path=path, suggestion=_suggestion(str(key), tuple(str(k) for k in defaults))))
            continue
        default = defaults[key]
        if key in context.open_keys or _is_open(default):
            continue
        if isinstance(default, Mapping) and isinstance(value, Mapping):
            _walk(value, default, path, context, found)


def _is_open(default: Any) -> bool:
    return default is None or isinstance(default, list) or (isinstance(default, Mapping) and not default)
