"""Work shared with a forked child process gives exactly what doing it all in one process gives: the same
data, the same errors (raised here), the same findings in the same order with the same positions."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpuspec.loader.fleetload import PARALLEL_FILES, load_fleet
from gpuspec.loader.parallel import JOBS_VARIABLE, map_split, worth_a_child
from gpuspec.loader.positions import locate_findings
from gpuspec.pipeline.validate import validate_fleet

PARENT = os.getpid()
#: While it names a marker file: the child creates it at its first item, and this process waits for it
#: before each of its own items, so the child surely claims a chunk however late it starts.
WAIT_FOR_CHILD: list[Path] = []


def _work(item: int) -> dict[str, object]:
    if item == 51:
        raise ValueError(f"item 51 failed in process {os.getpid()}")
    if WAIT_FOR_CHILD:
        marker = WAIT_FOR_CHILD[0]
        if os.getpid() != PARENT:
            marker.touch()
        else:
            deadline = time.monotonic() + 120  # a loaded machine may start the child late
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
    return {"item": item, "pid": os.getpid(), "nested": [item, str(item), None, True, {"k": (1, "a")}]}


def _results(items: list[int]) -> list[object]:
    out: list[object] = []
    for result, error in map_split(items, _work, 10):
        out.append(str(error) if error is not None else {k: v for k, v in result.items() if k != "pid"})
    return out


def test_a_child_claims_chunks_and_errors_come_from_this_process(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    items = list(range(60))
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    alone = map_split(items, _work, 10)
    assert {result["pid"] for result, error in alone if error is None} == {PARENT}
    expected = _results(items)
    monkeypatch.delenv(JOBS_VARIABLE)
    WAIT_FOR_CHILD.append(tmp_path / "child-started")
    try:
        shared = map_split(items, _work, 10)
    finally:
        WAIT_FOR_CHILD.clear()
    assert _results(items) == expected
    assert str(shared[51][1]) == f"item 51 failed in process {PARENT}"
    pids = {result["pid"] for result, error in shared if error is None}
    if worth_a_child(len(items), 10):
        assert len(pids) == 2 and PARENT in pids
    else:
        pytest.skip("one CPU or no fork here: everything ran in this process (checked above)")


def test_results_marshal_cannot_keep_are_made_here() -> None:
    items = list(range(20))
    results = map_split(items, lambda i: object() if i == 3 else i, 10)
    assert [r for r, _ in results][:3] == [0, 1, 2] and [r for r, _ in results][4:] == items[4:]
    assert type(results[3][0]) is object


def test_an_interrupted_parent_ends_its_child(monkeypatch: pytest.MonkeyPatch) -> None:
    forked: list[int] = []
    fork = os.fork

    def recording_fork() -> int:
        pid = fork()
        if pid:
            forked.append(pid)
        return pid

    def work(item: int) -> int:
        if os.getpid() == PARENT:
            raise KeyboardInterrupt  # at the first item this process claims
        time.sleep(0.05)  # the child is slow: it cannot claim every chunk before this process claims one
        return item

    monkeypatch.setattr(os, "fork", recording_fork)
    if not worth_a_child(100, 10):
        pytest.skip("one CPU or no fork here")
    with pytest.raises(KeyboardInterrupt):
        map_split(list(range(100)), work, 10)
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):  # killed and reaped already
        os.waitpid(forked[0], os.WNOHANG)


def test_too_few_items_stay_here() -> None:
    assert not worth_a_child(PARALLEL_FILES - 1, PARALLEL_FILES)


def _big_fleet(fleet: Path, count: int, schema_errors: bool = False) -> None:
    template = (fleet / "clusters" / "infer-north.yaml").read_text()
    for index in range(count):
        text = template.replace("name: infer-north", f"name: infer-{index:03d}", 1)
        if index % 9 == 4:
            text = text.replace("product: L40S", "product: L40X", 1)  # a support-matrix finding
        if schema_errors and index % 13 == 5:
            text = text.replace("kubernetes:\n", "kubernetes:\n  unknownKey: 1\n", 1)
        (fleet / "clusters" / f"infer-{index:03d}.yaml").write_text(text)


def test_a_large_fleet_loads_and_validates_the_same_with_and_without_a_child(
        fleet_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSPEC_NO_CACHE", "1")
    _big_fleet(fleet_copy, PARALLEL_FILES + 16)
    policies = fleet_copy.parent / "policies"

    def run() -> tuple[object, ...]:
        load = load_fleet(fleet_copy)
        findings = locate_findings(validate_fleet(fleet_copy, policies).findings)
        assert {"GS210"} <= {f.rule_id for f in findings}
        _big_fleet(fleet_copy, PARALLEL_FILES + 16, schema_errors=True)
        (fleet_copy / "clusters" / "infer-006.yaml").write_text("pools: [\n")  # broken, whoever parses it
        (fleet_copy / "clusters" / "infer-008.yaml").write_text("a: 1\na: 2\n")
        (fleet_copy / "clusters" / "infer-010.yaml").write_text("- a list\n")
        broken = load_fleet(fleet_copy)
        _big_fleet(fleet_copy, PARALLEL_FILES + 16)
        return load.raw, load.fleet, load.findings, broken.raw, locate_findings(broken.findings), findings

    shared = run()
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    assert run() == shared
    broken_findings = shared[4]
    assert isinstance(broken_findings, list) and len(broken_findings) >= 3 + 6
    assert all(f.line for f in broken_findings)
