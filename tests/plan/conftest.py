"""Fixtures of the plan tests: a fresh fleet repository per test (helpers live in helpers.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .helpers import FleetRepo, make_repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FleetRepo:
    """A repository whose HEAD is the fixture fleet; the working directory is its root."""
    return make_repo(tmp_path / "repo", monkeypatch)


@pytest.fixture
def repo_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], FleetRepo]:
    """Make further repositories (by folder name) below the test's temporary folder."""
    return lambda name: make_repo(tmp_path / name, monkeypatch)
