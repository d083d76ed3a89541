"""Every finding id has a failing and a passing case in one layout, run by one runner per stage kind.

Layout: ``tests/rules/fixtures/<ID>/fail/`` and ``.../pass/``. A case folder is laid over a base repository:

* fleet stages (lint engine, validate, support matrix, packs): files under ``fleet/`` and ``policies/`` over
  ``fixtures/_base``, then the validate pipeline (validate ids) or the lint pipeline (the others);
* change set (GS8xx): ``base/`` is laid over ``_base`` and committed, ``head/`` over that in the working tree,
  then ``gpuspec lint --base HEAD``;
* audit: ``nodes.json`` (and ``clusterpolicies.json``) against the audit fleet of ``tests/audit/fixtures``;
* verify: ``fleet/`` and ``rendered/`` files over the verify fixture repository, checked against the mini chart.

An id may have more failing or passing cases: ``fail-<variant>/``, ``pass-<variant>/``. A fleet-stage case with
``case.yaml`` saying ``base: example`` is laid over the example fleet (``fleet/``, ``policies/``) instead; a
change-set case with ``base: plan`` over the plan tests' fixture fleet (with a default pack and a rendered file).

``expect.yaml`` of a failing case lists its findings of that id as ``[file, line, column]`` (relative to the
repository root), in report order, optionally with a fourth item: a text (or list of texts) the message must
contain; a passing case has none of that id. Validate ids also run ``gpuspec validate`` and check its exit
code and ``file:line:col`` lines.
``GPUSPEC_UPDATE_GOLDEN=1`` rewrites expect.yaml (positions only; message texts are kept by hand).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from audit.audit_cli import run_gpuspec
from plan.helpers import DEFAULT_PACK, GIT_ENV
from plan.helpers import FIXTURE_FLEET as PLAN_FLEET

from gpuspec.catalogue import CATALOGUE
from gpuspec.findings import Finding
from gpuspec.loader.positions import locate_findings
from gpuspec.pipeline.lint import lint_fleet
from gpuspec.pipeline.validate import validate_fleet
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
    "GS811": "every transition rule of the shipped GPU Operator CRDs is in gpuspec's CEL subset "
             "(tests/kube/test_immutable.py gives one that is not)",
}

Position = tuple[str, int, int]
#: A finding of a case: severity, position, message.
Got = tuple[str, Position, str]
SKIP_FILES = frozenset({"expect.yaml", "case.yaml"})

CASE_IDS = sorted(d.name for d in FIXTURES.iterdir() if d.is_dir() and not d.name.startswith("_"))


def _cases(prefix: str) -> list[str]:
    """``ID/fail``, ``ID/fail-variant``, ... for every id (or ``pass``)."""
    return [f"{i}/{d.name}" for i in CASE_IDS for d in sorted((FIXTURES / i).iterdir())
            if d.is_dir() and (d.name == prefix or d.name.startswith(prefix + "-"))]


FAILING = _cases("fail")
PASSING = _cases("pass")


def _overlay(source: Path, target: Path, skip: frozenset[str] = SKIP_FILES) -> None:
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


def _from_lint(findings: list[Finding], rule_id: str, root: Path) -> list[Got]:
    return [(f.severity.value, (_relative(f.file, root), f.line or 0, f.column or 0), f.message)
            for f in findings if f.rule_id == rule_id]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV, "HOME": str(root.parent)},
                   capture_output=True, check=True)


def _case_options(case: Path) -> dict[str, str]:
    path = case / "case.yaml"
    options = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    assert set(options) <= {"base"} and options.get("base", "fixture") in ("fixture", "example", "plan"), options
    return dict(options)


def _base_repository(case: Path, root: Path) -> None:
    """Lay the case's base repository at ``root``: the fixture base, the example fleet or the plan fixture fleet."""
    base = _case_options(case).get("base", "fixture")
    if base == "example":
        root.mkdir(parents=True)
        shutil.copytree(REPO_ROOT / "fleet", root / "fleet")
        shutil.copytree(REPO_ROOT / "policies", root / "policies")
    elif base == "plan":
        shutil.copytree(PLAN_FLEET, root / "fleet")
        (root / "policies").mkdir()
        (root / "policies" / "default.yaml").write_text(DEFAULT_PACK, encoding="utf-8")
        rendered = root / "rendered" / "clusters" / "train-east"
        rendered.mkdir(parents=True)
        (rendered / "gpu-operator.values.yaml").write_text("driver:\n  enabled: true\n", encoding="utf-8")
    else:
        shutil.copytree(BASE_REPO, root)


def run_fleet_case(case: Path, rule_id: str, root: Path) -> list[Got]:
    """Validate (validate ids) or lint (the others) the base fleet, or the example fleet, with the case laid over it."""
    _base_repository(case, root)
    _overlay(case, root)
    if CATALOGUE[rule_id].stage == "validate":
        return _from_lint(locate_findings(validate_fleet(root / "fleet", root / "policies").findings), rule_id, root)
    return _from_lint(lint_fleet(root / "fleet", root / "policies").findings, rule_id, root)


def check_validate_cli(rule_id: str, root: Path, expected: list[Position]) -> None:
    """`gpuspec validate` on the case: exit 2 for input errors, else 1; each finding on its file:line:col line."""
    result = run_gpuspec("validate", "fleet", "--policies", "policies", cwd=root) if (root / "policies").is_dir() \
        else run_gpuspec("validate", "fleet", cwd=root)
    assert result.code == (2 if CATALOGUE[rule_id].input_error else 1), result.out + result.err
    severity = CATALOGUE[rule_id].severity.value
    for file, line, column in expected:
        assert f"{file}:{line}:{column}: {severity} {rule_id}" in result.out, result.out


def run_changeset_case(case: Path, rule_id: str, root: Path, monkeypatch: pytest.MonkeyPatch) -> list[Got]:
    """Commit the base repository + ``base/``, lay ``head/`` over the working tree, lint against HEAD."""
    _base_repository(case, root)
    _overlay(case / "base", root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    _overlay(case / "head", root)
    monkeypatch.chdir(root)
    result = lint_fleet(Path("fleet"), Path("policies"), base_rev="HEAD")
    return _from_lint(result.findings, rule_id, root)


def run_audit_case(case: Path, rule_id: str, root: Path) -> list[Got]:
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
    return [(f["severity"], (_relative(f["file"], root), f["line"] or 0, f["column"] or 0), f["message"])
            for f in doc["findings"] if f["ruleId"] == rule_id]


def run_verify_case(case: Path, rule_id: str, root: Path, request: pytest.FixtureRequest) -> list[Got]:
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


def run_case(case_name: str, root: Path, request: pytest.FixtureRequest) -> list[Got]:
    """The findings of the case's id (severity, position, message) on case ``ID/fail...`` or ``ID/pass...``."""
    rule_id = case_name.split("/")[0]
    case = FIXTURES / case_name
    stage = CATALOGUE[rule_id].stage
    if stage == "verify":
        return run_verify_case(case, rule_id, root, request)
    if stage == "change set":
        return run_changeset_case(case, rule_id, root, request.getfixturevalue("monkeypatch"))
    if stage == "audit":
        return run_audit_case(case, rule_id, root)
    return run_fleet_case(case, rule_id, root)


def _expected(case_name: str) -> list[tuple[Position, list[str]]]:
    """Rows of expect.yaml: the position and the texts the message must contain (a fourth item: text or list)."""
    rows = yaml.safe_load((FIXTURES / case_name / "expect.yaml").read_text(encoding="utf-8")) or []
    out = []
    for r in rows:
        texts = r[3] if len(r) > 3 else []
        out.append(((str(r[0]), int(r[1]), int(r[2])), [texts] if isinstance(texts, str) else list(texts)))
    return out


def _write_expected(case_name: str, got: list[Position]) -> None:
    rule_id = case_name.split("/")[0]
    path = FIXTURES / case_name / "expect.yaml"
    if path.is_file() and any(texts for _, texts in _expected(case_name)):
        return  # message texts are written by hand: update those by hand too
    lines = [f"# Findings of {rule_id} on this case: [file, line, column], in report order."]
    lines += [f"- [{file}, {line}, {column}]" for file, line, column in got]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_every_catalogue_id_has_cases() -> None:
    ids_failing = {c.split("/")[0] for c in FAILING}
    ids_passing = {c.split("/")[0] for c in PASSING}
    missing_pass = sorted(set(CATALOGUE) - ids_passing)
    missing_fail = sorted(set(CATALOGUE) - ids_failing - set(NO_FAILING_CASE))
    assert missing_pass == [] and missing_fail == [], f"no pass case: {missing_pass}; no fail case: {missing_fail}"
    assert set(CASE_IDS) <= set(CATALOGUE), sorted(set(CASE_IDS) - set(CATALOGUE))
    for case_name in FAILING:
        assert (FIXTURES / case_name / "expect.yaml").is_file(), case_name


def test_no_failing_case_list_is_true() -> None:
    """An id on the allow-list has no failing case (add the case and drop the id from the list)."""
    assert set(NO_FAILING_CASE) <= set(CATALOGUE)
    assert not set(NO_FAILING_CASE) & {c.split("/")[0] for c in FAILING}


def test_base_fleet_is_clean(tmp_path: Path) -> None:
    result = lint_fleet(BASE_REPO / "fleet", tmp_path / "no-policies")
    assert result.usable
    assert result.findings == [], [(f.rule_id, f.message) for f in result.findings]


@pytest.mark.parametrize("case_name", FAILING)
def test_failing_case(case_name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    rule_id = case_name.split("/")[0]
    root = tmp_path / "repo"
    got = run_case(case_name, root, request)
    if UPDATE:
        _write_expected(case_name, [position for _, position, _ in got])
    assert got, f"{case_name}: the failing case gives no {rule_id} finding"
    expected = _expected(case_name)
    assert [position for _, position, _ in got] == [position for position, _ in expected]
    for (_, _, message), (_, texts) in zip(got, expected, strict=True):
        assert all(text in message for text in texts), (texts, message)
    assert {severity for severity, _, _ in got} == {CATALOGUE[rule_id].severity.value}
    if CATALOGUE[rule_id].stage == "validate":
        check_validate_cli(rule_id, root, [position for position, _ in expected])


@pytest.mark.parametrize("case_name", PASSING)
def test_passing_case(case_name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    assert run_case(case_name, tmp_path / "repo", request) == []
