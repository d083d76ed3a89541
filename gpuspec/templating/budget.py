"""Budgets of one run of a fleet's template override, and the sizes of what its operations would make.

A single C-level operation (``'%*d' % (3*10**9, 1)``, a ``replace`` whose replacement is long, ``sep.join`` of a
long list) cannot be stopped by the time budget once it runs, so every operation of a template that can make a
string or list longer than its operands is sized here *before* it runs, from its arguments: each function below
returns an upper bound of the result's length (characters or items).  The sandboxed environment
(:mod:`gpuspec.templating.environment`) refuses an operation whose bound is over :data:`MAX_RESULT` and counts what
every operation made against :data:`MAX_MADE_BYTES`.
"""

from __future__ import annotations

import datetime
import math
import re
import sys
import threading
import time
from collections.abc import ItemsView, KeysView, ValuesView
from typing import Any

import jinja2
from jinja2.environment import TemplateModule
from jinja2.exceptions import SecurityError
from jinja2.utils import Namespace

#: Budgets of one template run once a fleet overrides a template: wall time, output size, the size of any
#: sequence or number an expression makes, loop iterations in total (``for`` items and ``range`` numbers), and any
#: size argument or format width.
MAX_SECONDS = 5.0
MAX_OUTPUT_CHARS = 16 * 1024 * 1024
MAX_SEQUENCE = 1_000_000
MAX_POWER_BITS = 4096
MAX_ITERATIONS = 1_000_000
MAX_SIZE_ARGUMENT = 100_000
#: Longest string (characters) or list (items) one operation may make; its size is computed before it runs.
MAX_RESULT = 16 * 1024 * 1024
#: Memory that the strings, bytes and lists one run makes may take together (counted as made, never given back).
MAX_MADE_BYTES = 256 * 1024 * 1024
#: Longest text the pure-Python filters whose time grows faster than their input (wordwrap, urlize, pprint) take.
MAX_SLOW_INPUT = 100_000
#: How much longer Markdown escaping (``text``, ``code`` and ``{{ value }}``) makes a text at most, per character.
MARKDOWN_GROWTH = 8
#: The same for HTML escaping (``"`` becomes ``&#34;``).
HTML_GROWTH = 5


class TemplateBudgetExceeded(SecurityError):
    """A template run went past one of its budgets."""


class Budget:
    """What one run of an override template may still spend."""

    def __init__(self) -> None:
        self.deadline = time.monotonic() + MAX_SECONDS
        self.iterations = MAX_ITERATIONS
        self.memory = MAX_MADE_BYTES

    def tick(self, count: int = 1) -> None:
        """Spend ``count`` loop iterations; stop the run past the iteration or the time budget."""
        self.iterations -= count
        if self.iterations < 0:
            raise TemplateBudgetExceeded(f"more than {MAX_ITERATIONS:,} loop iterations")
        if time.monotonic() > self.deadline:
            raise TemplateBudgetExceeded(f"took longer than {MAX_SECONDS:g} s")

    def made(self, value: object) -> None:
        """Count a string, bytes, list, tuple or dict an operation returned against the memory budget."""
        if isinstance(value, str | bytes | list | tuple | dict):
            self.spend(sys.getsizeof(value))

    def spend(self, size: int) -> None:
        """Count ``size`` bytes an operation made against the memory budget."""
        self.memory -= size
        if self.memory < 0:
            raise TemplateBudgetExceeded(f"made more than {MAX_MADE_BYTES // 2**20} MiB of strings and lists")


_RUN = threading.local()


def start() -> Budget:
    """Begin a run in this thread: a fresh budget."""
    _RUN.value = budget = Budget()
    return budget


def stop() -> None:
    """End the run of this thread."""
    _RUN.value = None


def running() -> Budget | None:
    """The budget of the run in progress in this thread; None outside one (a template being compiled)."""
    return getattr(_RUN, "value", None)


def current() -> Budget:
    """The budget of the run in progress (a fresh one where none is)."""
    budget = running()
    return budget if budget is not None else start()


def refuse_over(size: int, what: str, limit: int = MAX_RESULT, unit: str = "characters") -> None:
    """Stop the run when an operation would make ``size`` characters (or items), more than ``limit``."""
    if size > limit:
        raise TemplateBudgetExceeded(f"{what} would make {size:,} {unit}, more than {limit:,}")


def refuse_width(width: int) -> None:
    """Stop the run at a size argument or format width over :data:`MAX_SIZE_ARGUMENT`."""
    if width > MAX_SIZE_ARGUMENT:
        raise TemplateBudgetExceeded(f"a format width or precision of {width:,}, over {MAX_SIZE_ARGUMENT:,}")


def _digits(number: int) -> int:
    """Upper bound of the length of a decimal integer (sign included)."""
    return number.bit_length() * 30103 // 100000 + 2


def _quoted(text: str) -> int:
    """Upper bound of ``len(repr(text))`` and ``len(ascii(text))``."""
    return 2 * len(text) + 2 if text.isascii() and text.isprintable() else 10 * len(text) + 2


#: Characters around a container's items at most (``frozenset({`` and ``})``).
_BRACKETS = 12
#: Length of the longest float repr (``-1.7976931348623157e+308``).
_FLOAT_CHARS = 24


def printed_size(value: Any, limit: int = MAX_RESULT, *, quoted: bool = False, per_level: int = 0,
                 align: bool = False) -> int:
    """Upper bound of ``len(str(value))`` (of ``repr`` with ``quoted``); ``limit + 1`` once it is past ``limit``.

    With ``per_level`` or ``align`` every item may stand on a line of its own, indented ``per_level`` per nesting
    level (``json.dumps(indent=...)``) or aligned after its dict key (``pprint``).  A value with more than
    :data:`MAX_SEQUENCE` items in all (shared ones counted each time) is refused.
    """
    lines = bool(per_level or align)
    total = 0
    steps = 0
    known: dict[int, int] = {}
    stack: list[tuple[Any, bool, int]] = [(value, quoted, 0)]
    while stack:
        item, as_repr, column = stack.pop()
        if lines:
            total += column + 1
        if isinstance(item, str | bytes | bytearray):
            if isinstance(item, str):
                total += _quoted(item) + len(type(item).__name__) + 2 if as_repr else len(item)
            else:
                total += 4 * len(item) + 14
            if align and 10 * len(item) + column > 72:
                total += (column + 4) * len(item)  # pprint may break it into a line per word, each indented
        elif item is None or isinstance(item, bool):
            total += 5
        elif isinstance(item, int):
            total += _digits(item)
        elif isinstance(item, float):
            total += _FLOAT_CHARS
        elif isinstance(item, jinja2.Undefined):
            pass  # printing it raises
        elif isinstance(item, list | tuple | set | frozenset | dict | KeysView | ValuesView | ItemsView | Namespace):
            children: Any = item._Namespace__attrs if isinstance(item, Namespace) else item
            count = len(children)
            steps += count
            if steps > MAX_SEQUENCE:
                raise TemplateBudgetExceeded(f"printing a value of more than {MAX_SEQUENCE:,} items")
            total += _BRACKETS + 4 * count
            inner = column + per_level + 1
            flat = None
            if not align and isinstance(children, list | tuple) and count > 16:
                flat = _flat_size(children, limit)
            if flat is not None:
                total += flat + (count * (inner + 1) if lines else 0)
            elif isinstance(children, dict):
                for key, child in children.items():
                    key_size = printed_size(key, limit, quoted=True)
                    total += key_size
                    stack.append((child, True, inner + key_size + 2 if align else inner))
            else:
                stack.extend((child, True, inner) for child in children)
        elif isinstance(item, TemplateModule):
            total += sum(map(len, item._body_stream))  # str() joins what the imported template printed
        else:
            size = known.get(id(item))
            if size is None:
                size = known[id(item)] = len(repr(item) if as_repr else str(item))
            total += size
        if total > limit:
            return limit + 1
    return total


def _flat_size(items: list[Any] | tuple[Any, ...], limit: int) -> int | None:
    """Upper bound of the reprs of ``items`` together where all are ints or all are strings (summed at C speed, and
    past ``limit`` without looking at each character); None for any other list."""
    kinds = set(map(type, items))
    if kinds == {int}:
        return sum(map(int.bit_length, items)) * 30103 // 100000 + 2 * len(items)
    if kinds == {str}:
        chars = sum(map(len, items))
        if 2 * chars > limit:
            return 2 * chars
        plain = all(map(str.isascii, items)) and all(map(str.isprintable, items))
        return (2 if plain else 10) * chars + 2 * len(items)
    return None


def printf_size(fmt: str | bytes, args: Any, growth: int = 1) -> int | None:
    """Upper bound of ``len(fmt % args)`` (``growth``: how much longer an escaping format makes each argument);
    None where Python itself refuses the format (and raises, making nothing).

    Widths and precisions, ``*`` ones taken from the arguments included, over :data:`MAX_SIZE_ARGUMENT` are refused.
    """
    text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
    positional = args if isinstance(args, tuple) else (args,)
    mapping = None if isinstance(args, tuple | str | bytes) or not hasattr(type(args), "__getitem__") else args
    used = 0
    total = len(text)
    end = len(text)
    at = text.find("%")
    while at != -1:
        i = at + 1
        value: Any = None
        keyed = i < end and text[i] == "("
        if keyed:
            depth, i = 1, i + 1
            start = i
            while i < end and depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            if depth:
                return None  # incomplete format key
            if mapping is None or isinstance(mapping, list | tuple | str | bytes):
                return None  # format requires a mapping
            if not isinstance(mapping, dict):
                raise TemplateBudgetExceeded(f"a % format with a {type(mapping).__name__} cannot be sized")
            key = text[start:i - 1]
            if key not in mapping:
                return None
            value = mapping[key]
        while i < end and text[i] in "-+ #0":
            i += 1
        width, i, used = _field_number(text, i, positional, used)
        precision = None
        if width >= 0 and i < end and text[i] == ".":
            precision, i, used = _field_number(text, i + 1, positional, used)
        if width < 0 or (precision is not None and precision < 0):
            return None  # not enough arguments, or "* wants int"
        refuse_width(max(width, precision or 0))
        if i < end and text[i] in "hlL":
            i += 1
        if i >= end:
            return None  # incomplete format
        conversion = text[i]
        if conversion != "%" and not keyed:
            if used >= len(positional):
                return None  # not enough arguments
            value = positional[used]
            used += 1
        size = 1 if conversion == "%" else _conversion_size(conversion, value, precision, growth)
        if size is None:
            return None
        total += max(width, size)
        at = text.find("%", i + 1)
    return total


def _field_number(text: str, i: int, positional: tuple[Any, ...], used: int) -> tuple[int, int, int]:
    """The width or precision at ``text[i]`` (``*`` takes the next argument): the number (-1 where Python refuses
    it), where the format goes on, and how many arguments are used."""
    if i < len(text) and text[i] == "*":
        if used >= len(positional) or not isinstance(positional[used], int):
            return -1, i, used
        return abs(positional[used]), i + 1, used + 1
    start = i
    while i < len(text) and "0" <= text[i] <= "9":
        i += 1
    digits = i - start
    return (int(text[start:i]) if digits <= 18 else 10**18) if digits else 0, i, used


def _conversion_size(conversion: str, value: Any, precision: int | None, growth: int) -> int | None:
    """Upper bound of one ``%`` conversion's length before padding; None where Python refuses it."""
    if conversion in "srab":
        size = printed_size(value, quoted=conversion in "ra")
        return min(size, precision) * growth if precision is not None else size * growth
    if conversion == "c":
        return growth
    if conversion in "diuoxXeEfFgG":
        if isinstance(value, int):
            digits = _digits(value) + 2
        elif isinstance(value, float):
            digits = 312 if math.isfinite(value) else 4
        elif any(hasattr(type(value), name) for name in ("__index__", "__int__", "__float__")):
            raise TemplateBudgetExceeded(f"a %{conversion} of a {type(value).__name__} cannot be sized")
        else:
            return None  # a number is required
        if conversion in "eEfFgG":
            return 320 + (6 if precision is None else precision)
        return max(digits, precision or 0) + 3
    return None  # unsupported format character


#: A standard format specification: ``[[fill]align][sign][z][#][0][width][grouping][.precision][type]``.
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?(?P<kind>[bcdeEfFgGnosxX%]?)",
                   re.DOTALL)


def _spec_number(digits: str | None) -> int:
    return 0 if not digits else int(digits) if len(digits) <= 18 else 10**18


def format_field_size(value: Any, spec: str) -> int | None:
    """Upper bound of ``len(format(value, spec))`` (one field of ``str.format``); None where Python refuses it."""
    if isinstance(value, str | int | float):
        match = _SPEC.fullmatch(spec)
        if match is None:
            return None  # invalid format specifier
        width, precision = _spec_number(match["width"]), _spec_number(match["precision"])
        refuse_width(max(width, precision))
        kind = match["kind"]
        if isinstance(value, str):
            size = min(len(value), precision) if match["precision"] else len(value)
        elif isinstance(value, int) and kind in "bcdnoxX":
            size = 2 * value.bit_length() + 8
        else:
            size = 450 + (precision or 6)
        return max(width, size)
    if type(value).__format__ is object.__format__:  # type: ignore[comparison-overlap]
        return None if spec else printed_size(value)  # format(value, "") is str(value)
    if isinstance(value, datetime.date | datetime.time):
        return 16 * len(spec) + 64  # strftime: no directive prints more than 16 characters per pattern character
    raise TemplateBudgetExceeded(f"a format field of a {type(value).__name__} cannot be sized")


def replace_size(text: str | bytes, old: Any, new: Any, count: Any = -1) -> int:
    """Upper bound of ``len(text.replace(old, new, count))``: occurrences times growth."""
    if not isinstance(old, type(text)) or not isinstance(new, type(text)):
        return len(text)  # str.replace raises
    found = len(text) + 1 if not old else text.count(old)  # type: ignore[arg-type]
    if type(count) is int and count >= 0:
        found = min(found, count)
    return len(text) + found * max(len(new) - len(old), 0)


#: Characters that ``str.splitlines`` ends a line at.
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def line_count(text: str) -> int:
    """Upper bound of ``len(text.splitlines())`` (at least 1)."""
    return 1 + sum(text.count(mark) for mark in _LINE_BREAKS)


def joined_size(separator: int, items: list[Any], growth: int = 1, extra: int = 0) -> int:
    """Upper bound of joining ``items`` as text (each printed, ``growth`` times longer plus ``extra``) with a
    ``separator``-long separator; past :data:`MAX_RESULT` the sum stops."""
    total = separator * max(len(items) - 1, 0)
    for item in items:
        total += (len(item) if type(item) is str else printed_size(item)) * growth + extra
        if total > MAX_RESULT:
            break
    return total
