"""Name → reporter map that feeds the --format option of every command.

Reporter modules are imported when a reporter is asked for, so a command that prints text never loads
the SARIF or JUnit machinery (start-up time).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping

from gpuspec.report.base import Reporter

#: Format name → "module:class", in the order the --format option lists them.
_TARGETS: dict[str, str] = {
    "text": "gpuspec.report.text:TextReporter",
    "json": "gpuspec.report.jsonreport:JsonReporter",
    "sarif": "gpuspec.report.sarif:SarifReporter",
    "github": "gpuspec.report.github:GithubReporter",
    "junit": "gpuspec.report.junit:JunitReporter",
    "gitlab": "gpuspec.report.gitlab:GitlabReporter",
}


class _Reporters(Mapping[str, Callable[[], Reporter]]):
    """The reporter classes by format name, each imported on first use."""

    def __getitem__(self, name: str) -> Callable[[], Reporter]:
        module, attribute = _TARGETS[name].split(":")
        factory: Callable[[], Reporter] = getattr(importlib.import_module(module), attribute)
        return factory

    def __iter__(self) -> Iterator[str]:
        return iter(_TARGETS)

    def __len__(self) -> int:
        return len(_TARGETS)


REPORTERS: Mapping[str, Callable[[], Reporter]] = _Reporters()


def reporter(name: str) -> Reporter:
    """The reporter called ``name`` (one of REPORTERS)."""
    return REPORTERS[name]()
