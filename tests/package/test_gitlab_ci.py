"""The GitLab CI template (ci/gitlab/gpuspec.gitlab-ci.yml): each job's commands, run as a GitLab runner runs them
(the lines of before_script and script in one shell, stopping at the first failing line), in a fresh fleet
repository with gpuspec installed from the built wheel, against a stand-in for GitLab's notes API on loopback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import venv
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import REPO, Installed
from .test_fleet_repo import git

pytestmark = pytest.mark.slow
TEMPLATE = yaml.safe_load((REPO / "ci" / "gitlab" / "gpuspec.gitlab-ci.yml").read_text())


class FakeGitLab(BaseHTTPRequestHandler):
    """The merge-request notes API of one project: list, create, update; the token must match."""

    notes: list[dict[str, Any]] = []
    token = "glpat-test-token"

    def _reply(self, code: int, doc: Any) -> None:
        data = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _allowed(self) -> bool:
        if self.headers.get("PRIVATE-TOKEN") != self.token or not self.path.startswith(
                "/api/v4/projects/fleet%2Fgpu/merge_requests/7/notes"):
            self._reply(401, {"message": "401 Unauthorized"})
            return False
        return True

    def _body(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        return doc

    def do_GET(self) -> None:
        if self._allowed():
            self._reply(200, self.notes)

    def do_POST(self) -> None:
        if self._allowed():
            self.notes.append({"id": len(self.notes) + 1, "body": self._body()["body"]})
            self._reply(201, self.notes[-1])

    def do_PUT(self) -> None:
        if self._allowed():
            note_id = int(self.path.rsplit("/", 1)[1])
            self.notes[note_id - 1]["body"] = self._body()["body"]
            self._reply(200, self.notes[note_id - 1])

    def log_message(self, *_args: object) -> None:
        return


@pytest.fixture
def gitlab() -> Iterator[str]:
    FakeGitLab.notes = [{"id": 1, "body": "LGTM"}]
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitLab)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    server.shutdown()
    server.server_close()


def run_job(name: str, repo: Path, bin_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    job = TEMPLATE[name]
    base = TEMPLATE[job["extends"]] if "extends" in job else {}
    lines = [*base.get("before_script", []), *job.get("script", [])]
    variables = {**TEMPLATE["variables"], **base.get("variables", {}), **job.get("variables", {})}
    environ = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(repo.parent), "NO_COLOR": "1",
               "GPUSPEC_CACHE_DIR": str(repo.parent / "cache"), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               **variables, **env}
    return subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", "\n".join(lines)], cwd=repo, env=environ,
                          capture_output=True, text=True, timeout=900, check=False)


def test_gitlab_jobs_lint_render_check_and_post_the_plan(installed: Installed, tmp_path: Path, gitlab: str) -> None:
    repo = tmp_path / "fleet-repo"
    shutil.copytree(REPO / "fleet", repo / "fleet")
    shutil.copytree(REPO / "policies", repo / "policies")
    shutil.copytree(REPO / "rendered", repo / "rendered")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "fleet")
    base = git(repo, "rev-parse", "HEAD").strip()
    env_dir = tmp_path / "runner-python"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    gpuspec = str(bin_dir / "gpuspec")
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(installed.wheel)], check=True,
                   env={**os.environ, "PIP_NO_INPUT": "1"})
    cluster = repo / "fleet" / "clusters" / "train-east.yaml"
    cluster.write_text(cluster.read_text().replace("    nodes: 32\n", "    nodes: 40\n", 1))
    subprocess.run([gpuspec, "render"], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GPUSPEC_CACHE_DIR": str(tmp_path / "cache")})
    git(repo, "commit", "-qam", "more H100 nodes")
    mr = {"GPUSPEC_REQUIREMENT": str(installed.wheel), "CI_PIPELINE_SOURCE": "merge_request_event",
          "CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_API_V4_URL": gitlab, "CI_PROJECT_ID": "fleet/gpu",
          "CI_MERGE_REQUEST_IID": "7", "GPUSPEC_GITLAB_TOKEN": FakeGitLab.token}

    lint = run_job("gpuspec-lint", repo, bin_dir, mr)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert json.loads((repo / "gl-code-quality-report.json").read_text()) == []
    assert TEMPLATE["gpuspec-lint"]["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    check = run_job("gpuspec-render-check", repo, bin_dir, mr)
    assert check.returncode == 0, check.stdout + check.stderr
    plan = run_job("gpuspec-plan", repo, bin_dir, mr)
    assert plan.returncode == 0 and "note created" in plan.stdout, plan.stdout + plan.stderr
    assert len(FakeGitLab.notes) == 2 and "train-east" in FakeGitLab.notes[1]["body"]
    again = run_job("gpuspec-plan", repo, bin_dir, mr)
    assert again.returncode == 0 and "note updated" in again.stdout, again.stdout + again.stderr
    assert len(FakeGitLab.notes) == 2, "one note per merge request, updated on later pushes"
    denied = run_job("gpuspec-plan", repo, bin_dir, {**mr, "GPUSPEC_GITLAB_TOKEN": "wrong"})
    assert denied.returncode == 1 and "GitLab answered 401" in denied.stderr
    assert "wrong" not in denied.stdout + denied.stderr

    values = repo / "rendered" / "clusters" / "train-east" / "gpu-operator.values.yaml"
    values.write_text(values.read_text() + "extra: 1\n")
    stale = run_job("gpuspec-render-check", repo, bin_dir, mr)
    assert stale.returncode == 1 and "stale or hand-edited" in stale.stderr
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-qam", "hand edit")
    failing = run_job("gpuspec-lint", repo, bin_dir, {**mr, "CI_MERGE_REQUEST_DIFF_BASE_SHA": head})
    assert failing.returncode == 1, failing.stdout + failing.stderr
    report = json.loads((repo / "gl-code-quality-report.json").read_text())
    assert [issue["check_name"] for issue in report] == ["GS806"]
    assert report[0]["location"]["path"].startswith("rendered/")
