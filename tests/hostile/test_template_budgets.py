"""A template override runs within budgets (time, output, sequence and number sizes, loop iterations, size
arguments, recursion): every way past them, and every runtime error of the template, is an exit-2 message that
names the template and line, never an internal error, a hang or gigabytes of memory.

Operations that a single C call carries out (``%`` formatting, ``replace``, ``join``, ``str.format``...) are sized
from their arguments before they run: :data:`C_LEVEL` payloads stop with "template stopped" within the time budget
and under an address-space cap of 1 GiB over the process's size (a payload that allocated first would fail with
MemoryError, or run until killed)."""

from __future__ import annotations

import contextlib
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuspec.templating.budget import MAX_SECONDS
from gpuspec.templating.environment import shipped_environment
from hostile.hostile_cli import gpuspec, make_repo

PAYLOADS = [
    "{{ 'a' * 10**10 }}",
    "{{ ([1] * 10**8) | length }}",
    "{{ 'ab' * 600000 + 'c' * 600000 }}",
    "{{ 7 ** (10 ** 8) }}",
    "{{ 2 ** 4000 ** 2 }}",
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% for i in range(10**10) %}{% endfor %}",
    "{{ 'x' | center(10**9) }}",
    "{{ '{:>1000000000}'.format(1) }}",
    "{{ '%1000000000s' % 'x' }}",
    "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}",
    "{{ 1 / 0 }}",
    "{{ [1, 2][10] }}",
    "{{ 42 | upper | int | join(5) }}",
    "{{ none.attribute.deeper }}",
    "{% for x in 5 %}{% endfor %}",
    "{{ 'a' | indent(10**9) }}",
    "{{ range(10) | batch(10**9) | list }}",
    "{{ 'x' | truncate(2, end='abc') }}",
]

#: Payloads whose harm is one C-level call (or a few): each is refused by the size of its arguments, before it runs.
C_LEVEL = [
    # % formatting: widths and precisions, * ones from the arguments, with a dict, many fields
    "{{ '%*d' % (3*10**9, 1) }}",
    "{{ '%.*f' % (3*10**9, 1.0) }}",
    "{{ '%-*s' % (-3*10**9, 'x') }}",
    "{{ '%(a)1000000000s' % {'a': 1} }}",
    "{{ ('%99999s' * 10000) % (('x',) * 10000) }}",
    "{{ ('%s' * 100) % (('x' * 1000000,) * 100) }}",
    "{{ '%*d' | format(3*10**9, 1) }}",
    "{{ ('%99999s' * 1000) | format(*(['x'] * 1000)) }}",
    "{{ ('%(a)s' * 100000) | format(a='x' * 1000) }}",
    # replace: occurrences times growth
    "{{ ('x' * 1000) | replace('x', 'y' * 10000) | replace('y', 'z' * 10000) }}",
    "{{ ('x' * 100000) | replace('x', 'y' * 100000) }}",
    "{{ ('x' * 100000).replace('x', 'y' * 100000) }}",
    "{{ ('x' * 100000).replace('', 'y' * 1000) }}",
    "{{ ('x' * 100000).encode().replace('x'.encode(), ('y' * 100000).encode()) }}",
    # padding, tabs, indentation, wrapping
    "{{ ('\\t' * 1000000).expandtabs(100000) }}",
    "{{ ('\\n' * 1000000) | indent(100000) }}",
    "{{ ('\\n' * 1000000) | indent('x' * 100000) }}",
    "{{ ('a ' * 50000) | wordwrap(1, wrapstring='x' * 100000) }}",
    "{{ ('x' * 1000000) | wordwrap(1) }}",
    # join, sum, Markdown lists and code blocks
    "{{ ('y' * 100000).join(['x'] * 100000) }}",
    "{{ (['x' * 100000] * 1000000) | join }}",
    "{{ (['x'] * 1000000) | join('y' * 100000) }}",
    "{{ ([{'a': 'x' * 100000}] * 1000) | join(attribute='a') }}",
    "{{ ([[1] * 1000000] * 1000) | sum(start=[]) }}",
    "{{ (['a'] * 1000000) | codes('x' * 100000) }}",
    "{{ ([''] * 1000000) | fenced(indent=100000) }}",
    # str.format and format_map: widths from the arguments, fields repeated, conversions of big values
    "{{ '{:{}}'.format(1, '1000000000') }}",
    "{{ '{a:>{w}}'.format_map({'a': 1, 'w': '2000000000'}) }}",
    "{{ ('{0}' * 20).format('x' * 1000000) }}",
    "{{ '{!r}'.format(['x' * 100000] * 1000) }}",
    "{{ ('{}' * 100000).format(*(['x' * 1000] * 100000)) }}",
    # other string-making methods and filters
    "{{ ('abc' * 100000).translate({97: 'x' * 100000}) }}",
    "{{ ('x' * 1000000).encode('ascii', 'namereplace') }}",
    "{{ ['x' * 100000] * 1000000 }}",
    "{{ ['x' * 100000] * 1000000 ~ '' }}",
    "{{ (['x' * 100000] * 1000000) | string }}",
    "{{ (['x' * 100000] * 1000000) | tojson }}",
    "{{ ([{'k': ['x'] * 1000}] * 1000) | pprint }}",
    "{{ ('a.co ' * 100000) | urlize(target='x' * 100000) }}",
    "{{ lipsum(100000, max=100000) }}",
    # growth by repetition: ~, list.extend, a namespace, a block that prints in a loop
    "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "{% set l = [1] * 1000000 %}{% for i in range(30) %}{% set _ = l.extend(l) %}{% endfor %}",
    "{% set ns = namespace(l=[]) %}{% for i in range(10000) %}{% set _ = ns.l.append('x' * 1000000) %}{% endfor %}",
    "{% set l = [1] * 1000000 %}{% macro m() %}{% for a in l %}{% for b in l %}x{% endfor %}{% endfor %}{% endmacro %}"
    "{{ m() }}",
    "{% set s = 'x' * 1000000 %}{% set b %}{% for i in range(10000) %}{{ s }}{% endfor %}{% endset %}{{ b }}",
    "{% for x in [[1] * 1000000] * 1000 recursive %}{% if x is iterable %}{{ loop(x) }}{% endif %}{% endfor %}",
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_hostile_template_is_a_clean_error(payload: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    overrides = root / "fleet" / "templates" / "handover"
    overrides.mkdir(parents=True)
    (overrides / "cluster.md.j2").write_text("first line\n" + payload + "\n")
    result = gpuspec(["handover"], monkeypatch, capsys, cwd=root)
    assert result.code == 2, result.text
    assert "cluster.md.j2:2" in result.err, result.err
    assert len(result.text) < 10_000


class Hung(BaseException):
    """A template ran past the hang guard (a BaseException, so the CLI's error handling does not swallow it)."""


@contextlib.contextmanager
def _bounded(extra: int = 1 << 30, seconds: int = 60) -> Iterator[None]:
    """Cap this process's address space at its current size plus ``extra`` bytes and its time at ``seconds``."""
    import signal

    def expire(_signum: int, _frame: object) -> None:
        raise Hung(f"the template ran for more than {seconds} s")

    size = int(next(line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
                    if line.startswith("VmSize:"))) * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    previous = signal.signal(signal.SIGALRM, expire)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the address-space cap needs Linux")
@pytest.mark.parametrize("payload", C_LEVEL, ids=range(len(C_LEVEL)))
def test_c_level_operation_is_sized_before_it_runs(payload: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    overrides = root / "fleet" / "templates" / "handover"
    overrides.mkdir(parents=True)
    (overrides / "cluster.md.j2").write_text("first line\n" + payload + "\n")
    began = time.monotonic()
    with _bounded():
        result = gpuspec(["handover"], monkeypatch, capsys, cwd=root)
    assert result.code == 2, result.text
    assert "cluster.md.j2:2: template stopped:" in result.err, result.err
    assert "MemoryError" not in result.err
    assert time.monotonic() - began < MAX_SECONDS + 5


def test_ordinary_overrides_still_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    overrides = root / "fleet" / "templates" / "handover"
    overrides.mkdir(parents=True)
    (overrides / "cluster.md.j2").write_text(
        '{% extends "gpuspec/handover/cluster.md.j2" %}{% block intro %}{{ "=" * 40 }} '
        "{% for i in range(3) %}{{ i }}{% endfor %} {{ 2 ** 10 }}{% endblock %}\n")
    result = gpuspec(["handover"], monkeypatch, capsys, cwd=root)
    assert result.code == 0, result.text
    assert "=" * 39 + "\\= 012 1024" in result.out  # the value is escaped text, as every value


#: Lines an override may well contain: the same operations with small arguments.
ORDINARY = [
    "{{ '%*d|%-4s|%.2f' % (4, 7, 'ab', 3.14159) }} {{ '%(a)s-%(b)03d' % {'a': 'x', 'b': 5} }} {{ '%s' % [1] }}",
    "{{ '%x %o %e %g %c %r %%' % (255, 8, 1.5, 2.5, 65, 'q') }} "
    "{{ '%s=%d' | format('n', 3) }} {{ '%(k)s' | format(k=1) }}",
    "{{ 'abc' | replace('b', 'BB') }} {{ 'aXbX'.replace('X', '-', 1) }} "
    "{{ 'a\\tb'.expandtabs(4) | replace('\\t', '?') }}",
    "{{ '-'.join(['a', 'b']) }} {{ [1, 2] | join(',') }} {{ [{'n': 'a'}, {'n': 'b'}] | join('/', attribute='n') }}",
    "{{ 'x' | center(5) | replace(' ', '.') }} {{ 'x'.rjust(3, '.') }} {{ '7'.zfill(3) }} "
    "{{ 'ab' * 2 }} {{ 2 ** 10 * 3 }}",
    "{{ '{:>4}|{:.1f}|{!r}|{:,}'.format('ab', 2.25, 'q', 12345) }} {{ '{a}{b:x}'.format_map({'a': 1, 'b': 255}) }}",
    "{{ 'a\\nb' | indent(2, true) | replace('\\n', '/') }} {{ 'one two three' | wordwrap(7) | replace('\\n', '/') }}",
    "{{ 'hello world' | truncate(8, end='..', leeway=0) }} "
    "{{ [[1], [2]] | sum(start=[]) }} {{ 'ABC'.translate({65: 'a'}) }}",
    "{% set ns = namespace(s='') %}{% for i in range(3) %}{% set ns.s = ns.s ~ i %}{% endfor %}{{ ns.s }} "
    "{% set l = [1] %}{% set _ = l.extend([2]) %}{{ l | tojson }} {{ {'a': [1, 2]} | pprint }}",
    "{% for x in [[1, [2]], [3]] recursive %}({{ x if x is number else loop(x) }}){% endfor %} "
    "{% for i in range(6) if i is even %}{{ i }}{% if loop.last %}!{% endif %}{% endfor %}",
    "{{ ['a', 'b'] | codes }} {{ ['a', 'b'] | texts(' + ') }} {{ ['x', 'y'] | fenced('yaml') | replace('\\n', '/') }}",
    "{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m(1) ~ m(2) }} {% set b %}{% for c in 'ab' %}{{ c | upper }}{% endfor %}"
    "{% endset %}{{ b }} {{ 'see example.com' | urlize }} {{ lipsum(1, false, 3, 5) | wordcount > 0 }}",
]


@pytest.mark.parametrize("line", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_operations_with_small_arguments(line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    expected = shipped_environment().from_string(line).render()  # plain Jinja, no budgets
    root = make_repo(tmp_path)
    overrides = root / "fleet" / "templates" / "handover"
    overrides.mkdir(parents=True)
    (overrides / "cluster.md.j2").write_text("[" + line + "]\n")
    result = gpuspec(["handover"], monkeypatch, capsys, cwd=root)
    assert result.code == 0, result.text
    assert f"[{expected}]" in result.out, (expected, result.out[:500])
