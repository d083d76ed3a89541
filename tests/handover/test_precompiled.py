"""gpuspec's templates compiled ahead of time are current, give the documents compiling them gives, and are not
used once they no longer match their template or the running Jinja2."""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2
import pytest

from gpuspec.templating import environment, precompiled
from gpuspec.templating.environment import SHIPPED, shipped_environment

from .helpers import documents

SHIPPED_TEMPLATES = sorted(jinja2.FileSystemLoader(str(SHIPPED)).list_templates())


@pytest.mark.parametrize("name", SHIPPED_TEMPLATES)
def test_every_shipped_template_has_its_current_compiled_module(name: str) -> None:
    source = (SHIPPED / name).read_text(encoding="utf-8")
    path = precompiled.module_file(name)
    assert path.is_file() and path.read_text(encoding="utf-8") == precompiled.module_source(
        shipped_environment(), name, source), "run `python -m gpuspec.templating.precompiled` and commit compiled/"


def test_the_example_fleets_documents_are_the_same_from_compiled_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")  # every document rendered, none from the document cache
    compiled = documents()
    loaded: list[str] = []
    real = precompiled._module
    monkeypatch.setattr(precompiled, "_module", lambda name, source: loaded.append(name) or real(name, source))
    environment._environment.cache_clear()
    assert documents() == compiled and "handover/cluster.md.j2" in loaded
    monkeypatch.setattr(precompiled, "_module", lambda name, source: None)  # every template compiled now
    environment._environment.cache_clear()
    try:
        assert documents() == compiled
    finally:
        environment._environment.cache_clear()


@pytest.mark.parametrize("stale", ["SOURCE_SHA256 = '", "JINJA2_VERSION = '"])
def test_a_compiled_module_of_other_text_or_another_jinja2_is_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stale: str) -> None:
    name = "handover/index.md.j2"
    source = (SHIPPED / name).read_text(encoding="utf-8")
    shutil.copy(precompiled.module_file(name), tmp_path)
    monkeypatch.setattr(precompiled, "COMPILED", tmp_path)
    assert precompiled._module(name, source) is not None
    module = precompiled.module_file(name)
    module.write_text(module.read_text(encoding="utf-8").replace(stale, stale + "0", 1), encoding="utf-8")
    assert precompiled._module(name, source) is None
    module.unlink()
    assert precompiled._module(name, source) is None
    template = precompiled.PrecompiledLoader(jinja2.FileSystemLoader(str(SHIPPED))).load(shipped_environment(), name)
    assert template.filename == str(SHIPPED / name)  # compiled from its text instead
