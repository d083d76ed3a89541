"""The render gate plays against an attacker: a pull request writes every file of the repository, rendered/
included, and must not pass `render --check` with output gpuspec did not render from its inputs.

The action's render-check step and the GitLab template's render-check job run as a runner runs them (the step's
`run:` script with the env it sets; the job's script lines in one shell), in a fleet repository whose base branch
holds the example fleet and its output; gpuspec is this checkout's (the package tests run the installed wheel).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
GITLAB = yaml.safe_load((REPO / "ci" / "gitlab" / "gpuspec.gitlab-ci.yml").read_text(encoding="utf-8"))
_EXPR = re.compile(r"\$\{\{\s*([a-z._-]+)\s*\}\}")
_PATH = f"{Path(sys.executable).parent}:/usr/bin:/bin"
VALUES = "rendered/clusters/infer-north/gpu-operator.values.yaml"


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), "-c", "user.name=dev", "-c", "user.email=dev@example.invalid",
                           *args], capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def gpuspec(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUSPEC_CACHE_DIR": str(repo.parent / "dev-cache")}
    return subprocess.run([sys.executable, "-m", "gpuspec.cli.main", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def action_check(repo: Path, base_sha: str | None,
                 inputs: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The action's render-check step on a pull request whose base is ``base_sha`` (None: a push)."""
    [step] = [s for s in ACTION["runs"]["steps"] if s.get("name") == "rendered/ is up to date"]
    temp = repo.parent / "runner"
    temp.mkdir(exist_ok=True)
    values = {f"inputs.{k}": str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    values |= {f"inputs.{k}": v for k, v in (inputs or {}).items()}
    values["github.event.pull_request.base.sha"] = base_sha or ""
    values["runner.temp"] = str(temp)
    assert "${{" not in step["run"], "inputs reach run scripts only through env"
    env = {"PATH": _PATH, "HOME": str(temp), "NO_COLOR": "1", "GPUSPEC_CACHE_DIR": str(temp / "cache"),
           "GITHUB_OUTPUT": str(temp / "github_output"), "GITHUB_STEP_SUMMARY": str(temp / "summary"),
           **{k: _EXPR.sub(lambda m: values.get(m.group(1), ""), str(v)) for k, v in step["env"].items()}}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def gitlab_check(repo: Path, base_sha: str | None) -> subprocess.CompletedProcess[str]:
    """The GitLab template's render-check job in a merge-request pipeline of base ``base_sha`` (None: the default
    branch); gpuspec is already installed, so before_script's install line is left out."""
    job = GITLAB["gpuspec-render-check"]
    env = {"PATH": _PATH, "HOME": str(repo.parent), "NO_COLOR": "1", "GPUSPEC_CACHE_DIR": str(repo.parent / "gl"),
           **GITLAB["variables"]}
    if base_sha:
        env |= {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_DIFF_BASE_SHA": base_sha}
    return subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", "\n".join(job["script"])], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def both(repo: Path, base_sha: str | None) -> list[subprocess.CompletedProcess[str]]:
    return [action_check(repo, base_sha), gitlab_check(repo, base_sha)]


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A fleet repository whose main branch holds the example fleet and its output; a pull-request branch is
    checked out.  Returns the repository and the base commit."""
    root = tmp_path / "fleet-repo"
    shutil.copytree(REPO / "fleet", root / "fleet")
    shutil.copytree(REPO / "policies", root / "policies")
    assert gpuspec(root, "render").returncode == 0
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "pull-request")
    return root, git(root, "rev-parse", "HEAD")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def forged_proof(repo: Path) -> None:
    """What the attacker of issue 43 committed: a render proof whose digests are recomputed over the edited files
    (gpuspec no longer reads one: it is only a file gpuspec does not render)."""
    files = sorted(p for p in (repo / "rendered").rglob("*") if p.is_file())
    outputs = hashlib.sha256(b"".join(p.relative_to(repo / "rendered").as_posix().encode() + b"\0"
                                      + hashlib.sha256(p.read_bytes()).digest() + b"\n" for p in files))
    (repo / "rendered" / "render-proof.yaml").write_text(
        "# Generated by gpuspec: digests of gpuspec, its inputs and the other\n"
        "# files of this folder, which `gpuspec render --check` compares\n"
        f"# instead of rendering again. Do not edit.\n---\ninputs: {'0' * 64}\noutputs: {outputs.hexdigest()}\n")


def test_honest_pull_requests_pass(repo: tuple[Path, str]) -> None:
    root, base = repo
    # A change inside one cluster: only that cluster is rendered, every other file is the base's.
    edit(root / "fleet/clusters/train-east.yaml", "maxUnavailable: 10%", "maxUnavailable: 20%")
    assert gpuspec(root, "render").returncode == 0
    git(root, "commit", "-qam", "one more node at a time")
    for result in both(root, base):
        assert result.returncode == 0, result.stdout + result.stderr
        assert "clusters rendered: train-east" in result.stdout
    # A change the fleet index shows (more nodes): every cluster is rendered and compared.
    edit(root / "fleet/clusters/train-east.yaml", "nodes: 32", "nodes: 40")
    assert gpuspec(root, "render").returncode == 0
    git(root, "commit", "-qam", "more nodes")
    for result in both(root, base):
        assert result.returncode == 0, result.stdout + result.stderr
        assert "checking every cluster: cluster train-east changes its line of the handover index" in result.stderr
    # A push to the protected branch: every cluster.
    for result in both(root, None):
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("own_change", [False, True], ids=["unchanged-cluster", "changed-cluster"])
@pytest.mark.parametrize("proof", [False, True], ids=["edit", "edit-and-recomputed-proof"])
def test_a_hand_edited_file_fails(repo: tuple[Path, str], own_change: bool, proof: bool) -> None:
    root, base = repo
    if own_change:  # the pull request also changes the cluster whose output it forges
        edit(root / "fleet/clusters/infer-north.yaml", "maxUnavailable: 1\n", "maxUnavailable: 2\n")
        assert gpuspec(root, "render").returncode == 0
    values = root / VALUES
    edit(values, "repository: harbor.dc-north.acme.internal/nvcr/nvidia/cloud-native",
         "repository: registry.attacker.example/nvidia")
    if proof:
        forged_proof(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pull request")
    for result in [*both(root, base), *both(root, None)]:
        assert result.returncode == 1, result.stdout + result.stderr
        assert "registry.attacker.example" in result.stdout
        assert "stale or hand-edited" in result.stderr
    assert gpuspec(root, "render", "--check", "--base", base).returncode == 1


def test_stale_output_fails(repo: tuple[Path, str]) -> None:
    root, base = repo
    edit(root / "fleet/clusters/infer-north.yaml", "maxUnavailable: 1\n", "maxUnavailable: 2\n")
    git(root, "commit", "-qam", "input changed, output not rendered")
    for result in [*both(root, base), *both(root, None)]:
        assert result.returncode == 1, result.stdout + result.stderr
        assert "maxUnavailable" in result.stdout


@pytest.mark.parametrize("change", ["fleet-wide", "deleted", "added", "stamp"])
def test_files_of_the_layout_the_change_did_not_touch_must_be_the_bases(repo: tuple[Path, str], change: str) -> None:
    root, base = repo
    edit(root / "fleet/clusters/train-east.yaml", "maxUnavailable: 10%", "maxUnavailable: 20%")
    assert gpuspec(root, "render").returncode == 0
    if change == "fleet-wide":
        edit(root / "rendered/gitops/argocd/_bootstrap/gpu-platform.appproject.yaml", "sourceRepos:",
             "sourceRepos:\n    - '*'")
    elif change == "deleted":
        (root / "rendered/clusters/infer-north/rbac.yaml").unlink()
    elif change == "added":
        (root / "rendered/clusters/infer-north/extra.yaml").write_text("kind: ClusterRoleBinding\n")
    else:
        edit(root / "rendered/generator.yaml", "version: ", "version: 9")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pull request")
    for result in both(root, base):
        assert result.returncode == 1, result.stdout + result.stderr


@pytest.mark.parametrize("forged", ["broken-line", "extra-key", "comment"])
def test_an_edited_generator_stamp_fails_where_every_cluster_is_checked(repo: tuple[Path, str], forged: str) -> None:
    """The stamp is exactly what gpuspec writes for the version it names: an edited one is no stamp, also where
    the gate renders every cluster (its own version line still there) rather than comparing with the base."""
    root, base = repo
    edit(root / "fleet/clusters/train-east.yaml", "nodes: 32", "nodes: 40")
    assert gpuspec(root, "render").returncode == 0
    stamp = root / "rendered/generator.yaml"
    if forged == "broken-line":
        edit(stamp, "generator: gpuspec", "generator: 'unterminated")
    elif forged == "extra-key":
        stamp.write_text(stamp.read_text(encoding="utf-8") + "note: regenerated upstream\n", encoding="utf-8")
    else:
        edit(stamp, "last changed", "la\x00st changed")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pull request")
    for result in [*both(root, base), *both(root, None)]:
        assert result.returncode == 1, result.stdout + result.stderr
        assert "generator.yaml" in result.stdout + result.stderr


def test_an_expired_exception_fails(repo: tuple[Path, str]) -> None:
    root, _ = repo
    git(root, "checkout", "-q", "main")
    # The base accepts GS204 for infer-north until yesterday: rendered while it was live.
    edit(root / "fleet/clusters/infer-north.yaml", 'version: "1.33"', 'version: "1.28"')
    yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    edit(root / "policies/default.yaml", "exceptions: []",
         "exceptions:\n  - rules: [GS204]\n    cluster: infer-north\n    owner: gpu-platform@acme.example\n"
         f"    reason: adopted as it runs\n    expires: {yesterday.isoformat()}")
    before = (yesterday - dt.timedelta(days=1)).isoformat()
    assert gpuspec(root, "render", "--today", before).returncode == 0
    git(root, "commit", "-qam", "accept GS204 for now")
    base = git(root, "rev-parse", "HEAD")
    assert gpuspec(root, "render", "--check", "--base", base, "--today", before).returncode == 0
    git(root, "checkout", "-qb", "later")
    # Nothing that touches the exception: the output must still be judged on today's exceptions.
    edit(root / "fleet/clusters/train-east.yaml", "maxUnavailable: 10%", "maxUnavailable: 20%")
    assert gpuspec(root, "render", "--today", before).returncode == 0
    git(root, "commit", "-qam", "unrelated")
    for result in [*both(root, base), *both(root, None)]:
        assert result.returncode == 1, result.stdout + result.stderr
        assert "GS003" in result.stderr


def test_a_base_that_names_no_commit_is_unusable(repo: tuple[Path, str]) -> None:
    root, _ = repo
    result = gpuspec(root, "render", "--check", "--base", "no-such-branch")
    assert result.returncode == 2 and "unknown git revision" in result.stderr
    assert gpuspec(root, "render", "--base", "HEAD").returncode == 2


def test_an_input_that_cannot_be_read_checks_every_cluster(repo: tuple[Path, str]) -> None:
    """A link into .git among the fleet files is never read: the check renders every cluster, as without --base."""
    root, base = repo
    (root / "fleet" / "templates").mkdir()
    (root / "fleet" / "templates" / "leak.txt").symlink_to(root / ".git" / "config")
    result = gpuspec(root, "render", "--check", "--base", base)
    assert "checking every cluster: fleet/templates/leak.txt added" in result.stderr
    assert result.returncode == gpuspec(root, "render", "--check").returncode == 0, result.stderr
