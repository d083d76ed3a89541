"""gpuspec's own templates keep their bytecode in sealed user-cache entries (no generated code in the repository):
a second process loads a template without compiling it, an edited or foreign entry is never used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import pytest

from gpuspec.handover.documents import CLUSTER_TEMPLATE
from gpuspec.templating import environment as env_module
from gpuspec.templating.bytecode import KIND


def _fresh_load(monkeypatch: pytest.MonkeyPatch) -> int:
    """Load the handover template in a fresh environment (as a new process would); how many templates compiled."""
    env_module._environment.cache_clear()
    compiled: list[str] = []
    real = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: str, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        compiled.append(name or "")
        return real(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    env_module.environment(None).get_template(CLUSTER_TEMPLATE)
    monkeypatch.setattr(jinja2.Environment, "compile", real)
    return len(compiled)


def test_the_second_process_loads_the_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GPUSPEC_NO_CACHE", raising=False)
    assert _fresh_load(monkeypatch) >= 1
    entries = list((tmp_path / "cache").rglob("*"))
    assert any(KIND in str(p) for p in entries if p.is_file())
    assert _fresh_load(monkeypatch) == 0


def test_a_tampered_entry_is_compiled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GPUSPEC_NO_CACHE", raising=False)
    _fresh_load(monkeypatch)
    for entry in (p for p in (tmp_path / "cache").rglob("*") if p.is_file() and KIND in str(p)):
        data = bytearray(entry.read_bytes())
        data[-1] ^= 0xFF
        entry.write_bytes(bytes(data))
    assert _fresh_load(monkeypatch) >= 1


def test_no_cache_compiles_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    assert _fresh_load(monkeypatch) >= 1
    assert _fresh_load(monkeypatch) >= 1
