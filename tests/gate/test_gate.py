"""`gpuspec gate` on exported node states before, during and after a driver upgrade of the canary pool."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpuspec.acceptance.expected import read_rendered
from tests.audit.audit_cli import REPO, CliResult, run_gpuspec
from tests.audit.audit_fixtures import driver_labels, h100
from tests.gate.gate_fixtures import (
    FLEET_DIR,
    POOL_NODES,
    after_upgrade,
    before_upgrade,
    during_upgrade,
    job_list,
    nodes_export,
    operator_export,
    passing_runs,
    render_fleet,
    run,
    upgrade_failed,
    write_json,
)


@pytest.fixture(scope="module")
def rendered_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture fleet rendered by the real `gpuspec render` (pools a100-mig and l40s get NVIDIADrivers)."""
    return render_fleet(tmp_path_factory.mktemp("rendered"))


@pytest.fixture(scope="module")
def passing_jobs(rendered_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An export in which every acceptance Job of the rendered revision passed."""
    jobs = list(read_rendered(rendered_dir, "lab").jobs)
    return write_json(tmp_path_factory.mktemp("jobs") / "jobs.json", job_list(passing_runs(jobs)))


def _gate(rendered_dir: Path, tmp_path: Path, nodes: list[dict[str, Any]], *extra: str,
          operator: dict[str, Any] | None = None, jobs: str | None = None, fmt: str = "json") -> CliResult:
    args = ["gate", str(FLEET_DIR), "--cluster", "lab", "--rendered", str(rendered_dir),
            "--nodes", write_json(tmp_path / "nodes.json", nodes_export(nodes)), "--format", fmt]
    if operator is not None:
        args += ["--clusterpolicies", write_json(tmp_path / "cp.json", operator)]
    if jobs is not None:
        args += ["--jobs", jobs]
    return run_gpuspec(*args, *extra)


def _failing(result: CliResult) -> dict[tuple[str, str], dict[str, Any]]:
    data = result.json()
    out = {("cluster", c["name"]): c for c in data["clusterCriteria"] if not c["passed"]}
    for pool in data["pools"]:
        out |= {(pool["pool"], c["name"]): c for c in pool["criteria"] if not c["passed"]}
    return out


def test_after_the_upgrade_the_cluster_passes(rendered_dir: Path, passing_jobs: str, tmp_path: Path) -> None:
    result = _gate(rendered_dir, tmp_path, after_upgrade(), operator=operator_export(), jobs=passing_jobs)
    assert result.code == 0, result.out
    data = result.json()
    assert data["passed"] is True and _failing(result) == {}
    h100 = next(p for p in data["pools"] if p["pool"] == "h100")
    assert h100["targetDriver"] == "580.173.02" and h100["nodes"] == ["gpu-h100-0", "gpu-h100-1"]
    names = {c["name"] for p in data["pools"] for c in p["criteria"]}
    assert names == {"nodes", "driver", "upgrade", "gpus", "mig", "nvidiadriver", "acceptance"}
    text = _gate(rendered_dir, tmp_path, after_upgrade(), operator=operator_export(), jobs=passing_jobs, fmt="text")
    assert text.code == 0 and "PASSED: cluster lab runs the spec of this revision" in text.out


def test_before_the_upgrade_the_driver_is_not_the_target(rendered_dir: Path, passing_jobs: str,
                                                         tmp_path: Path) -> None:
    result = _gate(rendered_dir, tmp_path, before_upgrade(), operator=operator_export(), jobs=passing_jobs)
    assert result.code == 1
    assert set(_failing(result)) == {("h100", "driver")}
    assert _failing(result)[("h100", "driver")]["details"] == ["runs 580.95.05: gpu-h100-0, gpu-h100-1"]


def test_during_the_upgrade_nodes_are_cordoned_and_in_progress(rendered_dir: Path, passing_jobs: str,
                                                              tmp_path: Path) -> None:
    result = _gate(rendered_dir, tmp_path, during_upgrade(), operator=operator_export(), jobs=passing_jobs)
    assert result.code == 1
    failing = _failing(result)
    assert set(failing) == {("h100", "nodes"), ("h100", "driver"), ("h100", "upgrade")}
    assert failing[("h100", "upgrade")]["details"] == [
        "nvidia.com/gpu-driver-upgrade-state=drain-required: gpu-h100-0",
        "nvidia.com/gpu-driver-upgrade-state=upgrade-required: gpu-h100-1",
    ]
    assert failing[("h100", "nodes")]["details"] == ["cordoned (spec.unschedulable): gpu-h100-0"]


def test_a_failed_upgrade_fails_the_gate(rendered_dir: Path, passing_jobs: str, tmp_path: Path) -> None:
    result = _gate(rendered_dir, tmp_path, upgrade_failed(), operator=operator_export(), jobs=passing_jobs,
                   fmt="markdown")
    assert result.code == 1
    assert result.out.startswith("### Promotion gate: cluster lab")
    assert "nvidia.com/gpu-driver-upgrade-state=upgrade-failed: gpu-h100-1" in result.out
    assert "advertises no GPU resources: gpu-h100-1" in result.out
    assert "| h100 | upgrade | **fail** |" in result.out


@pytest.mark.parametrize(("key", "where", "value", "words"), [
    ("nvidia.com/gpu-driver-upgrade-requested", "annotations", "true", "an upgrade is requested"),
    ("nvidia.com/gpu-driver-upgrade.driver-wait-for-safe-load", "annotations", "true", "waits for a safe load"),
    ("nvidia.com/gpu-driver-upgrade-validation-start-time", "annotations", "1755662400", "validation"),
    ("nvidia.com/gpu-driver-upgrade.skip", "labels", "true", "never moves it to a new driver"),
])
def test_the_gate_reads_every_mark_of_the_upgrade_state_machine(rendered_dir: Path, passing_jobs: str,
                                                                tmp_path: Path, key: str, where: str, value: str,
                                                                words: str) -> None:
    """Issue 44: a node labelled upgrade-done (or unlabelled) but marked for the upgrade controller
    (k8s-operator-libs pkg/upgrade/consts.go) does not run the spec yet."""
    nodes = after_upgrade()
    node = next(n for n in nodes if n["metadata"]["name"] == "gpu-h100-1")
    node["metadata"].setdefault(where, {})[key] = value
    node["metadata"]["annotations"] = {**node["metadata"].get("annotations", {}),
                                       "kubectl.kubernetes.io/last-applied-configuration": "{}"}
    result = _gate(rendered_dir, tmp_path, nodes, operator=operator_export(), jobs=passing_jobs)
    assert result.code == 1
    [detail] = _failing(result)[("h100", "upgrade")]["details"]
    assert detail.startswith(key) and words in detail and detail.endswith("gpu-h100-1")


def test_the_canary_pool_alone(rendered_dir: Path, passing_jobs: str, tmp_path: Path) -> None:
    nodes = after_upgrade()
    l40s = next(n for n in nodes if n["metadata"]["name"] == "gpu-l40s-0")
    l40s["status"]["allocatable"]["nvidia.com/gpu"] = "4"  # the time-slicing config is not applied
    whole = _gate(rendered_dir, tmp_path, nodes, operator=operator_export(), jobs=passing_jobs)
    assert whole.code == 1 and set(_failing(whole)) == {("l40s", "gpus")}
    canary = _gate(rendered_dir, tmp_path, nodes, "--pool", "h100", operator=operator_export(), jobs=passing_jobs)
    assert canary.code == 0, canary.out
    assert [p["pool"] for p in canary.json()["pools"]] == ["h100"]


def test_gpus_and_mig_must_equal_the_spec(rendered_dir: Path, passing_jobs: str, tmp_path: Path) -> None:
    nodes = after_upgrade()
    h100 = next(n for n in nodes if n["metadata"]["name"] == "gpu-h100-1")
    h100["status"]["allocatable"]["nvidia.com/gpu"] = "7"  # one GPU fell off the bus
    a100 = next(n for n in nodes if n["metadata"]["name"] == "gpu-a100-0")
    a100["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending"
    failing = _failing(_gate(rendered_dir, tmp_path, nodes, operator=operator_export(), jobs=passing_jobs))
    assert failing[("h100", "gpus")]["details"] == ["advertises 7 nvidia.com/gpu: gpu-h100-1"]
    assert failing[("a100-mig", "mig")]["details"] == ["nvidia.com/mig.config.state=pending: gpu-a100-0"]


@pytest.mark.parametrize(("operator", "failing", "words"), [
    (operator_export(policy_state="notReady"), ("cluster", "clusterpolicy"),
     "ClusterPolicy cluster-policy is notReady (Ready=False OperandNotReady: state-driver is not ready"),
    (operator_export(driver_states={"l40s": "notReady"}), ("l40s", "nvidiadriver"), "NVIDIADriver l40s is notReady"),
    (operator_export(driver_states={"default": "notReady"}), ("h100", "nvidiadriver"),
     "NVIDIADriver default is notReady"),
    (operator_export(versions={"a100-mig": "570.172.08"}), ("a100-mig", "nvidiadriver"),
     "NVIDIADriver a100-mig installs 570.172.08, the rendered revision 580.95.05"),
])
def test_operator_resources_must_be_ready(rendered_dir: Path, passing_jobs: str, tmp_path: Path,
                                          operator: dict[str, Any], failing: tuple[str, str], words: str) -> None:
    result = _gate(rendered_dir, tmp_path, after_upgrade(), operator=operator, jobs=passing_jobs)
    assert result.code == 1
    assert set(_failing(result)) == {failing}
    assert any(words in d for d in _failing(result)[failing]["details"]), _failing(result)


def test_a_rendered_nvidiadriver_missing_from_the_export(rendered_dir: Path, passing_jobs: str,
                                                        tmp_path: Path) -> None:
    operator = operator_export()
    operator["items"] = [i for i in operator["items"] if i["metadata"]["name"] != "a100-mig"]
    failing = _failing(_gate(rendered_dir, tmp_path, after_upgrade(), operator=operator, jobs=passing_jobs))
    assert failing[("a100-mig", "nvidiadriver")]["details"] == [
        "NVIDIADriver a100-mig of the rendered revision is not in the export"]


def test_acceptance_of_this_revision_must_have_passed(rendered_dir: Path, tmp_path: Path) -> None:
    jobs = list(read_rendered(rendered_dir, "lab").jobs)
    h100 = next(j for j in jobs if j.pool == "h100")
    items = passing_runs([j for j in jobs if j is not h100])
    items += run(h100.name.rsplit("-", 1)[0] + "-0badc0de", "h100", "passed", POOL_NODES["h100"])  # older revision
    export = write_json(tmp_path / "jobs.json", job_list(items))
    result = _gate(rendered_dir, tmp_path, after_upgrade(), operator=operator_export(), jobs=export)
    assert result.code == 1
    detail = _failing(result)[("h100", "acceptance")]["details"][0]
    assert detail.startswith(f"smoke ({h100.name}): not-run:") and "only an older revision ran" in detail
    failed = write_json(tmp_path / "failed.json", job_list(passing_runs(
        [j for j in jobs if j is not h100]) + run(h100.name, "h100", "failed", POOL_NODES["h100"])))
    again = _gate(rendered_dir, tmp_path, after_upgrade(), operator=operator_export(), jobs=failed)
    assert set(_failing(again)) == {("h100", "acceptance")}


def test_missing_evidence_fails_the_gate(rendered_dir: Path, passing_jobs: str, tmp_path: Path) -> None:
    result = _gate(rendered_dir, tmp_path, after_upgrade())
    assert result.code == 1
    failing = _failing(result)
    assert failing[("cluster", "clusterpolicy")]["verdict"] == "no-evidence"
    assert failing[("h100", "acceptance")]["verdict"] == "no-evidence"
    assert failing[("a100-mig", "nvidiadriver")]["verdict"] == "no-evidence"
    only_drivers = copy.deepcopy(operator_export())
    only_drivers["items"] = [i for i in only_drivers["items"] if i["kind"] == "NVIDIADriver"]
    drivers = write_json(tmp_path / "nd.json", only_drivers)
    separate = _gate(rendered_dir, tmp_path, after_upgrade(), "--nvidiadrivers", drivers, jobs=passing_jobs)
    assert set(_failing(separate)) == {("cluster", "clusterpolicy")}
    assert _failing(separate)[("cluster", "clusterpolicy")]["verdict"] == "no-evidence"


@pytest.mark.parametrize(("extra", "words"), [
    (("--pool", "v100"), "cluster 'lab' has no pool 'v100'"),
    (("--cluster", "nope"), "cluster 'nope' is not in"),
])
def test_bad_arguments_exit_2(rendered_dir: Path, tmp_path: Path, extra: tuple[str, ...], words: str) -> None:
    result = _gate(rendered_dir, tmp_path, after_upgrade(), *extra)
    assert result.code == 2
    assert words in result.err and result.out == ""


def test_bad_node_export_exits_2(rendered_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "nodes.json").write_text('{"kind": "List",\n "items": [\n  {"kind": "Node", }]}')
    result = run_gpuspec("gate", str(FLEET_DIR), "--cluster", "lab", "--rendered", str(rendered_dir),
                         "--nodes", str(tmp_path / "nodes.json"))
    assert result.code == 2
    assert "nodes.json:3:20: invalid JSON" in result.err, result.err


def test_a_pool_the_operator_does_not_manage_is_not_gated(rendered_dir: Path, passing_jobs: str,
                                                          tmp_path: Path) -> None:
    """Hybrid mode (managed: false, host driver): the pool's nodes are listed as not gated, and --pool refuses it."""
    fleet = tmp_path / "fleet"
    shutil.copytree(FLEET_DIR, fleet)
    cluster = fleet / "clusters" / "lab.yaml"
    text = cluster.read_text()
    marker = "  - name: l40s\n"
    assert marker in text
    text = text[:text.index("    sharing:")]  # l40s is the last pool; an unmanaged pool has no sharing
    cluster.write_text(text.replace(marker, marker + "    managed: false\n").replace(
        "      version: 580.95.05\n", "      source: host\n      version: 580.95.05\n"))
    nodes = after_upgrade()
    next(n for n in nodes if n["metadata"]["name"] == "gpu-l40s-0")["metadata"]["labels"].update(
        {"nvidia.com/gpu.deploy.operands": "false"})
    args = ["gate", str(fleet), "--cluster", "lab", "--rendered", str(rendered_dir), "--format", "json",
            "--nodes", write_json(tmp_path / "nodes.json", nodes_export(nodes)),
            "--clusterpolicies", write_json(tmp_path / "cp.json", operator_export()), "--jobs", passing_jobs]
    result = run_gpuspec(*args)
    data = result.json()
    assert data["unmanagedPools"] == ["l40s"]
    assert [p["pool"] for p in data["pools"]] == ["h100", "a100-mig"]
    refused = run_gpuspec(*args, "--pool", "l40s")
    assert refused.code == 2 and "is not managed by the operator" in refused.err


def test_a_fleet_that_does_not_load_exits_2(rendered_dir: Path, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    shutil.copytree(FLEET_DIR, fleet)
    cluster = fleet / "clusters" / "lab.yaml"
    cluster.write_text(cluster.read_text().replace("    nodes: 2\n", "    nodes: two\n", 1))
    result = run_gpuspec("gate", str(fleet), "--cluster", "lab", "--rendered", str(rendered_dir),
                         "--nodes", write_json(tmp_path / "nodes.json", nodes_export(after_upgrade())))
    assert result.code == 2 and result.out == ""
    assert "lab.yaml:" in result.err and "fix it first" in result.err


def _canary_node(name: str, driver: tuple[str, str, str]) -> dict[str, Any]:
    node = h100(name)
    node["metadata"]["labels"].update({"acme.example/gpu-pool": "h100-canary", **driver_labels(*driver)})
    return node


def test_the_example_fleets_canary_pool_with_the_repository_defaults(tmp_path: Path) -> None:
    """In a fleet repository with no paths: ./fleet and ./rendered; the driver comes from channel stable."""
    rendered = read_rendered(REPO / "rendered", "train-east")
    canary = rendered.of_pool("h100-canary")
    assert canary, "the example fleet renders acceptance checks for its canary pool"
    names = ["gpu-canary-0", "gpu-canary-1"]
    items: list[dict[str, Any]] = []
    for wanted in canary:
        busbw = None if wanted.min_busbw_gbps is None else wanted.min_busbw_gbps + 40
        items += run(wanted.name, wanted.pool, "passed", names, seconds=20,
                     check=None if wanted.check == "smoke" else wanted.check, busbw=busbw)
    jobs = write_json(tmp_path / "jobs.json", job_list(items))
    operator = operator_export()
    operator["items"] = operator["items"][:1]  # train-east runs the driver from the ClusterPolicy
    cp = write_json(tmp_path / "cp.json", operator)
    for driver, code in ((("580", "173", "02"), 0), (("580", "95", "05"), 1)):
        nodes = write_json(tmp_path / "nodes.json", nodes_export([_canary_node(n, driver) for n in names]))
        result = run_gpuspec("gate", "--cluster", "train-east", "--pool", "h100-canary", "--nodes", nodes,
                             "--clusterpolicies", cp, "--jobs", jobs, "--format", "json", cwd=REPO)
        assert result.code == code, result.out + result.err
        pool = result.json()["pools"][0]
        assert pool["targetDriver"] == "580.173.02"
