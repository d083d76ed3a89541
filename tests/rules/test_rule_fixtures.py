"""Every finding id has a failing and a passing case in one layout, run by one runner per stage kind.

Layout: ``tests/rules/fixtures/<ID>/fail/`` and ``.../pass/``. A case folder is laid over a base repository:

* fleet stages (lint engine, validate, support matrix, packs): files under ``fleet/`` and ``policies/`` over
  ``fixtures/_base``, then ``gpuspec lint``;
* change set (GS8xx): ``base/`` is laid over ``_base`` and committed, ``head/`` over that in the working tree,
  then ``gpuspec lint --base HEAD``;
* audit: ``nodes.json`` (and ``clusterpolicies.json``) against the audit fleet of ``tests/audit/fixtures``;
* verify: ``fleet/`` and ``rendered/`` files over the verify fixture repository, checked against the mini chart.

``fail/expect.yaml`` lists the case's findings of that id as ``[file, line, column]`` (relative to the repository
root), in report order; a passing case has none of that id. ``GPUSPEC_UPDATE_GOLDEN=1`` rewrites expect.yaml.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from audit.audit_cli import run_gpuspec
from plan.helpers import GIT_ENV

from gpuspec.catalogue import CATALOGUE
from gpuspec.findings import Finding
from gpuspec.pipeline.lint import lint_fleet
from gpuspec.pipeline.verify import VerifyOptions, verify_fleet
from rules.harness import BASE_REPO, FIXTURES, REPO_ROOT

AUDIT_FLEET = REPO_ROOT / "tests" / "audit" / "fixtures" / "fleet"
VERIFY_REPO = REPO_ROOT / "tests" / "verify" / "fixtures" / "mini"
VERIFY_CRDS = REPO_ROOT / "tests" / "verify" / "fixtures" / "crds"
MINI_CHART = REPO_ROOT / "tests" / "fixtures" / "charts" / "gpu-operator-mini"
UPDATE = os.environ.get("GPUSPEC_UPDATE_GOLDEN") == "1"

#: Ids that cannot have a failing case in this environment, and why (they keep a passing case).
NO_FAILING_CASE: dict[str, str] = {
    "GS000": "needs a rule that crashes; no shipped rule does (tests/rules/test_rule_units.py injects one)",
    "GS301": "the support-matrix data records no MIG-incapable GPU (tests/matrix/test_checks.py patches the data)",
    "GS306": "the support-matrix data allows every sharing mode with MIG (tests/matrix/test_checks.py patches it)",
}

Position = tuple[str, int, int]

CASE_IDS = sorted(d.name for d in FIXTURES.iterdir() if d.is_dir() and not d.name.startswith("_"))
FAILING = [i for i in CASE_IDS if (FIXTURES / i / "fail").is_dir()]
PASSING = [i for i in CASE_IDS if (FIXTURES / i / "pass").is_dir()]


def _overlay(source: Path, target: Path, skip: frozenset[str] = frozenset({"expect.yaml"})) -> None:
    """Copy every file below ``source`` to the same place below ``target`` (except the expectations)."""
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name not in skip:
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)


def _relative(file: str | None, root: Path) -> str:
    path = Path(file or "")
    try:
        return (path if path.is_absolute() else (root / path)).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(file)


def _from_lint(findings: list[Finding], rule_id: str, root: Path) -> list[tuple[str, Position]]:
    return [(f.severity.value, (_relative(f.file, root), f.line or 0, f.column or 0))
            for f in findings if f.rule_id == rule_id]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV, "HOME": str(root.parent)},
                   capture_output=True, check=True)


def run_fleet_case(case: Path, rule_id: str, root: Path) -> list[tuple[str, Position]]:
    """Lint the base fleet with the case's files laid over it."""
    shutil.copytree(BASE_REPO, root)
    _overlay(case, root)
    result = lint_fleet(root / "fleet", root / "policies")
    return _from_lint(result.findings, rule_id, root)


def run_changeset_case(case: Path, rule_id: str, root: Path, monkeypatch: pytest.MonkeyPatch) -> list[
        tuple[str, Position]]:
    """Commit base fleet + ``base/``, lay ``head/`` over the working tree, lint against HEAD."""
    shutil.copytree(BASE_REPO, root)
    _overlay(case / "base", root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    _overlay(case / "head", root)
    monkeypatch.chdir(root)
    result = lint_fleet(Path("fleet"), Path("policies"), base_rev="HEAD")
    return _from_lint(result.findings, rule_id, root)


def run_audit_case(case: Path, rule_id: str, root: Path, monkeypatch: pytest.MonkeyPatch) -> list[
        tuple[str, Position]]:
    """`gpuspec audit --cluster lab` of the case's node (and operator resource) exports against the audit fleet."""
    shutil.copytree(AUDIT_FLEET, root / "fleet")
    _overlay(case, root)
    args = ["audit", "--cluster", "lab", "--nodes", "nodes.json", "--format", "json"]
    if (root / "clusterpolicies.json").is_file():
        args += ["--clusterpolicies", "clusterpolicies.json", "--drivers", "clusterpolicies.json"]
    result = run_gpuspec(*args, "fleet", cwd=root)
    doc = result.json()
    assert result.code == (1 if any(f["severity"] == "error" for f in doc["findings"]) else 0), result.err
    assert all(f["specPath"].startswith("clusters[lab]") for f in doc["findings"]), doc["findings"]
    return [(f["severity"], (_relative(f["file"], root), f["line"] or 0, f["column"] or 0))
            for f in doc["findings"] if f["ruleId"] == rule_id]


def run_verify_case(case: Path, rule_id: str, root: Path, request: pytest.FixtureRequest) -> list[
        tuple[str, Position]]:
    """Verify the mini fleet's rendered/ tree (case files laid over it) against the mini chart (``chart/`` over it).

    ``charts.txt`` replaces the local chart by the chart sources it lists (one a line).
    """
    shutil.copytree(VERIFY_REPO, root)
    shutil.copytree(MINI_CHART, root / "chart")
    _overlay(case, root)
    sources = root / "charts.txt"
    charts: list[Path | str] = sources.read_text(encoding="utf-8").split() if sources.is_file() else [root / "chart"]
    tools: Path = request.getfixturevalue("tools_bin")
    result = verify_fleet(VerifyOptions(
        fleet_dir=root / "fleet", rendered_dir=root / "rendered", charts=charts, crd_paths=[VERIFY_CRDS],
        helm=tools / "helm", cache_dir=request.getfixturevalue("verify_cache"),
    ))
    return _from_lint(result.findings, rule_id, root)


@pytest.fixture(scope="session")
def verify_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One verify cache for every verify case (the passing cases share their helm output)."""
    return tmp_path_factory.mktemp("verify-cache")


def run_case(rule_id: str, kind: str, root: Path, request: pytest.FixtureRequest) -> list[tuple[str, Position]]:
    """The findings of ``rule_id`` (severity, position) on case ``kind`` (fail or pass) of that id."""
    case = FIXTURES / rule_id / kind
    stage = CATALOGUE[rule_id].stage
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    if stage == "verify":
        return run_verify_case(case, rule_id, root, request)
    if stage == "change set":
        return run_changeset_case(case, rule_id, root, monkeypatch)
    if stage == "audit":
        return run_audit_case(case, rule_id, root, monkeypatch)
    return run_fleet_case(case, rule_id, root)


def _expected(rule_id: str) -> list[Position]:
    rows = yaml.safe_load((FIXTURES / rule_id / "fail" / "expect.yaml").read_text(encoding="utf-8")) or []
    return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]


def _write_expected(rule_id: str, got: list[Position]) -> None:
    lines = [f"# Findings of {rule_id} on this case: [file, line, column], in report order."]
    lines += [f"- [{file}, {line}, {column}]" for file, line, column in got]
    (FIXTURES / rule_id / "fail" / "expect.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_every_catalogue_id_has_cases() -> None:
    missing_pass = sorted(set(CATALOGUE) - set(PASSING))
    missing_fail = sorted(set(CATALOGUE) - set(FAILING) - set(NO_FAILING_CASE))
    assert missing_pass == [] and missing_fail == [], f"no pass case: {missing_pass}; no fail case: {missing_fail}"
    assert set(CASE_IDS) <= set(CATALOGUE), sorted(set(CASE_IDS) - set(CATALOGUE))
    for rule_id in FAILING:
        assert (FIXTURES / rule_id / "fail" / "expect.yaml").is_file(), rule_id


def test_no_failing_case_list_is_true() -> None:
    """An id on the allow-list has no failing case (add the case and drop the id from the list)."""
    assert set(NO_FAILING_CASE) <= set(CATALOGUE)
    assert not set(NO_FAILING_CASE) & set(FAILING)


def test_base_fleet_is_clean(tmp_path: Path) -> None:
    result = lint_fleet(BASE_REPO / "fleet", tmp_path / "no-policies")
    assert result.usable
    assert result.findings == [], [(f.rule_id, f.message) for f in result.findings]


@pytest.mark.parametrize("rule_id", FAILING)
def test_failing_case(rule_id: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    got = run_case(rule_id, "fail", tmp_path / "repo", request)
    if UPDATE:
        _write_expected(rule_id, [position for _, position in got])
    assert got, f"{rule_id}: the failing case gives no {rule_id} finding"
    assert [position for _, position in got] == _expected(rule_id)
    assert {severity for severity, _ in got} == {CATALOGUE[rule_id].severity.value}


@pytest.mark.parametrize("rule_id", PASSING)
def test_passing_case(rule_id: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    assert run_case(rule_id, "pass", tmp_path / "repo", request) == []
