"""Name → reporter map that feeds the --format option of every command."""

from __future__ import annotations

from collections.abc import Callable

from gpuspec.report.base import Reporter
from gpuspec.report.github import GithubReporter
from gpuspec.report.jsonreport import JsonReporter
from gpuspec.report.junit import JunitReporter
from gpuspec.report.sarif import SarifReporter
from gpuspec.report.text import TextReporter

REPORTERS: dict[str, Callable[[], Reporter]] = {
    "text": TextReporter,
    "json": JsonReporter,
    "sarif": SarifReporter,
    "github": GithubReporter,
    "junit": JunitReporter,
}


def reporter(name: str) -> Reporter:
    """The reporter called ``name`` (one of REPORTERS)."""
    return REPORTERS[name]()
