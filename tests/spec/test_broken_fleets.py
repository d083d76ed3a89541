"""Each broken fleet gives the right rule id at the exact file:line:column, and no traceback."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuspec.cli.main import cli
from gpuspec.loader.positions import locate_findings
from gpuspec.pipeline.validate import validate_fleet

TRAIN = "clusters/train-east.yaml"
INFER = "clusters/infer-north.yaml"
FLEET = "fleet.yaml"


def replace(file: str, old: str, new: str, count: int = 1) -> Callable[[Path], None]:
    """A mutation that replaces text in one fleet file."""

    def mutate(fleet: Path) -> None:
        path = fleet / file
        text = path.read_text()
        assert old in text, f"{old!r} not in {file}"
        path.write_text(text.replace(old, new, count))

    return mutate


def write(file: str, content: str | bytes) -> Callable[[Path], None]:
    """A mutation that writes a whole file."""

    def mutate(fleet: Path) -> None:
        path = fleet / file
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)

    return mutate


def make_dir(file: str) -> Callable[[Path], None]:
    """A mutation that puts a directory where a spec file is expected."""

    def mutate(fleet: Path) -> None:
        path = fleet / file
        if path.exists():
            path.unlink()
        path.mkdir()

    return mutate


def line_of(fleet: Path, file: str, needle: str, nth: int = 1) -> int:
    """1-based line number of the nth line containing ``needle``."""
    lines = (fleet / file).read_bytes().decode("utf-8", "replace").splitlines()
    hits = [i for i, text in enumerate(lines, 1) if needle in text]
    return hits[nth - 1]


@dataclass
class Case:
    name: str
    mutate: Callable[[Path], None]
    rule: str
    file: str
    needle: str  # text on the expected line (after mutation)
    column: int
    exit_code: int
    nth: int = 1


CASES = [
    Case("yaml syntax", replace(TRAIN, "    nodes: 32\n", "    nodes: 32\n   wave: 3\n"), "GS100", TRAIN,
         "wave: 3", 4, 2),
    Case("duplicate key", replace(TRAIN, "    nodes: 32\n", "    nodes: 32\n    nodes: 33\n"), "GS102", TRAIN,
         "nodes: 33", 5, 2),
    Case("unknown key", replace(TRAIN, "      product: H100-SXM5-80GB\n", "      prodcut: H100-SXM5-80GB\n"),
         "GS103", TRAIN, "prodcut", 7, 2),
    Case("wrong type", replace(TRAIN, "    nodes: 32\n", "    nodes: many\n"), "GS104", TRAIN, "nodes: many", 12, 2),
    Case("missing key", replace(INFER, "gitops:\n  tool: flux\n", "gitopz:\n  tool: flux\n"), "GS105", INFER,
         "apiVersion", 1, 2),
    Case("bad api version", replace(INFER, "apiVersion: gpuspec.io/v1alpha1", "apiVersion: gpuspec.io/v2"),
         "GS106", INFER, "apiVersion", 13, 2),
    Case("python tag", replace(TRAIN, "  distribution: upstream", "  distribution: !!python/name:os.system"),
         "GS100", TRAIN, "distribution: !!python", 17, 2),
    Case("custom tag", replace(FLEET, "  revision: main", "  revision: !Ref main"), "GS100", FLEET, "revision:",
         13, 2),
    Case("alias bomb", write(FLEET, "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdef", "bcdefg", strict=True))),
        "GS100", FLEET, "", 1, 2),
    Case("recursive alias", replace(FLEET, "  path: rendered\n", "  path: rendered\nloop: &loop [*loop]\n"), "GS100",
         FLEET, "loop:", 7, 2),
    Case("non utf-8", write(INFER, b"apiVersion: gpuspec.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: caf\xe9\n"),
         "GS101", INFER, "name: caf", 12, 2),
    Case("directory instead of file", make_dir("clusters/extra.yaml"), "GS101", "clusters/extra.yaml", "", 1, 2),
    Case("file over size bound", write(INFER, "# padding\n" * 120_000), "GS101", INFER, "", 1, 2),
    Case("empty file", write(INFER, "# nothing here\n"), "GS101", INFER, "nothing", 1, 2),
    Case("two documents", replace(INFER, "kind: Cluster\n", "kind: Cluster\n---\n"), "GS100", INFER, "metadata:", 1, 2),
    Case("not a mapping", write(INFER, "- just\n- a list\n"), "GS104", INFER, "just", 1, 2),
    Case("bad DNS name", replace(TRAIN, "  - name: h100\n", "  - name: H100_Main\n"), "GS104", TRAIN,
         "H100_Main", 11, 2),
    Case("bad k8s version", replace(TRAIN, 'version: "1.34"', "version: 1.34.2"), "GS104", TRAIN, "1.34.2", 12, 2),
    Case("file name mismatch", replace(TRAIN, "  name: train-east", "  name: train-west"), "GS110", TRAIN,
         "name: train-west", 9, 1),
    Case("duplicate pool", replace(TRAIN, "  - name: h100\n", "  - name: h100-canary\n"), "GS111", TRAIN,
         "- name: h100-canary", 11, 1, nth=2),
    Case("unknown mirror", replace(INFER, "mirror: dc-north", "mirror: dc-south"), "GS112", INFER,
         "mirror: dc-south", 9, 1),
    Case("unknown channel", replace(TRAIN, "  channel: stable", "  channel: beta"), "GS112", TRAIN,
         "channel: beta", 12, 1),
    Case("unknown canary pool", replace(TRAIN, "canaryPool: h100-canary", "canaryPool: h200-canary"), "GS112", TRAIN,
         "canaryPool: h200", 15, 1),
    Case("tenant unknown pool", replace(TRAIN, "pools: [a100-mig]", "pools: [a100]"), "GS112", TRAIN,
         "pools: [a100]", 13, 1),
    Case("unknown policy pack", replace(FLEET, "packs: [default]", "packs: [default, hardened]"), "GS112", FLEET,
         "packs:", 20, 1),
    Case("version and channel", replace(INFER, "  version: v26.7.0\n", "  version: v26.7.0\n  channel: stable\n"),
         "GS113", INFER, "operator:", 1, 1),
    Case("mig layout without strategy", replace(TRAIN, "      strategy: mixed\n", "      strategy: none\n"),
         "GS114", TRAIN, "strategy: none", 17, 1),
    Case("sharing replicas without mode", replace(INFER, "      mode: time-slicing\n", "      mode: none\n"),
         "GS115", INFER, "replicas: 4", 17, 1),
    Case("undeclared priority class", replace(TRAIN, "priorityClass: gpu-training", "priorityClass: gpu-train"),
         "GS112", TRAIN, "priorityClass: gpu-train", 20, 1),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_broken_fleet_reports_rule_and_position(case: Case, fleet_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case.mutate(fleet_copy)
    monkeypatch.chdir(fleet_copy.parent)
    result = validate_fleet(Path("fleet"), Path("policies"))
    findings = locate_findings(result.findings)
    expected_file = os.path.join("fleet", case.file)
    expected_line = line_of(fleet_copy, case.file, case.needle, case.nth) if case.needle else 1
    matches = [f for f in findings if f.rule_id == case.rule and f.file == expected_file]
    assert matches, f"no {case.rule} in {[(f.rule_id, f.file, f.line, f.message) for f in findings]}"
    positions = [(f.line, f.column) for f in matches]
    assert (expected_line, case.column) in positions, positions

    run = CliRunner().invoke(cli, ["validate", "fleet"])
    assert run.exit_code == case.exit_code, run.output
    assert f"{expected_file}:{expected_line}:{case.column}: error {case.rule}" in run.output
    assert "Traceback" not in run.output


def test_distinct_cases() -> None:
    assert len({c.name for c in CASES}) >= 20
