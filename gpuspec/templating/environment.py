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
import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import SandboxedEnvironment

from gpuspec.errors import GpuspecError
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.redaction import redact_text
from gpuspec.templating import escape
from gpuspec.templating.precompiled import PrecompiledLoader

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


#: Budgets of one template run once a fleet overrides a template: wall time, output size, the size of any
#: sequence or number an expression makes, loop iterations of ``range`` in total, and any size argument.
MAX_SECONDS = 5.0
MAX_OUTPUT_CHARS = 16 * 1024 * 1024
MAX_SEQUENCE = 1_000_000
MAX_POWER_BITS = 4096
MAX_ITERATIONS = 1_000_000
MAX_SIZE_ARGUMENT = 100_000
_BIG_WIDTH = re.compile(r"\d{6,}")


class TemplateBudgetExceeded(SecurityError):
    """A template run went past one of its budgets."""


class _Budget:
    """What one run of an override template may still spend."""

    def __init__(self) -> None:
        self.deadline = time.monotonic() + MAX_SECONDS
        self.iterations = MAX_ITERATIONS

    def tick(self, count: int = 1) -> None:
        self.iterations -= count
        if self.iterations < 0:
            raise TemplateBudgetExceeded(f"more than {MAX_ITERATIONS} loop iterations")
        if time.monotonic() > self.deadline:
            raise TemplateBudgetExceeded(f"took longer than {MAX_SECONDS:g} s")


_BUDGET = threading.local()


def _budget() -> _Budget:
    current = getattr(_BUDGET, "value", None)
    if current is None:
        current = _BUDGET.value = _Budget()
    return current


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple) else 0


def _check_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if type(value) is int and abs(value) > MAX_SIZE_ARGUMENT:
            raise TemplateBudgetExceeded(f"an argument of {value} is larger than {MAX_SIZE_ARGUMENT}")
        if isinstance(value, str) and _BIG_WIDTH.search(value) and ("{" in value or "%" in value):
            raise TemplateBudgetExceeded("a format width or precision over 99,999")


def _budgeted_range(*args: int) -> Any:
    for value in args:
        if type(value) is not int:
            raise TypeError("range() takes integers")
    numbers = range(*args)
    if len(numbers) > MAX_ITERATIONS:
        raise TemplateBudgetExceeded(f"range of {len(numbers)} numbers, more than {MAX_ITERATIONS}")
    budget = _budget()
    for number in numbers:
        budget.tick()
        yield number


def _bounded_filter(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_arguments(args[1:], kwargs)
        _budget().tick(0)
        return function(*args, **kwargs)

    return bounded


class _SandboxedEnvironment(_FastDictAttributes, SandboxedEnvironment):
    """The environment once a fleet overrides a template: sandboxed, and every run within its budgets."""

    intercepted_binops = frozenset(["*", "**", "%", "+"])

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        _budget().tick(0)
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if _size(seq) and type(times) is int and _size(seq) * times > MAX_SEQUENCE:
                    raise TemplateBudgetExceeded(f"a sequence of more than {MAX_SEQUENCE} items")
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0 and \
                    max(abs(left).bit_length(), 1) * right > MAX_POWER_BITS and abs(left) > 1:
                raise TemplateBudgetExceeded(f"a number of more than {MAX_POWER_BITS} bits")
        elif operator == "%":
            if isinstance(left, str) and _BIG_WIDTH.search(left):
                raise TemplateBudgetExceeded("a format width or precision over 99,999")
        elif operator == "+" and _size(left) + _size(right) > MAX_SEQUENCE * 16:
            raise TemplateBudgetExceeded(f"a sequence of more than {MAX_SEQUENCE * 16} items")
        return super().call_binop(context, operator, left, right)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is str and attribute in ("format", "format_map") and _BIG_WIDTH.search(obj):
            raise TemplateBudgetExceeded("a format width or precision over 99,999")
        return super().getattr(obj, attribute)

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any,
             **kwargs: Any) -> Any:
        _check_arguments((getattr(__obj, "__self__", None), *args), kwargs)
        _budget().tick(0)
        return super().call(__context, __obj, *args, **kwargs)


@functools.cache
def _environment(overrides: str | None) -> jinja2.Environment:
    files = jinja2.FileSystemLoader(str(SHIPPED))
    loaders: list[jinja2.BaseLoader] = []
    if overrides is not None:
        loaders.append(_OverrideLoader(overrides))
    # Compiled ahead of time only for the environment they were compiled in (see gpuspec.templating.precompiled).
    shipped = files if overrides is not None else PrecompiledLoader(files)
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
    if overrides is not None:
        env.filters = {name: _bounded_filter(function) for name, function in env.filters.items()}
        env.globals["range"] = _budgeted_range
    return env


def shipped_environment() -> jinja2.Environment:
    """The environment of gpuspec's own templates when the fleet overrides none (unsandboxed)."""
    return _environment(None)


def environment(fleet_dir: Path | None = None) -> jinja2.Environment:
    """The template environment for a fleet: its ``templates/`` overrides first, then the shipped templates."""
    folder = override_dir(fleet_dir)
    return _environment(str(folder.resolve()) if folder is not None else None)


def render(name: str, data: Mapping[str, Any], fleet_dir: Path | None = None) -> str:
    """Render template ``name`` with ``data``; a broken template or missing value is a GpuspecError naming it.

    A credential-like ``key: value`` anywhere in the document (a spec text that quotes one) is redacted, as in
    every message gpuspec prints.
    """
    env = environment(fleet_dir)
    sandboxed = isinstance(env, _SandboxedEnvironment)
    try:
        template = env.get_template(name)
        if not sandboxed:
            return redact_text(template.render(**data))
        return redact_text(_render_within_budget(template, data))
    except TemplateBudgetExceeded as exc:
        raise GpuspecError(f"{_template_line(exc, name)}: template stopped: {exc}",
                           hint="a template override may not run longer or make more than gpuspec allows") from None
    except jinja2.TemplateSyntaxError as exc:
        where = f"{exc.filename or exc.name or name}:{exc.lineno}"
        raise GpuspecError(f"{where}: template syntax error: {exc.message}",
                           hint="fix the template override in fleet/templates/ or remove it") from None
    except jinja2.TemplateNotFound as exc:
        raise GpuspecError(f"template {exc.name} not found") from None
    except (jinja2.UndefinedError, SecurityError, TypeError, ValueError) as exc:
        raise GpuspecError(f"{_template_line(exc, name)}: template error: {exc}",
                           hint="a template override uses a name gpuspec does not provide, or an unsafe operation") \
            from None
    except (RecursionError, MemoryError, ArithmeticError, LookupError, AttributeError, jinja2.TemplateError) as exc:
        if not sandboxed:
            raise
        what = "recursion too deep" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
        raise GpuspecError(f"{_template_line(exc, name)}: template error: {what}",
                           hint="fix the template override in fleet/templates/ or remove it") from None


def _render_within_budget(template: jinja2.Template, data: Mapping[str, Any]) -> str:
    """Render an override template, stopping at its output and time budgets."""
    _BUDGET.value = budget = _Budget()
    try:
        parts: list[str] = []
        size = 0
        for part in template.generate(**data):
            size += len(part)
            if size > MAX_OUTPUT_CHARS:
                raise TemplateBudgetExceeded(f"output over {MAX_OUTPUT_CHARS} characters")
            budget.tick(0)
            parts.append(part)
        return "".join(parts)
    finally:
        _BUDGET.value = None


def _template_line(exc: BaseException, name: str) -> str:
    """``template:line`` of the innermost template frame of ``exc`` (the template's name when none)."""
    where = f"template {name}"
    trace = exc.__traceback__
    while trace is not None:
        filename = trace.tb_frame.f_code.co_filename
        if filename.endswith((".j2", ".md", ".html")) or "/templates/" in filename:
            where = f"{filename}:{trace.tb_lineno}"
        trace = trace.tb_next
    return where
