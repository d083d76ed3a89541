"""The release path: the workflow's build job, run as the runner would (scripts/release-check), builds the sdist
and wheel, checks them with twine, installs the wheel in a fresh virtualenv and refuses a tag that is not the
package version (slow: scripts/test-package runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import gpuspec

from .conftest import REPO

pytestmark = pytest.mark.slow
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"


def release_check(tag: str, dist: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": sys.executable, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(["bash", str(REPO / "scripts" / "release-check"), tag, str(dist)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900, check=False)


def test_release_workflow_builds_with_the_checked_script_and_publishes_by_oidc() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    build, publish = doc["jobs"]["build"], doc["jobs"]["publish"]
    assert any("scripts/release-check \"$TAG\" dist" in s.get("run", "") for s in build["steps"])
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    assert publish["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert "with" not in publish["steps"][-1], "trusted publishing: no token input"


def test_release_check_builds_checks_and_installs_the_tagged_version(tmp_path: Path) -> None:
    tag = f"v{gpuspec.__version__}"
    done = release_check(tag, tmp_path / "dist")
    assert done.returncode == 0, done.stdout + done.stderr
    built = sorted(p.name for p in (tmp_path / "dist").iterdir())
    assert built == [f"gpuspec-{gpuspec.__version__}-py3-none-any.whl", f"gpuspec-{gpuspec.__version__}.tar.gz"]
    assert done.stdout.count("PASSED") == 2
    assert f"gpuspec, version {gpuspec.__version__}" in done.stdout


def test_release_check_refuses_a_tag_that_is_not_the_package_version(tmp_path: Path) -> None:
    wrong = release_check("v99.0.0", tmp_path / "dist")
    assert wrong.returncode == 1 and "does not match the package version" in wrong.stderr
    assert not (tmp_path / "dist").exists(), "nothing is built for a wrong tag"
    assert release_check("latest", tmp_path / "dist").returncode == 2
