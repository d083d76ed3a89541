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
import inspect
import itertools
import types
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.filters import make_attrgetter
from jinja2.loaders import split_template_path
from jinja2.nodes import EvalContext
from jinja2.runtime import LoopContext, markup_join, str_join
from jinja2.sandbox import SandboxedEnvironment, SandboxedFormatter
from jinja2.utils import _PassArg, generate_lorem_ipsum
from jinja2.visitor import NodeTransformer
from markupsafe import EscapeFormatter, Markup

from gpuspec.errors import GpuspecError
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.redaction import redact_text
from gpuspec.templating import escape
from gpuspec.templating.budget import (
    HTML_GROWTH,
    MARKDOWN_GROWTH,
    MAX_ITERATIONS,
    MAX_OUTPUT_CHARS,
    MAX_POWER_BITS,
    MAX_RESULT,
    MAX_SEQUENCE,
    MAX_SIZE_ARGUMENT,
    MAX_SLOW_INPUT,
    TemplateBudgetExceeded,
    current,
    format_field_size,
    joined_size,
    line_count,
    printed_size,
    printf_size,
    refuse_over,
    replace_size,
    running,
    start,
    stop,
)
from gpuspec.templating.bytecode import SealedBytecodeCache

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


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple) else 0


def _check_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if type(value) is int and abs(value) > MAX_SIZE_ARGUMENT:
            raise TemplateBudgetExceeded(f"an argument of {value} is larger than {MAX_SIZE_ARGUMENT}")


def _budgeted_range(*args: int) -> Any:
    for value in args:
        if type(value) is not int:
            raise TypeError("range() takes integers")
    numbers = range(*args)
    if len(numbers) > MAX_ITERATIONS:
        raise TemplateBudgetExceeded(f"range of {len(numbers)} numbers, more than {MAX_ITERATIONS}")
    budget = current()
    for number in numbers:
        budget.tick()
        yield number


def _bounded_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    refuse_over(n * max, "lipsum", MAX_SIZE_ARGUMENT, "words")
    return generate_lorem_ipsum(n, html, min, max)


def _text_of(value: Any, what: str, growth: int = 1) -> str:
    """``value`` as the text a filter works on, refused when printing it (``growth`` times longer) is too long."""
    if type(value) is str:
        refuse_over(len(value) * growth, what)
        return value
    refuse_over(printed_size(value) * growth, what)
    return value if isinstance(value, str) else str(value)


def _items(values: Any, what: str) -> list[Any]:
    """The items of an iterable a filter joins, at most :data:`MAX_RESULT` of them."""
    if isinstance(values, list | tuple):
        return list(values)
    items = list(itertools.islice(iter(values), MAX_RESULT + 1))
    refuse_over(len(items), what, unit="items")
    return items


def _autoescape(arguments: dict[str, Any]) -> bool:
    eval_ctx = arguments.get("eval_ctx")
    return bool(getattr(eval_ctx, "autoescape", False))


def _size_replace(arguments: dict[str, Any]) -> int:
    text = _text_of(arguments["s"], "the replace filter")
    old, new = str(arguments["old"]), str(arguments["new"])
    count = arguments["count"]
    if not _autoescape(arguments):
        if not hasattr(arguments["s"], "__html__"):
            arguments["s"] = text
        return replace_size(text, old, new, -1 if count is None else count)
    found = HTML_GROWTH * len(text) // max(len(old), 1) + 1
    return HTML_GROWTH * len(text) + found * HTML_GROWTH * len(new)


def _size_format(arguments: dict[str, Any]) -> int:
    text = _text_of(arguments["value"], "the format filter")
    size = printf_size(text, arguments["kwargs"] or arguments["args"])
    return len(text) if size is None else size


def _size_indent(arguments: dict[str, Any]) -> int:
    text = _text_of(arguments["s"], "the indent filter")
    width = arguments["width"]
    step = width if type(width) is int else len(_text_of(width, "the indent filter's width"))
    return len(text) + line_count(text) * max(step, 0)


def _size_wordwrap(arguments: dict[str, Any]) -> int:
    text = _text_of(arguments["s"], "the wordwrap filter")
    refuse_over(len(text), "the wordwrap filter's text", MAX_SLOW_INPUT)
    wrap = arguments["wrapstring"]
    wrap = arguments["environment"].newline_sequence if wrap is None else _text_of(wrap, "the wordwrap filter")
    return len(text) + (len(text) + line_count(text)) * len(wrap)


def _size_truncate(arguments: dict[str, Any]) -> int:
    return len(_text_of(arguments["s"], "the truncate filter")) + len(_text_of(arguments["end"], "the truncate filter"))


def _size_join(arguments: dict[str, Any]) -> int:
    items = _items(arguments["value"], "the join filter")
    if arguments["attribute"] is not None:
        getter = make_attrgetter(arguments["eval_ctx"].environment, arguments["attribute"])
        items = [getter(item) for item in items]
        arguments["attribute"] = None
    arguments["value"] = items
    separator = len(_text_of(arguments["d"], "the join filter"))
    return joined_size(separator, items, HTML_GROWTH if _autoescape(arguments) else 1)


def _size_sum(arguments: dict[str, Any]) -> int:
    start = arguments["start"]
    if not isinstance(start, list | tuple | str):
        return 0  # numbers
    items = _items(arguments["iterable"], "the sum filter")
    if arguments["attribute"] is not None:
        getter = make_attrgetter(arguments["environment"], arguments["attribute"])
        items = [getter(item) for item in items]
        arguments["attribute"] = None
    arguments["iterable"] = items
    size = copies = len(start)
    for item in items:
        size += len(item) if isinstance(item, Sized) else 0
        copies += size  # each partial sum is a new sequence
    refuse_over(size, "the sum filter", unit="items")
    return copies


def _size_urlize(arguments: dict[str, Any]) -> int:
    text = _text_of(arguments["value"], "the urlize filter")
    refuse_over(len(text), "the urlize filter's text", MAX_SLOW_INPUT)
    attributes = sum(len(_text_of(arguments[name] or "", "the urlize filter")) for name in ("target", "rel"))
    return 2 * HTML_GROWTH * len(text) + (len(text) // 2 + 1) * (attributes + 100)


def _size_pprint(arguments: dict[str, Any]) -> int:
    size = printed_size(arguments["value"], MAX_SLOW_INPUT, quoted=True, align=True)
    refuse_over(size, "the pprint filter", MAX_SLOW_INPUT)
    return size


def _size_tojson(arguments: dict[str, Any]) -> int:
    indent = arguments["indent"]
    step = 0 if indent is None else indent if type(indent) is int else len(_text_of(indent, "the tojson filter"))
    return 12 * printed_size(arguments["value"], per_level=max(step, 0))  # \ud83d\ude00 for one character


def _size_codes(arguments: dict[str, Any]) -> int:
    items = arguments["values"] = _items(arguments["values"], "a Markdown list")
    return joined_size(len(_text_of(arguments["separator"], "a Markdown list")), items, MARKDOWN_GROWTH, 16)


def _size_fenced(arguments: dict[str, Any]) -> int:
    items = arguments["lines"] = _items(arguments["lines"], "the fenced filter")
    text = joined_size(0, items)
    refuse_over(text, "the fenced filter")
    lines = sum(line_count(item if type(item) is str else str(item)) for item in items)
    pad = arguments["indent"] if type(arguments["indent"]) is int else 0
    info = len(_text_of(arguments["info"], "the fenced filter"))
    return text + lines * (pad + 1) + 2 * (text + 4 + pad) + info


#: Filters whose result can be much longer than their value, and the upper bound of its length from the filter's
#: arguments (by parameter name); a rule may hand the filter the sequence it materialised.
_FILTER_SIZES: dict[str, Callable[[dict[str, Any]], int]] = {
    "replace": _size_replace, "format": _size_format, "indent": _size_indent, "wordwrap": _size_wordwrap,
    "truncate": _size_truncate, "join": _size_join, "sum": _size_sum, "urlize": _size_urlize,
    "pprint": _size_pprint, "tojson": _size_tojson, "codes": _size_codes, "texts": _size_codes,
    "fenced": _size_fenced,
}
#: Filters that print their value, and how much longer they make it at most.
_TEXT_FILTERS = {
    "capitalize": 3, "lower": 3, "upper": 3, "title": 3, "trim": 1, "string": 1, "safe": 1, "center": 1,
    "e": HTML_GROWTH, "escape": HTML_GROWTH, "forceescape": HTML_GROWTH, "xmlattr": HTML_GROWTH, "striptags": 1,
    "wordcount": 1, "urlencode": 12, "text": MARKDOWN_GROWTH, "code": MARKDOWN_GROWTH,
    "mermaid_label": MARKDOWN_GROWTH, "mermaid_id": 1,
}
#: Filters that return (part of) what they were given rather than something new.
_SELECTING = frozenset({"attr", "d", "default", "first", "last", "random", "min", "max", "reverse"})


class _NotAtCompileTime(Exception):
    """A filter of an override was called while its template compiled: it runs in the template's run instead."""


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as a filter of an override: size arguments checked, the result sized before it is made and
    counted after."""
    value_at = 0 if _PassArg.from_obj(function) is None else 1
    rule = _FILTER_SIZES.get(name)
    signature = inspect.signature(function) if rule is not None else None
    growth = _TEXT_FILTERS.get(name)
    selecting = name in _SELECTING

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        run = running()
        if run is None:
            raise _NotAtCompileTime(name)  # Jinja folds constants by calling filters while it compiles
        _check_arguments(args[value_at + 1:], kwargs)
        run.tick(0)
        if growth is not None and len(args) > value_at:
            _text_of(args[value_at], f"the {name} filter", growth)
        if signature is not None and rule is not None:
            try:
                call = signature.bind(*args, **kwargs)
            except TypeError:
                return function(*args, **kwargs)  # the filter reports its own wrong arguments
            call.apply_defaults()
            refuse_over(rule(call.arguments), f"the {name} filter")
            args, kwargs = call.args, call.kwargs
        result = function(*args, **kwargs)
        if not selecting:
            run.made(result)
        return result

    return bounded


#: How much longer a str or bytes method can make its text at most (by method name; 1 where not named).
_TEXT_METHOD_GROWTH = {"upper": 3, "lower": 3, "title": 3, "capitalize": 3, "swapcase": 3, "casefold": 3,
                       "encode": 10, "decode": 4, "hex": 3}


def _text_method_size(text: str | bytes, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[
        int, tuple[Any, ...]]:
    """Upper bound of the length of ``text.name(*args, **kwargs)``, and the arguments to call it with."""
    growth = HTML_GROWTH if isinstance(text, Markup) else 1
    if name == "replace" and len(args) >= 2:
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        new = args[1] * growth if isinstance(args[1], str | bytes) else args[1]
        return replace_size(text, args[0], new, count), args
    if name == "expandtabs":
        tabsize = args[0] if args else kwargs.get("tabsize", 8)
        tab = "\t" if isinstance(text, str) else b"\t"
        return len(text) + text.count(tab) * max(tabsize if type(tabsize) is int else 0, 0), args  # type: ignore[arg-type]
    if name == "join" and len(args) == 1:
        items = _items(args[0], f"{type(text).__name__}.join")
        return joined_size(len(text), items, growth), (items,)
    if name == "translate" and isinstance(text, str) and args:
        table = args[0]
        if isinstance(table, dict):
            values: Iterable[Any] = table.values()
        elif isinstance(table, list | tuple | str):
            values = table
        else:
            raise TemplateBudgetExceeded(f"a translate table of a {type(table).__name__} cannot be sized")
        longest = max((len(v) if isinstance(v, str) else 1 for v in values), default=1)
        return len(text) * max(longest, 1), args
    if name == "encode" and "namereplace" in (*args, *kwargs.values()):
        return 100 * len(text), args  # \N{...} with the longest character name
    return _TEXT_METHOD_GROWTH.get(name, 1) * len(text), args


class _BoundedFormatter(SandboxedFormatter):
    """``str.format`` of an override: each field sized before it is formatted, all of them within MAX_RESULT."""

    growth = 1

    def __init__(self, env: jinja2.Environment, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.size = 0

    def vformat(self, format_string: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
        self.size = len(format_string)
        result = super().vformat(format_string, args, kwargs)
        current().made(result)
        return result

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion is not None:
            refuse_over(printed_size(value, quoted=conversion != "s"), "a str.format field")
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        size = format_field_size(value, format_spec)
        if size is not None:
            self.size += size * self.growth
            refuse_over(self.size, "str.format")
        return super().format_field(value, format_spec)


class _BoundedEscapeFormatter(_BoundedFormatter, EscapeFormatter):
    """``Markup.format`` of an override (every field HTML-escaped), bounded like :class:`_BoundedFormatter`."""

    growth = HTML_GROWTH


class _Budgeted(NodeTransformer):
    """Rewrites a parsed override so that each ``~`` goes through :meth:`_SandboxedEnvironment.bounded_concat`
    and each ``for`` loop takes its items from :meth:`_SandboxedEnvironment.loop_items`."""

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        parts = [self.visit(part) for part in node.nodes]
        return nodes.Call(nodes.EnvironmentAttribute("bounded_concat"), parts, [], None, None, lineno=node.lineno)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.EnvironmentAttribute("loop_items"), [node.iter], [], None, None,
                               lineno=node.iter.lineno)
        return node


@jinja2.pass_eval_context
def _bounded_finalize(eval_ctx: EvalContext, value: Any) -> Any:
    """:func:`_finalize` of an override: the printed value sized first (it may be escaped twice, as Markdown and
    as HTML), then counted; HTML-escaped here already when autoescaping, so the escape that follows keeps it."""
    growth = MARKDOWN_GROWTH * (HTML_GROWTH if eval_ctx.autoescape else 1)
    if type(value) is not escape.Md and not isinstance(value, jinja2.Undefined):
        _text_of(value, "printing a value", growth)
    result = _finalize(value)
    if eval_ctx.autoescape:
        result = markupsafe.escape(result)
    run = running()
    if run is not None:
        run.made(result)  # the output str() copies it
    return result


class _SandboxedEnvironment(_FastDictAttributes, SandboxedEnvironment):
    """The environment once a fleet overrides a template: sandboxed, and every run within its budgets.  Every
    operation that can make a string or list longer than its operands is sized before it runs."""

    intercepted_binops = frozenset(["*", "**", "%", "+"])

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        return _Budgeted().visit(tree)  # type: ignore[no-any-return]

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        run = current()
        run.tick(0)
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if _size(seq) and type(times) is int and _size(seq) * times > MAX_SEQUENCE:
                    raise TemplateBudgetExceeded(f"a sequence of more than {MAX_SEQUENCE} items")
            if type(left) is int and type(right) is int and left.bit_length() + right.bit_length() > MAX_POWER_BITS:
                raise TemplateBudgetExceeded(f"a number of more than {MAX_POWER_BITS} bits")
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0 and \
                    max(abs(left).bit_length(), 1) * right > MAX_POWER_BITS and abs(left) > 1:
                raise TemplateBudgetExceeded(f"a number of more than {MAX_POWER_BITS} bits")
        elif operator == "%":
            if isinstance(left, str | bytes):
                size = printf_size(left, right, HTML_GROWTH if isinstance(left, Markup) else 1)
                if size is not None:
                    refuse_over(size, "a % format")
        elif operator == "+" and _size(left) + _size(right) > MAX_SEQUENCE * 16:
            raise TemplateBudgetExceeded(f"a sequence of more than {MAX_SEQUENCE * 16} items")
        result = super().call_binop(context, operator, left, right)
        run.made(result)
        return result

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format`` and ``format_map`` of a string, sandboxed and with every field sized before it is made."""
        if not isinstance(value, types.MethodType | types.BuiltinMethodType) or \
                value.__name__ not in ("format", "format_map") or not isinstance(value.__self__, str):
            return None
        text: str = value.__self__
        formatter = _BoundedEscapeFormatter(self, escape=text.escape) if isinstance(text, Markup) \
            else _BoundedFormatter(self)
        is_map = value.__name__ == "format_map"

        def bounded(*args: Any, **kwargs: Any) -> str:
            if not is_map:
                return type(text)(formatter.vformat(text, args, kwargs))
            if kwargs or len(args) != 1:
                raise TypeError("format_map() takes exactly one argument")
            return type(text)(formatter.vformat(text, (), args[0]))

        return functools.update_wrapper(bounded, value)

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any,
             **kwargs: Any) -> Any:
        owner = getattr(__obj, "__self__", None)
        if owner is __self:
            return __context.call(__obj, *args, **kwargs)  # bounded_concat, loop_items
        if isinstance(__obj, LoopContext) and args:
            args = (__self.loop_items(args[0]), *args[1:])  # loop(children) of a recursive loop
        _check_arguments((owner, *args), kwargs)
        run = current()
        run.tick(0)
        made = isinstance(owner, str | bytes)
        if isinstance(owner, str | bytes):
            plain = {key: value for key, value in kwargs.items() if key not in ("_loop_vars", "_block_vars")}
            size, args = _text_method_size(owner, __obj.__name__, args, plain)
            refuse_over(size, f"{type(owner).__name__}.{__obj.__name__}")
        elif isinstance(owner, list) and getattr(__obj, "__name__", "") == "extend" and args:
            items = args[0] if isinstance(args[0], Sized) else _items(args[0], "list.extend")
            refuse_over(len(owner) + len(items), "list.extend", unit="items")
            run.spend(8 * len(items))
            args = (items, *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        if made:
            run.made(result)
        return result

    @jinja2.pass_eval_context
    def bounded_concat(self, eval_ctx: EvalContext, *parts: Any) -> str:
        """``a ~ b``: the parts printed, their length checked before they are joined."""
        size = sum(len(part) if type(part) is str else printed_size(part) for part in parts)
        refuse_over(size * (HTML_GROWTH if eval_ctx.autoescape else 1), "a ~ concatenation")
        result = markup_join(parts) if eval_ctx.autoescape else str_join(parts)
        current().made(result)
        return result

    def loop_items(self, iterable: Iterable[Any]) -> Iterable[Any]:
        """The items of a ``for`` loop, each one a loop iteration of the budget."""
        run = current()
        for item in iterable:
            run.tick()
            yield item

    def concat(self, parts: Iterable[str]) -> str:
        """The output of a block, macro or ``set`` block: its length checked before it is joined."""
        items = parts if isinstance(parts, list) else list(parts)
        refuse_over(sum(map(len, items)), "a block's output")
        result = "".join(items)
        current().made(result)
        return result


@functools.cache
def _environment(overrides: str | None) -> jinja2.Environment:
    files = jinja2.FileSystemLoader(str(SHIPPED))
    loaders: list[jinja2.BaseLoader] = []
    if overrides is not None:
        loaders.append(_OverrideLoader(overrides))
    loaders += [jinja2.PrefixLoader({SHIPPED_PREFIX: files}), files]
    # Only gpuspec's own templates run unsandboxed; any fleet override makes the whole environment sandboxed.
    kind = _SandboxedEnvironment if overrides is not None else _Environment
    env = kind(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "htm", "xml"), default_for_string=False,
                                            default=False),
        finalize=_bounded_finalize if overrides is not None else _finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=True,
        # gpuspec's own templates keep their bytecode between runs (sealed user-cache entries); overrides never.
        bytecode_cache=None if overrides is not None else SealedBytecodeCache(),
    )
    env.filters.update(FILTERS)
    if overrides is not None:
        env.filters = {name: _bounded_filter(name, function) for name, function in env.filters.items()}
        env.globals.update(range=_budgeted_range, lipsum=_bounded_lipsum)
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
    except (RecursionError, MemoryError, ArithmeticError, LookupError, AttributeError, AssertionError,
            jinja2.TemplateError) as exc:
        if not sandboxed:
            raise
        what = "recursion too deep" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
        raise GpuspecError(f"{_template_line(exc, name)}: template error: {what}",
                           hint="fix the template override in fleet/templates/ or remove it") from None


def _render_within_budget(template: jinja2.Template, data: Mapping[str, Any]) -> str:
    """Render an override template, stopping at its output and time budgets."""
    budget = start()
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
        stop()


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
