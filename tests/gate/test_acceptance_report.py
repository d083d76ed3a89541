"""`gpuspec acceptance report` on exported Jobs and Pods against the rendered revision of the gate fixture fleet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.acceptance.expected import RenderedAcceptance, read_rendered
from gpuspec.acceptance.exports import parse_export
from gpuspec.acceptance.report import AcceptanceReport, Status, acceptance_report
from tests.audit.audit_cli import run_gpuspec
from tests.gate.gate_fixtures import POOL_NODES, job_list, passing_runs, pod, render_fleet, run, write_json


@pytest.fixture(scope="module")
def rendered_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture fleet rendered by the real `gpuspec render`."""
    return render_fleet(tmp_path_factory.mktemp("rendered"))


@pytest.fixture(scope="module")
def rendered(rendered_dir: Path) -> RenderedAcceptance:
    """The acceptance Jobs of cluster lab's rendered revision."""
    return read_rendered(rendered_dir, "lab")


def _report(rendered: RenderedAcceptance, items: list[dict[str, Any]]) -> AcceptanceReport:
    return acceptance_report(rendered, parse_export(json.dumps(job_list(items)), "jobs.json"))


def _by_pool(report: AcceptanceReport, pool: str, check: str = "smoke") -> Any:
    return next(c for c in report.checks if c.pool == pool and c.check == check)


def test_the_rendered_revision_names_one_job_per_pool_and_check(rendered: RenderedAcceptance) -> None:
    assert {(j.pool, j.check) for j in rendered.jobs} >= {("h100", "smoke"), ("a100-mig", "smoke"), ("l40s", "smoke")}
    assert all(j.name.startswith(f"acceptance-{j.pool}-") for j in rendered.jobs)
    assert rendered.digest is not None and rendered.digest.startswith("sha256:")


def test_every_check_passed(rendered: RenderedAcceptance) -> None:
    report = _report(rendered, passing_runs(list(rendered.jobs)))
    assert report.passed
    h100 = _by_pool(report, "h100")
    assert h100.status is Status.PASSED
    assert h100.nodes == ("gpu-h100-0", "gpu-h100-1")
    assert h100.seconds_to_ready == 38.0  # from PodScheduled to the container's finishedAt
    assert h100.revision == h100.job.rsplit("-", 1)[1]


def test_failed_timed_out_running_and_not_run(rendered: RenderedAcceptance) -> None:
    jobs = {j.pool: j for j in rendered.jobs if j.check == "smoke"}
    items = run(jobs["h100"].name, "h100", "failed", POOL_NODES["h100"])
    items += run(jobs["a100-mig"].name, "a100-mig", "timed-out", POOL_NODES["a100-mig"])
    report = _report(rendered, items)
    failed, timed_out, not_run = _by_pool(report, "h100"), _by_pool(report, "a100-mig"), _by_pool(report, "l40s")
    assert failed.status is Status.FAILED and "BackoffLimitExceeded" in failed.reason
    assert "exited 1" in failed.reason
    assert timed_out.status is Status.TIMED_OUT
    assert "deadline of 600 s" in timed_out.reason and "ImagePullBackOff" in timed_out.reason
    assert not_run.status is Status.NOT_RUN and not_run.older == ()
    running = _report(rendered, run(jobs["l40s"].name, "l40s", "running", POOL_NODES["l40s"]))
    assert _by_pool(running, "l40s").status is Status.RUNNING
    assert not report.passed and report.counts()["passed"] == 0


def test_a_job_of_an_older_revision_does_not_count(rendered: RenderedAcceptance) -> None:
    current = next(j for j in rendered.jobs if j.pool == "h100" and j.check == "smoke")
    older_name = current.name.rsplit("-", 1)[0] + "-0badc0de"
    others = [j for j in rendered.jobs if j is not current]
    report = _report(rendered, passing_runs(others) + run(older_name, "h100", "passed", POOL_NODES["h100"]))
    h100 = _by_pool(report, "h100")
    assert h100.status is Status.NOT_RUN
    assert [o.name for o in h100.older] == [older_name] and h100.older[0].status is Status.PASSED
    assert "only an older revision ran" in h100.reason
    assert not report.passed
    with_current = _report(rendered, passing_runs(list(rendered.jobs)) + run(older_name, "h100", "failed", ["n"]))
    assert with_current.passed  # the current revision's Job decides; the older one is listed
    assert _by_pool(with_current, "h100").older[0].status is Status.FAILED


def test_a_job_of_a_removed_pool_is_listed_and_ignored(rendered: RenderedAcceptance) -> None:
    items = passing_runs(list(rendered.jobs)) + run("acceptance-v100-1234abcd", "v100", "failed", ["gpu-v100-0"])
    report = _report(rendered, items)
    assert report.passed
    assert [o.name for o in report.unexpected] == ["acceptance-v100-1234abcd"]


def test_a_job_whose_pods_are_gone_is_timed_from_the_job(rendered: RenderedAcceptance) -> None:
    items = [i for i in passing_runs(list(rendered.jobs)) if i["kind"] == "Job"]
    report = _report(rendered, items)
    assert report.passed
    assert _by_pool(report, "h100").seconds_to_ready == 45.0
    assert "its pods are not in the export" in _by_pool(report, "h100").reason


def _synthetic_rendered(root: Path) -> Path:
    """A rendered acceptance folder with the checks the acceptance-checks renderer adds (labels, annotations)."""
    folder = root / "clusters" / "lab" / "acceptance"
    folder.mkdir(parents=True)
    header = "# Generated by gpuspec from fleet/ and policies/.\n# Do not edit.\n"

    def job_doc(name: str, pool: str, check: str | None, annotations: dict[str, str]) -> dict[str, Any]:
        labels = {"gpuspec.io/acceptance": "true", "gpuspec.io/pool": pool}
        if check:
            labels["gpuspec.io/check"] = check
        return {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": name, "namespace": "gpuspec-acceptance", "labels": labels,
                             "annotations": annotations},
                "spec": {"activeDeadlineSeconds": 900, "template": {"spec": {"containers": []}}}}

    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpuspec-acceptance"}},
        job_doc("acceptance-h100-nccl-1a2b3c4d", "h100", "nccl",
                {"gpuspec.io/min-busbw-gbps": "150", "gpuspec.io/readiness-budget-seconds": "300"}),
        job_doc("acceptance-h100-all-gpus-5e6f7a8b", "h100", "all-gpus",
                {"gpuspec.io/readiness-budget-seconds": "120"}),
        job_doc("acceptance-h100-9c0d1e2f", "h100", None, {}),
    ]
    (folder / "checks.yaml").write_text(header + "---\n" + yaml.safe_dump_all(docs, explicit_start=False))
    return root


@pytest.mark.parametrize(("busbw", "seconds", "status", "words"), [
    (182.4, 95.0, Status.PASSED, "completed"),
    (91.0, 95.0, Status.FAILED, "bus bandwidth 91 GB/s is under its floor of 150 GB/s"),
    (None, 95.0, Status.FAILED, "no bus bandwidth reported"),
    (182.4, 420.0, Status.FAILED, "time to readiness 420 s is over its budget of 300 s"),
])
def test_bandwidth_and_budget(tmp_path: Path, busbw: float | None, seconds: float, status: Status,
                              words: str) -> None:
    rendered = read_rendered(_synthetic_rendered(tmp_path), "lab")
    assert {j.check for j in rendered.jobs} == {"nccl", "all-gpus", "smoke"}  # no check label: smoke
    nccl = next(j for j in rendered.jobs if j.check == "nccl")
    assert (nccl.min_busbw_gbps, nccl.budget_seconds) == (150.0, 300)
    items = run(nccl.name, "h100", "passed", POOL_NODES["h100"], check="nccl", seconds=seconds, busbw=busbw)
    result = next(c for c in _report(rendered, items).checks if c.check == "nccl")
    assert result.status is status, result.reason
    assert words in result.reason
    assert result.busbw_gbps == busbw
    assert result.within_budget is (seconds <= 300)


def test_a_pod_that_became_ready_is_timed_to_ready(tmp_path: Path) -> None:
    rendered = read_rendered(_synthetic_rendered(tmp_path), "lab")
    name = next(j.name for j in rendered.jobs if j.check == "all-gpus")
    items = run(name, "h100", "running", POOL_NODES["h100"], check="all-gpus", seconds=150)
    result = next(c for c in _report(rendered, items).checks if c.check == "all-gpus")
    assert result.status is Status.RUNNING
    assert result.seconds_to_ready == 150.0 and result.within_budget is False


def test_an_unschedulable_pod_is_named(rendered: RenderedAcceptance) -> None:
    current = next(j for j in rendered.jobs if j.pool == "l40s")
    items = [*run(current.name, "l40s", "timed-out", []), pod(current.name, "l40s", None, "pending")]
    result = _by_pool(_report(rendered, items), "l40s")
    assert result.status is Status.TIMED_OUT
    assert "Insufficient nvidia.com/gpu" in result.reason


# --- the command, end to end -----------------------------------------------------------------------------------

def test_cli_passes_when_every_check_passed(rendered_dir: Path, rendered: RenderedAcceptance, tmp_path: Path) -> None:
    jobs = write_json(tmp_path / "jobs.json", job_list(passing_runs(list(rendered.jobs))))
    result = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", jobs, "--rendered", str(rendered_dir))
    assert result.code == 0, result.out + result.err
    assert "PASSED: all" in result.out and "gpu-h100-0, gpu-h100-1" in result.out
    data = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", jobs, "--rendered", str(rendered_dir),
                       "--format", "json").json()
    assert data["passed"] is True and data["revision"] == rendered.digest
    assert {c["status"] for c in data["checks"]} == {"passed"}


def test_cli_fails_when_a_check_failed_or_did_not_run(rendered_dir: Path, rendered: RenderedAcceptance,
                                                      tmp_path: Path) -> None:
    first, *rest = rendered.jobs
    items = run(first.name, first.pool, "timed-out", POOL_NODES[first.pool]) + passing_runs(rest[1:])
    jobs = write_json(tmp_path / "jobs.json", job_list(items))
    result = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", jobs, "--rendered", str(rendered_dir),
                         "--format", "markdown")
    assert result.code == 1
    assert result.out.startswith("### Acceptance of cluster `lab`")
    assert "| **timed-out** |" in result.out and "| **not-run** |" in result.out
    assert "❌" in result.out
    out = tmp_path / "report.md"
    again = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", jobs, "--rendered", str(rendered_dir),
                        "--format", "markdown", "--output", str(out))
    assert again.code == 1 and out.read_text() == result.out  # deterministic


def test_cli_reads_standard_input(rendered_dir: Path, rendered: RenderedAcceptance) -> None:
    text = json.dumps(job_list(passing_runs(list(rendered.jobs))))
    result = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", "-", "--rendered", str(rendered_dir),
                         stdin=text)
    assert result.code == 0, result.err


@pytest.mark.parametrize(("text", "words"), [
    ('{"apiVersion": "v1",\n "kind": "List",\n "items": [}', "jobs.json:3:12: invalid JSON"),
    ('{"kind": "List", "items": [{"kind": "Service", "metadata": {"name": "x"}}]}',
     "items[0] is a Service, expected a Job or a Pod"),
    ('{"kind": "List", "items": [{"kind": "Job", "metadata": {"name": "x"}, '
     '"status": {"startTime": "yesterday"}}]}', "items[0].status.startTime"),
    ('{"kind": "List", "items": [{"kind": "Pod", "metadata": {}}]}', "items[0].metadata.name"),
    ('[1, 2]', "not the output of `kubectl get jobs,pods"),
])
def test_cli_bad_export_exits_2(rendered_dir: Path, tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "jobs.json").write_text(text)
    result = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", str(tmp_path / "jobs.json"),
                         "--rendered", str(rendered_dir))
    assert result.code == 2
    assert words in result.err, result.err
    assert result.out == ""


def test_cli_bad_rendered_input_exits_2(rendered_dir: Path, tmp_path: Path) -> None:
    jobs = write_json(tmp_path / "jobs.json", job_list([]))
    unknown = run_gpuspec("acceptance", "report", "--cluster", "nope", "--jobs", jobs, "--rendered", str(rendered_dir))
    assert unknown.code == 2 and "no rendered output for cluster 'nope'" in unknown.err
    assert "rendered clusters: lab" in unknown.err
    broken = tmp_path / "rendered" / "clusters" / "lab" / "acceptance"
    broken.mkdir(parents=True)
    (broken / "acceptance.yaml").write_text("kind: Job\nmetadata: {name: [\n")
    bad = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", jobs, "--rendered",
                      str(tmp_path / "rendered"))
    assert bad.code == 2
    assert "clusters/lab/acceptance/acceptance.yaml:3:1: invalid YAML" in bad.err, bad.err
    missing = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", str(tmp_path / "none.json"),
                          "--rendered", str(rendered_dir))
    assert missing.code == 2 and "none.json: no such file" in missing.err


def test_jobs_of_other_namespaces_are_left_out(rendered: RenderedAcceptance) -> None:
    """An export with -A holds other teams' Jobs; one named like an acceptance Job does not count."""
    items = passing_runs(list(rendered.jobs))
    for item in items:
        item["metadata"]["namespace"] = "team-a"
    report = _report(rendered, items)
    assert {c.status for c in report.checks} == {Status.NOT_RUN}


def test_hostile_values_in_the_export_cannot_change_the_report(rendered_dir: Path, rendered: RenderedAcceptance,
                                                               tmp_path: Path) -> None:
    """A pod's messages are written by whoever runs in the cluster: no terminal control, no Markdown structure."""
    h100 = next(j for j in rendered.jobs if j.pool == "h100")
    items = run(h100.name, "h100", "failed", ["gpu-h100-0"])
    for item in items:
        for status in item.get("status", {}).get("containerStatuses", []):
            status["state"]["terminated"]["reason"] = "Error\x1b[2J\n::error::owned\n| a | b |\n# heading"
    jobs = write_json(tmp_path / "jobs.json", job_list(items))
    for fmt in ("text", "markdown"):
        result = run_gpuspec("acceptance", "report", "--cluster", "lab", "--jobs", jobs, "--rendered",
                             str(rendered_dir), "--format", fmt)
        assert result.code == 1
        assert "\x1b" not in result.out
        assert not any(line.startswith(("::error", "# heading")) for line in result.out.splitlines())
    assert "\\| a \\| b \\|" in result.out


def test_not_run_names_argo_cds_deletion_of_succeeded_hooks(rendered: RenderedAcceptance) -> None:
    """The fixture cluster syncs with Argo CD; its rendered hooks say whether a success leaves evidence."""
    report = _report(rendered, [])
    for check in report.checks:
        wanted = next(j for j in rendered.jobs if j.name == check.job)
        assert check.status is Status.NOT_RUN
        assert ("hook-delete-policy HookSucceeded" in check.reason) is wanted.deleted_on_success
