"""Real git repositories with a fleet in temporary folders, for plan and change-set rule tests (helpers)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.plan.build import build_plan
from gpuspec.rollout.records import Change, Plan

#: A frozen snapshot of the example fleet, so golden output does not move when the example changes.
FIXTURE_FLEET = Path(__file__).parent / "fixtures" / "fleet"

DEFAULT_PACK = """\
apiVersion: gpuspec.io/v1alpha1
kind: PolicyPack
metadata:
  name: default
rules: {}
exceptions: []
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "gpuspec tests",
    "GIT_AUTHOR_EMAIL": "tests@gpuspec.invalid",
    "GIT_COMMITTER_NAME": "gpuspec tests",
    "GIT_COMMITTER_EMAIL": "tests@gpuspec.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class FleetRepo:
    """A git repository holding fleet/, policies/ and rendered/, with helpers to edit and commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fleet = root / "fleet"
        self.env = {**os.environ, **GIT_ENV, "HOME": str(root.parent)}

    def git(self, *args: str) -> str:
        """Run git in the repository and return its output."""
        proc = subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=True
        )
        return proc.stdout.strip()

    def commit(self, message: str = "change") -> str:
        """Stage everything and commit; return the commit id."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def read(self, rel: str) -> Any:
        """The YAML data of a repository file."""
        return yaml.safe_load((self.root / rel).read_text(encoding="utf-8"))

    def write(self, rel: str, data: Any) -> None:
        """Write data as YAML to a repository file (folders created)."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text, encoding="utf-8")

    @contextmanager
    def edit(self, rel: str) -> Iterator[Any]:
        """Edit a YAML file in place: yields its data, writes it back."""
        data = self.read(rel)
        yield data
        self.write(rel, data)

    def cluster(self, name: str) -> Any:
        """Context manager editing fleet/clusters/<name>.yaml."""
        return self.edit(f"fleet/clusters/{name}.yaml")

    def fleet_settings(self) -> Any:
        """Context manager editing fleet/fleet.yaml."""
        return self.edit("fleet/fleet.yaml")

    def plan(self, base: str = "HEAD") -> Plan:
        """The plan from ``base`` to the working tree."""
        return build_plan(self.fleet, base)

    def changes(self, base: str = "HEAD") -> list[Change]:
        """The changes from ``base`` to the working tree."""
        return self.plan(base).changes


def pool(data: Any, name: str) -> Any:
    """The pool called ``name`` in a cluster document."""
    return next(p for p in data["pools"] if p["name"] == name)


def tenant(data: Any, name: str) -> Any:
    """The tenant called ``name`` in a cluster document."""
    return next(t for t in data["tenants"] if t["name"] == name)


def make_repo(root: Path, monkeypatch: pytest.MonkeyPatch) -> FleetRepo:
    """A fresh repository at ``root`` whose first commit is the fixture fleet, a default pack and rendered/."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(FIXTURE_FLEET, root / "fleet")
    repo = FleetRepo(root)
    repo.write("policies/default.yaml", DEFAULT_PACK)
    repo.write("rendered/clusters/train-east/gpu-operator.values.yaml", "driver:\n  enabled: true\n")
    repo.git("init", "-q", "-b", "main")
    repo.commit("base fleet")
    monkeypatch.chdir(root)
    return repo


def gpuspec(repo: FleetRepo, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real gpuspec entry point in the repository."""
    return subprocess.run(
        [sys.executable, "-c", "from gpuspec.cli.main import main; main()", *args],
        cwd=repo.root, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, check=False,
    )
