"""A fresh fleet repository, as a user sets it up: gpuspec installed from the built wheel by the steps of
action.yml (run as GitHub runs them), and the pre-commit hooks through `pre-commit try-repo`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import venv
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from rules.harness import build_fleet

from .conftest import REPO, Installed, fresh_venv

pytestmark = pytest.mark.slow

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
GIT = ["git", "-c", "user.name=fleet", "-c", "user.email=fleet@example.invalid", "-c", "init.defaultBranch=main"]
_EXPR = re.compile(r"\$\{\{\s*([a-z._-]+)\s*\}\}")


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout


class Runner:
    """Runs the ``run:`` steps of action.yml the way a GitHub runner does, in a fleet repository."""

    def __init__(self, repo: Path, bin_dir: Path, temp: Path) -> None:
        self.repo, self.bin_dir, self.temp = repo, bin_dir, temp
        self.output = temp / "github_output"
        self.summary = temp / "step_summary"

    def step(self, name: str, inputs: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
        [step] = [s for s in ACTION["runs"]["steps"] if s.get("name") == name]
        values = {f"inputs.{k}": str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
        values.update({f"inputs.{k}": v for k, v in inputs.items()})
        values["runner.temp"] = str(self.temp)

        def expand(text: str) -> str:
            return _EXPR.sub(lambda m: values.get(m.group(1), ""), text)

        env = {"PATH": f"{self.bin_dir}:/usr/bin:/bin", "HOME": str(self.temp), "NO_COLOR": "1",
               "GPUSPEC_CACHE_DIR": str(self.temp / "cache"), "GITHUB_OUTPUT": str(self.output),
               "GITHUB_STEP_SUMMARY": str(self.summary), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               "GITHUB_ACTION_PATH": str(REPO), "RUNNER_TEMP": str(self.temp),
               **{k: expand(str(v)) for k, v in step.get("env", {}).items()}}
        assert "${{" not in step["run"], "inputs reach run scripts only through env"
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=self.repo, env=env, capture_output=True, text=True, timeout=900, check=False)

    def outputs(self) -> dict[str, str]:
        lines = self.output.read_text().splitlines() if self.output.exists() else []
        return dict(line.split("=", 1) for line in lines if "=" in line)


@pytest.fixture
def fleet_repo(tmp_path: Path) -> Path:
    """A git repository with the example fleet and its policies, nothing rendered yet."""
    repo = tmp_path / "fleet-repo"
    shutil.copytree(REPO / "fleet", repo / "fleet")
    shutil.copytree(REPO / "policies", repo / "policies")
    git(repo, "init", "-q")
    return repo


def test_action_steps_in_a_fresh_fleet_repository(installed: Installed, fleet_repo: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "runner-python"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    runner = Runner(fleet_repo, env_dir / "bin", tmp_path)
    install = runner.step("Install gpuspec", {"check": "lint", "gpuspec": str(installed.wheel)})
    assert install.returncode == 0, install.stderr
    assert "gpuspec, version" in install.stdout
    bad = runner.step("Install gpuspec", {"check": "format", "gpuspec": str(installed.wheel)})
    assert bad.returncode == 2 and "unknown check 'format'" in bad.stdout

    gpuspec = str(env_dir / "bin" / "gpuspec")
    assert subprocess.run([gpuspec, "render"], cwd=fleet_repo, capture_output=True, env=os.environ | {
        "GPUSPEC_CACHE_DIR": str(tmp_path / "cache")}).returncode == 0
    git(fleet_repo, "add", "-A")
    git(fleet_repo, "commit", "-qm", "fleet")
    cluster = fleet_repo / "fleet" / "clusters" / "train-east.yaml"
    text = cluster.read_text()
    assert "    nodes: 32\n" in text
    cluster.write_text(text.replace("    nodes: 32\n", "    nodes: 40\n", 1))
    subprocess.run([gpuspec, "render"], cwd=fleet_repo, check=True, capture_output=True)
    git(fleet_repo, "commit", "-qam", "change")

    lint = runner.step("Lint (SARIF)", {"check": "lint", "base": "HEAD^1"})
    assert lint.returncode == 0, lint.stdout + lint.stderr
    sarif = json.loads(Path(runner.outputs()["sarif-file"]).read_text())
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is True
    gate = runner.step("Lint (gate, annotations)", {"check": "lint", "base": "HEAD^1"})
    assert gate.returncode == 0, gate.stdout + gate.stderr

    assert runner.step("rendered/ is up to date", {"check": "render-check"}).returncode == 0
    plan = runner.step("Plan against the base", {"check": "plan", "base": "HEAD^1"})
    assert plan.returncode == 0, plan.stderr
    text = Path(runner.outputs()["plan-file"]).read_text()
    assert "train-east" in text and "train-east" in runner.summary.read_text()
    assert runner.step("Plan against the base", {"check": "plan"}).returncode == 2

    values = fleet_repo / "rendered" / "clusters" / "train-east" / "gpu-operator.values.yaml"
    values.write_text(values.read_text() + "extra: 1\n")
    check = runner.step("rendered/ is up to date", {"check": "render-check"})
    assert check.returncode == 1 and "stale or hand-edited" in check.stderr
    runner.output.unlink()
    lint = runner.step("Lint (SARIF)", {"check": "lint", "base": "HEAD"})
    assert lint.returncode == 0, "findings still reach code scanning; the gate step fails"
    sarif = json.loads(Path(runner.outputs()["sarif-file"]).read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["GS806"]
    gate = runner.step("Lint (gate, annotations)", {"check": "lint", "base": "HEAD"})
    assert gate.returncode == 1 and "::error" in gate.stdout and "GS806" in gate.stdout
    assert not (fleet_repo / ".gpuspec-cache").exists()


def test_action_uploads_no_suppressed_findings_and_keeps_the_full_report(
    installed: Installed, tmp_path: Path,
) -> None:
    """Code scanning shows SARIF results with suppressions as open alerts: the uploaded file leaves them out."""
    repo = tmp_path / "fleet-repo"
    build_fleet(repo, REPO / "tests" / "rules" / "fixtures" / "GS502" / "fail")
    cluster = repo / "fleet" / "clusters" / "c1.yaml"
    text = cluster.read_text()
    cluster.write_text(text.replace("maxParallelUpgrades: 0\n",
                                    "maxParallelUpgrades: 0  # gpuspec: ignore GS502 -- unlimited on purpose in dev\n"))
    (repo / "policies").mkdir()
    git(repo, "init", "-q")
    env_dir = tmp_path / "runner-python"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    runner = Runner(repo, env_dir / "bin", tmp_path)
    assert runner.step("Install gpuspec", {"check": "lint", "gpuspec": str(installed.wheel)}).returncode == 0
    lint = runner.step("Lint (SARIF)", {"check": "lint"})
    assert lint.returncode == 0, lint.stdout + lint.stderr
    outputs = runner.outputs()
    full = json.loads(Path(outputs["sarif-file"]).read_text())["runs"][0]["results"]
    upload = json.loads(Path(outputs["upload-file"]).read_text())["runs"][0]["results"]
    assert [r["ruleId"] for r in full if "suppressions" in r] == ["GS502"]
    assert not any("suppressions" in r for r in upload) and "GS502" not in [r["ruleId"] for r in upload]
    [upload_step] = [s for s in ACTION["runs"]["steps"] if s.get("uses", "").startswith("github/codeql-action/")]
    assert upload_step["with"]["sarif_file"] == "${{ steps.lint.outputs.upload-file }}"
    [keep] = [s for s in ACTION["runs"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert keep["with"]["path"] == "${{ steps.lint.outputs.sarif-file }}"


def test_action_verifies_an_air_gapped_cluster_from_a_chart_input(installed: Installed, tmp_path: Path) -> None:
    """A hosted runner cannot reach the mirror's chart repository; the chart input gives verify the chart."""
    tools = REPO / ".tools" / "bin"
    assert (tools / "helm").exists(), "run scripts/install-tools first"
    mini = REPO / "tests" / "verify" / "fixtures" / "mini"
    repo = tmp_path / "fleet-repo"
    shutil.copytree(mini, repo)
    shutil.copytree(REPO / "tests" / "verify" / "fixtures" / "crds", repo / "crds")
    chart = REPO / "tests" / "fixtures" / "charts" / "gpu-operator-mini"
    git(repo, "init", "-q")
    env_dir = fresh_venv(tmp_path / "runner-python", f"{installed.wheel}[verify]")
    for tool in ("helm", "kubectl"):
        (env_dir / "bin" / tool).symlink_to(tools / tool)
    runner = Runner(repo, env_dir / "bin", tmp_path)
    offline = runner.step("Verify", {"check": "verify", "crds": "crds"})
    assert offline.returncode == 1 and "GS914" in offline.stdout, offline.stdout + offline.stderr
    verified = runner.step("Verify", {"check": "verify", "crds": "crds", "chart": f"{chart}\n"})
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "GS914" not in verified.stdout

    # The example fleet's air-gapped cluster (infer-north, chart from the dc-north mirror) gets its chart the
    # same way: a stand-in chart of its pinned version, so helm templates it instead of failing to pull.
    example = tmp_path / "example-repo"
    for folder in ("fleet", "policies", "rendered"):
        shutil.copytree(REPO / folder, example / folder)
    git(example, "init", "-q")
    pinned = tmp_path / "gpu-operator-v26.7.0"
    shutil.copytree(chart, pinned)
    meta = pinned / "Chart.yaml"
    meta.write_text(meta.read_text().replace("v25.10.1", "v26.7.0"))
    runner = Runner(example, env_dir / "bin", tmp_path)
    args = {"check": "verify", "shard": "", "crds": ""}
    pulled = runner.step("Verify", args)
    assert "GS914" in pulled.stdout and "infer-north" in pulled.stdout, pulled.stdout + pulled.stderr
    given = runner.step("Verify", {**args, "chart": f"{pinned}\n"})
    assert given.returncode in (0, 1) and "Traceback" not in given.stderr, given.stdout + given.stderr
    assert "GS914" not in given.stdout and "GS902" not in given.stdout, given.stdout


def snapshot(dest: Path) -> Path:
    """This checkout's files (tracked and untracked, not ignored) as a one-commit repository, as a tag would be.

    pre-commit installs a hook repository once per revision; a committed snapshot keeps one revision for every
    hook run of the test (a dirty checkout would make pre-commit build a new shadow revision each time).
    """
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "snapshot")
    return dest


def test_pre_commit_try_repo_from_a_clean_environment(fleet_repo: Path, tmp_path: Path) -> None:
    pre_commit = shutil.which("pre-commit")
    assert pre_commit, "pre-commit is not installed (test extras)"
    source = snapshot(tmp_path / "gpuspec-src")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "GPUSPEC_CACHE_DIR": str(tmp_path / "cache"), "NO_COLOR": "1"}

    def hook(hook_id: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([pre_commit, "try-repo", str(source), hook_id, "--all-files"], cwd=fleet_repo, env=env,
                              capture_output=True, text=True, timeout=900, check=False)

    shutil.copytree(REPO / "rendered", fleet_repo / "rendered")
    cluster = fleet_repo / "fleet" / "clusters" / "train-east.yaml"
    cluster.write_text(cluster.read_text().replace("    nodes: 32\n", "    nodes: 40\n", 1))
    git(fleet_repo, "add", "-A")
    git(fleet_repo, "commit", "-qm", "fleet changed, rendered/ stale")
    assert hook("gpuspec-render-check").returncode == 1
    fixed = hook("gpuspec-render")
    assert fixed.returncode == 1 and "files were modified by this hook" in fixed.stdout, fixed.stdout
    git(fleet_repo, "add", "-A")
    git(fleet_repo, "commit", "-qm", "rendered")
    for hook_id in ("gpuspec-lint", "gpuspec-render-check", "gpuspec-render"):
        ok = hook(hook_id)
        assert ok.returncode == 0, ok.stdout + ok.stderr
    values = fleet_repo / "rendered" / "clusters" / "infer-north" / "gpu-operator.values.yaml"
    committed = values.read_bytes()
    values.write_bytes(committed + b"extra: 1\n")
    assert hook("gpuspec-render-check").returncode == 1
    assert hook("gpuspec-render").returncode == 1 and values.read_bytes() == committed
    site = list((tmp_path / "pre-commit-home").rglob("site-packages/kubernetes_validate"))
    assert site == [], "the hook environment is the lean install"
