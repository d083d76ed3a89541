"""The first CI run of a new fleet repository works: `gpuspec init --source git+https://github.com/acme/gpuspec@COMMIT`,
then the scaffolded workflow's jobs run as a GitHub runner runs them (tests/ci/runner.py).  The action is the local
copy at the pinned commit (a snapshot of this checkout); gpuspec is installed by the action's own install step from
the source the workflow names, git fetching https://github.com/acme/gpuspec from that snapshot (git's insteadOf, as
a mirror would), with the oldest pip the README allows.  Slow: scripts/test-package runs it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.ci.runner import Job, Runner, no_op, os_path, python_first, recorder

from .conftest import REPO, Installed, fresh_venv
from .test_fleet_repo import git, snapshot

pytestmark = pytest.mark.slow
URL = "https://github.com/acme/gpuspec"


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout as the gpuspec repository at a commit: (its folder, the commit)."""
    source = snapshot(tmp_path_factory.mktemp("acme") / "gpuspec")
    return source, git(source, "rev-parse", "HEAD").strip()


def _runner(repo: Path, tmp_path: Path, released: tuple[Path, str], venv_bin: Path, base: str) -> Runner:
    source, commit = released
    home = tmp_path / "runner" / "home"
    home.mkdir(parents=True, exist_ok=True)
    # The runner's network, replaced by a mirror: git fetches the pinned repository from the local copy.
    (home / ".gitconfig").write_text(f'[url "file://{source}"]\n\tinsteadOf = {URL}\n', encoding="utf-8")
    return Runner(repo, tmp_path / "runner", os_path(),
                  env={"GPUSPEC_CACHE_DIR": str(tmp_path / "runner-cache"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
                  actions={f"acme/gpuspec@{commit}": source},
                  stand_ins={"actions/checkout@": no_op, "actions/setup-python@": python_first(venv_bin),
                             "actions/upload-artifact@": recorder("artifact"),
                             "github/codeql-action/upload-sarif@": recorder("upload-sarif"),
                             "actions/github-script@": recorder("comment")},
                  github={"event_name": "pull_request", "repository": "acme/gpu-fleet",
                          "event": {"pull_request": {"base": {"sha": base},
                                                     "head": {"repo": {"full_name": "acme/gpu-fleet"}}}}})


def _run(runner: Runner, workflow: dict[str, object], name: str) -> Job:
    job = runner.job(workflow, name)  # type: ignore[arg-type]
    assert f"job {name}" not in job.skipped
    return job


def test_init_then_the_scaffolded_workflow_passes_on_its_first_pull_request(
    installed: Installed, released: tuple[Path, str], tmp_path: Path,
) -> None:
    _, commit = released
    init = installed.run("init", "gpu-fleet", "--source", f"git+{URL}@{commit}", cwd=tmp_path)
    assert init.returncode == 0 and "not written" not in init.stderr, init.stdout + init.stderr
    repo = tmp_path / "gpu-fleet"
    text = (repo / ".github" / "workflows" / "gpuspec.yaml").read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    assert f"uses: acme/gpuspec@{commit} # v" in text
    assert installed.run("render", cwd=repo).returncode == 0
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gpuspec init")
    base = git(repo, "rev-parse", "HEAD").strip()
    cluster = repo / "fleet" / "clusters" / "example.yaml"
    cluster.write_text(cluster.read_text(encoding="utf-8").replace("maxUnavailable: 20%", "maxUnavailable: 25%"),
                       encoding="utf-8")
    assert installed.run("render", cwd=repo).returncode == 0
    git(repo, "commit", "-qam", "one more node at a time")

    floor = re.search(r"pip ≥ (\d+\.\d+)", (REPO / "README.md").read_text(encoding="utf-8"))
    assert floor
    venv_bin = fresh_venv(tmp_path / "runner-python", f"pip=={floor.group(1)}") / "bin"
    runner = _runner(repo, tmp_path, released, venv_bin, base)
    for name in ("lint", "render", "plan"):
        job = _run(runner, workflow, name)
        assert not job.failed, (name, job.log[-6000:])
        assert "gpuspec, version" in job.log
    direct = json.loads(next((venv_bin.parent / "lib").glob("python*/site-packages/gpuspec-*.dist-info/"
                                                              "direct_url.json")).read_text(encoding="utf-8"))
    assert direct["url"] == URL and direct["vcs_info"]["commit_id"] == commit, "installed from the named source"
    assert "example" in job.summary  # the plan is in the job summary
    assert [kind for kind, _ in job.recorded] == ["comment"]

    # A spec typo: the lint job fails loudly, with annotations on the lines and the errors in the summary.
    cluster.write_text(cluster.read_text(encoding="utf-8").replace("product: L40S", "prodcut: L40S", 1),
                       encoding="utf-8")
    git(repo, "commit", "-qam", "typo")
    lint = _run(runner, workflow, "lint")
    assert lint.failed
    errors = [line for line in lint.log.splitlines() if line.startswith("::error ")]
    assert any(line.startswith("::error file=fleet/clusters/example.yaml,line=") and "prodcut" in line
               for line in errors), lint.log[-4000:]
    assert "gpuspec lint: unusable input (exit 2)" in lint.summary
    render = _run(runner, workflow, "render")
    assert render.failed and any(line.startswith("::error file=fleet/clusters/example.yaml,line=")
                                 for line in render.log.splitlines()), render.log[-4000:]
    shutil.rmtree(tmp_path / "runner-cache", ignore_errors=True)


def test_every_source_form_with_the_verify_extra_installs_with_the_oldest_pip(
    installed: Installed, released: tuple[Path, str], tmp_path: Path,
) -> None:
    """What the action's install step hands pip for each form of the `gpuspec` input, with the verify extra, is
    installed by the pip floor the README names (without dependencies: the forms are what is tested)."""
    import os
    import runpy
    import subprocess

    requirement = runpy.run_path(str(REPO / "ci" / "github" / "requirement.py"))["requirement"]
    source, commit = released
    floor = re.search(r"pip ≥ (\d+\.\d+)", (REPO / "README.md").read_text(encoding="utf-8"))
    assert floor
    venv = fresh_venv(tmp_path / "venv", f"pip=={floor.group(1)}")
    wheel = installed.wheel
    forms = {
        f"gpuspec=={wheel.name.split('-')[1]}": ["--no-index", "--find-links", str(wheel.parent)],
        f"gpuspec @ {wheel.as_uri()}": [],
        wheel.as_uri(): [],
        str(wheel): [],
        f"gpuspec @ git+{URL}@{commit}": [],
        f"git+{URL}@{commit}": [],
    }
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f'[url "file://{source}"]\n\tinsteadOf = {URL}\n', encoding="utf-8")
    env = {**os.environ, "HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for given, options in forms.items():
        wanted = requirement(given, "verify")
        assert "[verify]" in wanted, (given, wanted)
        proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                               "--force-reinstall", *options, wanted], env=env, capture_output=True, text=True,
                              timeout=900, check=False)
        assert proc.returncode == 0, (given, wanted, proc.stderr[-3000:])
        assert "does not provide the extra" not in proc.stderr, (given, proc.stderr)
