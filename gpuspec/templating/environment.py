"""The Jinja2 environment of gpuspec's documents: shipped templates, fleet-repository overrides, escaping.

Templates ship in ``gpuspec/templating/templates/`` (``handover/cluster.md.j2``, ``handover/index.md.j2``,
``plan/comment.md.j2``).  A fleet repository overrides any of them by putting a file with the same relative
name into its ``fleet/templates/`` folder; an override can extend the shipped template as
``gpuspec/<name>`` and replace single blocks.  With overrides present, templates run sandboxed (a template
from a pull request cannot reach Python internals); always with ``StrictUndefined`` (a misspelt name is an
error, never an empty string), and every ``{{ value }}`` that is not already escaped Markdown
(:class:`~gpuspec.templating.escape.Md`) is escaped as text.  HTML templates (``.html``) are autoescaped as
HTML instead.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import SandboxedEnvironment

from gpuspec.errors import GpuspecError
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.templating import escape

#: Folder of the shipped templates.
SHIPPED = Path(__file__).resolve().parent / "templates"
#: Folder of a fleet's template overrides, relative to the fleet directory.
OVERRIDES_DIR = "templates"
#: Prefix that names a shipped template from an override (``{% extends "gpuspec/handover/cluster.md.j2" %}``).
SHIPPED_PREFIX = "gpuspec"

FILTERS = {
    "text": escape.text,
    "code": escape.code,
    "codes": escape.codes,
    "texts": escape.texts,
    "mermaid_label": escape.mermaid_label,
    "mermaid_id": escape.mermaid_id,
    "fenced": escape.fenced,
}


def _finalize(value: Any) -> Any:
    """Escape every interpolated value that is not already Markdown (numbers print as they are)."""
    kind = type(value)
    if kind is escape.Md:
        return value
    if kind is str:
        return escape.text(value)
    if kind is int:
        return str(value)
    if isinstance(value, escape.Md | jinja2.Undefined):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return escape.text(value)
    return str(value)


def override_dir(fleet_dir: Path | None) -> Path | None:
    """The fleet's template override folder when it exists."""
    if fleet_dir is None:
        return None
    folder = fleet_dir / OVERRIDES_DIR
    return folder if folder.is_dir() else None


def override_files(fleet_dir: Path | None) -> dict[str, str]:
    """sha256 of every override template of the fleet, keyed by ``templates/<relative path>``."""
    folder = override_dir(fleet_dir)
    if folder is None:
        return {}
    out: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() or p.is_symlink():
            try:
                sha = hashlib.sha256(read_bounded(p, MAX_TEMPLATE_BYTES)).hexdigest()
            except (UnsafeFile, OSError) as refused:
                sha = f"unreadable: {refused}"  # the render itself reports it
            out[f"{OVERRIDES_DIR}/{p.relative_to(folder).as_posix()}"] = sha
    return out


#: Largest template override read.
MAX_TEMPLATE_BYTES = 1024 * 1024


class _OverrideLoader(jinja2.FileSystemLoader):
    """Loads fleet overrides only from regular files inside the fleet repository (no link out of it, no FIFO
    or device), at most :data:`MAX_TEMPLATE_BYTES` each: a template cannot pull in a file from elsewhere."""

    def get_source(self, environment: jinja2.Environment,
                   template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        for searchpath in self.searchpath:
            path = Path(searchpath, *pieces)
            if not (path.is_symlink() or path.exists()):
                continue
            try:
                text = read_bounded(path, MAX_TEMPLATE_BYTES).decode("utf-8")
            except UnsafeFile as refused:
                raise GpuspecError(f"template override {path} {refused.message}") from None
            except UnicodeDecodeError:
                raise GpuspecError(f"template override {path} is not UTF-8 text") from None
            except OSError as exc:
                raise GpuspecError(f"template override {path} cannot be read: {exc.strerror or exc}") from None
            mtime = path.stat().st_mtime_ns

            def uptodate(path: Path = path, mtime: int = mtime) -> bool:
                try:
                    return path.stat().st_mtime_ns == mtime
                except OSError:
                    return False

            return text, str(path), uptodate
        raise jinja2.TemplateNotFound(template)


#: Attribute names a plain dict has (methods and dunders): ``d.items`` is the method, as in Jinja itself.
_DICT_ATTRIBUTES = frozenset(dir(dict))


class _FastDictAttributes:
    """Mixin for an environment: ``value.name`` on a plain dict reads the key without first raising and
    catching an AttributeError (documents read facts as nested dicts, hundreds of lookups each).  Same result
    as Jinja's own lookup: dict attributes still win over keys, a missing key is undefined."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)  # type: ignore[attr-defined]
        return super().getattr(obj, attribute)  # type: ignore[misc]


class _Environment(_FastDictAttributes, jinja2.Environment):
    """The environment of gpuspec's own templates."""


class _SandboxedEnvironment(_FastDictAttributes, SandboxedEnvironment):
    """The environment once a fleet overrides a template."""


@functools.cache
def _environment(overrides: str | None) -> jinja2.Environment:
    shipped = jinja2.FileSystemLoader(str(SHIPPED))
    loaders: list[jinja2.BaseLoader] = []
    if overrides is not None:
        loaders.append(_OverrideLoader(overrides))
    loaders += [jinja2.PrefixLoader({SHIPPED_PREFIX: shipped}), shipped]
    # Only gpuspec's own templates run unsandboxed; any fleet override makes the whole environment sandboxed.
    kind = _SandboxedEnvironment if overrides is not None else _Environment
    env = kind(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "htm", "xml"), default_for_string=False,
                                            default=False),
        finalize=_finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=True,
    )
    env.filters.update(FILTERS)
    return env


def environment(fleet_dir: Path | None = None) -> jinja2.Environment:
    """The template environment for a fleet: its ``templates/`` overrides first, then the shipped templates."""
    folder = override_dir(fleet_dir)
    return _environment(str(folder.resolve()) if folder is not None else None)


def render(name: str, data: Mapping[str, Any], fleet_dir: Path | None = None) -> str:
    """Render template ``name`` with ``data``; a broken template or missing value is a GpuspecError naming it."""
    env = environment(fleet_dir)
    try:
        return env.get_template(name).render(**data)
    except jinja2.TemplateSyntaxError as exc:
        where = f"{exc.filename or exc.name or name}:{exc.lineno}"
        raise GpuspecError(f"{where}: template syntax error: {exc.message}",
                           hint="fix the template override in fleet/templates/ or remove it") from None
    except jinja2.TemplateNotFound as exc:
        raise GpuspecError(f"template {exc.name} not found") from None
    except (jinja2.UndefinedError, SecurityError, TypeError, ValueError) as exc:
        raise GpuspecError(f"template {name}: {exc}",
                           hint="a template override uses a name gpuspec does not provide, or an unsafe operation") \
            from None
