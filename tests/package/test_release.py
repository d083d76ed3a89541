"""The release path: the workflow's build job, run as the runner would (scripts/release-check), builds the sdist
and wheel, checks them with twine, installs the wheel in a fresh virtualenv and refuses a tag that is not the
package version (slow: scripts/test-package runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

import gpuspec

from .conftest import REPO
from .test_fleet_repo import snapshot

pytestmark = pytest.mark.slow
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"


SHA = "0123456789abcdef0123456789abcdef01234567"


def release_check(tag: str, dist: Path, root: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHON": sys.executable, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **env}
    for name in ("GITHUB_REPOSITORY", "GITHUB_SERVER_URL", "GITHUB_SHA", "GPUSPEC_REPOSITORY", "GPUSPEC_COMMIT"):
        if name not in env:
            environ.pop(name, None)
    return subprocess.run(["bash", str(root / "scripts" / "release-check"), tag, str(dist)], cwd=root, env=environ,
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
    done = release_check(tag, tmp_path / "dist", GITHUB_SERVER_URL="https://github.com",
                         GITHUB_REPOSITORY="acme/gpuspec", GITHUB_SHA=SHA)
    assert done.returncode == 0, done.stdout + done.stderr
    built = sorted(p.name for p in (tmp_path / "dist").iterdir())
    assert built == [f"gpuspec-{gpuspec.__version__}-py3-none-any.whl", f"gpuspec-{gpuspec.__version__}.tar.gz"]
    assert done.stdout.count("PASSED") == 2
    assert f"gpuspec, version {gpuspec.__version__}" in done.stdout
    # Where the release comes from is stamped into the wheel (the checkout's origin.json names nothing).
    with zipfile.ZipFile(tmp_path / "dist" / built[0]) as wheel:
        origin = json.loads(wheel.read("gpuspec/origin.json"))
    assert origin["repository"] == "https://github.com/acme/gpuspec" and origin["commit"] == SHA
    assert json.loads((REPO / "gpuspec" / "origin.json").read_text())["commit"] is None


def test_release_check_refuses_a_readme_that_names_a_version_without_a_tag(tmp_path: Path) -> None:
    root = snapshot(tmp_path / "checkout")
    readme = root / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\n    pipx install 'gpuspec @ git+https://"
                      "github.com/acme/gpuspec@v9.9.9'\n", encoding="utf-8")
    refused = release_check(f"v{gpuspec.__version__}", tmp_path / "dist", root)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "names gpuspec 9.9.9, which has no tag v9.9.9" in refused.stdout
    assert not (tmp_path / "dist").exists(), "nothing is built"
    subprocess.run(["git", "tag", "v9.9.9"], cwd=root, check=True)
    assert "9.9.9" not in release_check(f"v{gpuspec.__version__}", tmp_path / "dist", root).stdout


def test_release_check_refuses_a_tag_that_is_not_the_package_version(tmp_path: Path) -> None:
    wrong = release_check("v99.0.0", tmp_path / "dist")
    assert wrong.returncode == 1 and "does not match the package version" in wrong.stderr
    assert not (tmp_path / "dist").exists(), "nothing is built for a wrong tag"
    assert release_check("latest", tmp_path / "dist").returncode == 2
