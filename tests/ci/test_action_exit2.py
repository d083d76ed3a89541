"""Exit 2 is loud: every check of action.yml, run as a runner runs it, puts unusable-input errors into the job log
as annotations on their lines and into the job summary; the SARIF artifact is kept; a repository without code
scanning gets a warning and the annotations, not a failed or silent gate."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .runner import Job, Runner, no_op, os_path, recorder

REPO = Path(__file__).resolve().parents[2]
TYPO = ("    product: H100-SXM5-80GB\n", "    prodcut: H100-SXM5-80GB\n")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=fleet", "-c", "user.email=fleet@example.invalid", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.fixture
def fleet_repo(tmp_path: Path) -> Path:
    """The example fleet with its rendered output, committed; gpuspec is this checkout's."""
    repo = tmp_path / "fleet-repo"
    for folder in ("fleet", "policies", "rendered"):
        shutil.copytree(REPO / folder, repo / folder)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fleet")
    return repo


def _refused(runner: Runner, inputs: dict[str, str], job: Job) -> bool:
    """codeql-action/upload-sarif on a repository without code scanning."""
    job.log += "Error: Advanced Security must be enabled for this repository to use code scanning.\n"
    job.recorded.append(("upload-sarif", inputs))
    return False


def _runner(repo: Path, tmp_path: Path, upload: object = None) -> Runner:
    """A runner whose `python -m pip` is a no-op (gpuspec is this checkout's, already on PATH)."""
    stub = tmp_path / "stub-bin"
    stub.mkdir(exist_ok=True)
    (stub / "python").write_text(f"#!/bin/bash\nif [ \"$1\" = -m ] && [ \"$2\" = pip ]; then exit 0; fi\n"
                                 f"exec {sys.executable} \"$@\"\n")
    (stub / "python").chmod(0o755)
    return Runner(repo, tmp_path / "runner", f"{stub}:{Path(sys.executable).parent}:{os_path()}",
                  env={"GPUSPEC_CACHE_DIR": str(tmp_path / "cache")},
                  stand_ins={"actions/setup-python@": no_op, "actions/upload-artifact@": recorder("artifact"),
                             "github/codeql-action/upload-sarif@": upload or recorder("upload-sarif"),
                             "actions/github-script@": recorder("comment")},
                  github={"event_name": "pull_request", "repository": "acme/gpu-fleet",
                          "event": {"pull_request": {"head": {"repo": {"full_name": "acme/gpu-fleet"}}}}})


def _typo(repo: Path) -> None:
    cluster = repo / "fleet" / "clusters" / "train-east.yaml"
    text = cluster.read_text(encoding="utf-8")
    assert TYPO[0] in text
    cluster.write_text(text.replace(*TYPO), encoding="utf-8")


def _assert_loud(job: Job, check: str) -> None:
    assert job.failed
    errors = [line for line in job.log.splitlines() if line.startswith("::error ")]
    assert any(line.startswith("::error file=fleet/clusters/train-east.yaml,line=") and "GS103" in line
               and "prodcut" in line for line in errors), job.log
    assert f"### gpuspec {check}: unusable input (exit 2)" in job.summary
    assert "prodcut" in job.summary


@pytest.mark.parametrize("check", ["lint", "render-check", "plan"])
def test_a_spec_typo_is_annotated_and_summarised_by_every_check(fleet_repo: Path, tmp_path: Path,
                                                                 check: str) -> None:
    _typo(fleet_repo)
    runner = _runner(fleet_repo, tmp_path)
    job = Job()
    runner.composite(REPO, {"check": check, "gpuspec": "gpuspec==0.1.0", "base": "HEAD"}, job)
    _assert_loud(job, check)
    if check == "lint":
        kinds = [kind for kind, _ in job.recorded]
        assert kinds == ["artifact"], "the full SARIF report is kept; nothing is uploaded for unusable input"
        assert "Lint (gate, annotations)" not in job.skipped


def test_a_repository_without_code_scanning_warns_and_keeps_the_annotations(fleet_repo: Path,
                                                                            tmp_path: Path) -> None:
    cluster = fleet_repo / "fleet" / "clusters" / "train-east.yaml"
    cluster.write_text(cluster.read_text(encoding="utf-8").replace("maxParallelUpgrades: 2",
                                                                   "maxParallelUpgrades: 0", 1), encoding="utf-8")
    runner = _runner(fleet_repo, tmp_path, upload=_refused)
    auto = Job()
    runner.composite(REPO, {"check": "lint", "gpuspec": "gpuspec==0.1.0"}, auto)
    assert [kind for kind, _ in auto.recorded] == ["artifact", "upload-sarif"]
    assert "::warning title=gpuspec gate::the SARIF upload to code scanning failed" in auto.log
    assert "Lint (gate, annotations)" not in auto.skipped
    strict = Job()
    runner.composite(REPO, {"check": "lint", "gpuspec": "gpuspec==0.1.0", "upload-sarif": "true"}, strict)
    assert strict.failed, "upload-sarif: true makes a refused upload fail the job"
    off = Job()
    runner.composite(REPO, {"check": "lint", "gpuspec": "gpuspec==0.1.0", "upload-sarif": "false"}, off)
    assert [kind for kind, _ in off.recorded] == ["artifact"] and "::warning title=gpuspec gate" not in off.log
    assert auto.failed is off.failed
    for job in (auto, off):  # the finding is annotated on its line either way
        assert "::warning file=fleet/clusters/train-east.yaml,line=" in job.log and "GS502" in job.log


def test_the_unusable_input_helper_names_errors_without_a_spec_line(tmp_path: Path) -> None:
    """A base revision git does not know is no spec line: one annotation with the check's message."""
    from gpuspec.ci.annotate import check_annotations, summary

    [line] = check_annotations("plan", "gpuspec: error: unknown git revision 'nope'\n", str(tmp_path / "none"),
                               str(tmp_path / "none"))
    assert line.startswith("::error title=gpuspec plan::") and "unknown git revision" in line
    text = summary("plan", "a ``` fence\n")
    assert "````text\na ``` fence\n````" in text


@pytest.mark.parametrize("job_name", ["gpuspec-lint", "gpuspec-render-check", "gpuspec-plan"])
def test_every_gitlab_job_prints_a_spec_typo_with_file_and_line(fleet_repo: Path, tmp_path: Path,
                                                                 job_name: str) -> None:
    """The GitLab template's jobs (script lines in one shell, as a runner runs them; gpuspec installed)."""
    import yaml

    template = yaml.safe_load((REPO / "ci" / "gitlab" / "gpuspec.gitlab-ci.yml").read_text(encoding="utf-8"))
    _typo(fleet_repo)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=fleet_repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    env = {"PATH": f"{Path(sys.executable).parent}:{os_path()}", "HOME": str(tmp_path), "NO_COLOR": "1",
           "GPUSPEC_CACHE_DIR": str(tmp_path / "gl-cache"), **template["variables"],
           "CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_DIFF_BASE_SHA": head}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", "\n".join(template[job_name]["script"])],
                          cwd=fleet_repo, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "fleet/clusters/train-east.yaml:48:7: error GS103 unknown key 'prodcut'" in proc.stderr \
        or "train-east.yaml at pools.0.gpu.prodcut: GS103 unknown key 'prodcut'" in proc.stderr, proc.stderr
    if job_name == "gpuspec-lint":
        assert template[job_name]["artifacts"]["when"] == "always"
        report = json.loads((fleet_repo / "gl-code-quality-report.json").read_text(encoding="utf-8"))
        assert any(r["check_name"] == "GS103" for r in report)
