"""A template override runs within budgets (time, output, sequence and number sizes, loop iterations, size
arguments, recursion): every way past them, and every runtime error of the template, is an exit-2 message that
names the template and line, never an internal error, a hang or gigabytes of memory."""

from __future__ import annotations

from pathlib import Path

import pytest

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
