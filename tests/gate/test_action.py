"""The gate steps of action.yml, run as a GitHub runner runs them: exports attached to the pull request, or read
with kubectl on a self-hosted runner (a stand-in kubectl answers as the API server would)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from gpuspec.acceptance.expected import read_rendered
from tests.gate.gate_fixtures import (
    FLEET_DIR,
    after_upgrade,
    during_upgrade,
    job_list,
    nodes_export,
    operator_export,
    passing_runs,
    render_fleet,
    write_json,
)

REPO = Path(__file__).resolve().parent.parent.parent
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
_EXPR = re.compile(r"\$\{\{\s*([a-z.-]+)\s*\}\}")


def _step(name: str, repo: Path, temp: Path, inputs: Mapping[str, str], outputs: Mapping[str, str],
          path: str) -> subprocess.CompletedProcess[str]:
    [step] = [s for s in ACTION["runs"]["steps"] if s.get("name") == name]
    values = {f"inputs.{k}": str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    values |= {f"inputs.{k}": v for k, v in inputs.items()}
    values |= {f"steps.export.outputs.{k}": v for k, v in outputs.items()}
    values["runner.temp"] = str(temp)
    env = {"PATH": path, "HOME": str(temp), "NO_COLOR": "1", "GPUSPEC_CACHE_DIR": str(temp / "cache"),
           "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(REPO),
           "GITHUB_OUTPUT": str(temp / "github_output"), "GITHUB_STEP_SUMMARY": str(temp / "summary"),
           **{k: _EXPR.sub(lambda m: values.get(m.group(1), ""), str(v)) for k, v in step.get("env", {}).items()}}
    assert "${{" not in step["run"], "inputs reach run scripts only through env"
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _outputs(temp: Path) -> dict[str, str]:
    path = temp / "github_output"
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split("=", 1) for line in lines if "=" in line)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fleet repository with the gate fixture fleet and its rendered output."""
    root = tmp_path / "fleet-repo"
    shutil.copytree(FLEET_DIR, root / "fleet")
    render_fleet(root / "rendered")
    return root


def _bin(tmp_path: Path) -> str:
    """PATH with this interpreter's gpuspec and the system tools."""
    return f"{Path(sys.executable).parent}:/usr/bin:/bin"


def test_gate_on_exports_attached_to_the_pull_request(repo: Path, tmp_path: Path) -> None:
    temp = tmp_path / "runner"
    temp.mkdir()
    jobs = list(read_rendered(repo / "rendered", "lab").jobs)
    inputs = {"check": "gate", "gate-cluster": "lab", "gate-pool": "h100",
              "gate-nodes": write_json(repo / "nodes.json", nodes_export(after_upgrade())),
              "gate-clusterpolicies": write_json(repo / "cp.json", operator_export()),
              "gate-jobs": write_json(repo / "jobs.json", job_list(passing_runs(jobs)))}
    result = _step("Gate the promotion", repo, temp, inputs, {}, _bin(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    report = Path(_outputs(temp)["gate-report"]).read_text()
    assert report.startswith("### Promotion gate: pool h100 of cluster lab")
    assert report in (temp / "summary").read_text()

    during = dict(inputs, **{"gate-nodes": write_json(repo / "during.json", nodes_export(during_upgrade()))})
    (temp / "github_output").unlink()
    failed = _step("Gate the promotion", repo, temp, during, {}, _bin(tmp_path))
    assert failed.returncode == 1
    assert "FAILED: pool h100 of cluster lab does not run the spec" in failed.stdout
    assert "drain-required" in Path(_outputs(temp)["gate-report"]).read_text()
    missing = _step("Gate the promotion", repo, temp, {"check": "gate"}, {}, _bin(tmp_path))
    assert missing.returncode == 2 and "needs the gate-cluster input" in missing.stdout


def test_gate_exports_with_kubectl_on_a_self_hosted_runner(repo: Path, tmp_path: Path) -> None:
    temp, fake = tmp_path / "runner", tmp_path / "kubectl-bin"
    temp.mkdir()
    fake.mkdir()
    jobs = list(read_rendered(repo / "rendered", "lab").jobs)
    answers = tmp_path / "answers"
    answers.mkdir()
    write_json(answers / "nodes.json", nodes_export(after_upgrade()))
    write_json(answers / "cp.json", operator_export())
    write_json(answers / "jobs.json", job_list(passing_runs(jobs)))
    log = tmp_path / "kubectl.log"
    kubectl = fake / "kubectl"
    kubectl.write_text(f"""#!/bin/bash
echo "$*" >> {log}
case "$*" in
  "get nodes -o json") cat {answers}/nodes.json ;;
  "get clusterpolicies.nvidia.com -o json") cat {answers}/cp.json ;;
  "get nvidiadrivers.nvidia.com -o json") echo 'error: the server does not have a resource type "nvidiadrivers"' >&2
    exit 1 ;;
  "get jobs,pods -n gpuspec-acceptance -o json") cat {answers}/jobs.json ;;
  *) echo "unexpected: $*" >&2; exit 3 ;;
esac
""")
    kubectl.chmod(0o755)
    path = f"{fake}:{_bin(tmp_path)}"
    inputs = {"check": "gate", "gate-cluster": "lab"}
    export = _step("Export the cluster state", repo, temp, inputs, {}, path)
    assert export.returncode == 0, export.stdout + export.stderr
    assert "no NVIDIADriver resource type" in export.stdout
    outputs = _outputs(temp)
    assert set(outputs) == {"nodes", "clusterpolicies", "jobs"}
    assert log.read_text().splitlines() == ["get nodes -o json", "get clusterpolicies.nvidia.com -o json",
                                            "get nvidiadrivers.nvidia.com -o json",
                                            "get jobs,pods -n gpuspec-acceptance -o json"]
    result = _step("Gate the promotion", repo, temp, inputs, outputs, path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "runs the spec of this revision" in Path(_outputs(temp)["gate-report"]).read_text()
    os.remove(kubectl)
    shell_only = tmp_path / "shell-only"
    shell_only.mkdir()
    (shell_only / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    none = _step("Export the cluster state", repo, temp, inputs, {}, str(shell_only))
    assert none.returncode == 2 and "no kubectl on the runner" in none.stdout
