"""Rules declared ``per_cluster`` judge each cluster alone, and lint re-judges only the clusters whose file (or
fleet.yaml, the rules' parameters) changed, with the findings of a run that judges everything."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuspec.findings import Finding
from gpuspec.loader.fleetload import load_fleet
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.pipeline.lint import default_as_of, lint_fleet
from gpuspec.policy.load import load_policy
from gpuspec.rules import percluster
from gpuspec.rules.base import RuleContext
from gpuspec.rules.registry import RULES
from rules.harness import EXAMPLE_FLEET, EXAMPLE_POLICIES, FIXTURES, build_fleet

PER_CLUSTER = {rule_id: rule for rule_id, rule in RULES.items() if rule.per_cluster}


def _fleet_cases() -> list[Path]:
    """Every failing and passing case of a fleet-stage rule laid over the fixture base (and the example fleet)."""
    cases = [c for c in sorted(FIXTURES.glob("GS*/*")) if (c / "fleet").is_dir() and not (c / "case.yaml").exists()]
    return [EXAMPLE_FLEET.parent, *cases]


def _alone(fleet: Fleet, cluster: Cluster) -> Fleet:
    return Fleet.model_construct(settings=fleet.settings, clusters=[cluster], settings_file=fleet.settings_file,
                                 root=fleet.root)


def test_the_per_cluster_rules_are_the_ones_that_read_one_cluster() -> None:
    """The declaration is a list a reviewer can check against each rule's code (cross-cluster and fleet.yaml
    rules stay whole-fleet: mirrors, credentials, team declarations and reachability)."""
    assert len(PER_CLUSTER) == 39
    whole = {rule_id for rule_id, rule in RULES.items() if not rule.per_cluster and type(rule).__name__ != "MatrixView"}
    assert whole == {"GS401", "GS402", "GS403", "GS405", "GS611", "GS612"}


def test_each_per_cluster_rule_finds_in_a_fleet_what_it_finds_in_each_cluster_alone(tmp_path: Path) -> None:
    """On the example fleet and every fleet-stage fixture, a per-cluster rule judged on the whole fleet finds the
    problems it finds in each cluster alone, in fleet order, and only in that cluster's file."""
    checked = 0
    for index, case in enumerate(_fleet_cases()):
        if case == EXAMPLE_FLEET.parent:
            fleet_dir, policies = EXAMPLE_FLEET, EXAMPLE_POLICIES
        else:
            fleet_dir = build_fleet(tmp_path / str(index), case)
            policies = case / "policies" if (case / "policies").is_dir() else tmp_path / "no-policies"
        load = load_fleet(fleet_dir)
        if load.fleet is None:
            continue
        fleet = load.fleet
        policy = load_policy(policies, fleet.settings.policy.packs)
        if not policy.usable:
            continue
        as_of = policy.as_of or default_as_of()
        for rule_id, rule in PER_CLUSTER.items():
            params = policy.rules[rule_id].params
            whole = list(rule.check(RuleContext(fleet=fleet, params=params, as_of=as_of, raw=load.raw)))
            one_by_one = []
            for cluster in fleet.clusters:
                found = list(rule.check(RuleContext(fleet=_alone(fleet, cluster), params=params, as_of=as_of,
                                                    raw=load.raw)))
                assert all(p.file == cluster.source_file for p in found), (case, rule_id)
                one_by_one += found
            assert whole == one_by_one, (case, rule_id)
            checked += bool(whole)
    assert checked >= 30  # the failing cases exercise most per-cluster rules


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE_FLEET, root / "fleet")
    shutil.copytree(EXAMPLE_POLICIES, root / "policies")
    (root / ".git").mkdir()
    return root


def _judged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The clusters the per-cluster rules judge from now on (by name), in order."""
    judged: list[str] = []
    real = percluster._judge

    def spy(fleet: Fleet, cluster: Cluster, *args: object) -> object:
        judged.append(cluster.name)
        return real(fleet, cluster, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(percluster, "_judge", spy)
    return judged


def _uncached(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[Finding]:
    with monkeypatch.context() as m:
        m.setenv("GPUSPEC_NO_CACHE", "1")
        return lint_fleet(root / "fleet", root / "policies").findings


def test_after_an_edit_only_that_cluster_is_judged_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    judged = _judged(monkeypatch)
    first = lint_fleet(root / "fleet", root / "policies").findings
    assert sorted(judged) == ["infer-north", "train-east"]
    assert first == _uncached(root, monkeypatch)

    east = root / "fleet" / "clusters" / "train-east.yaml"
    text = east.read_text()
    assert "\n  namespace: gpu-operator\n" in text
    east.write_text(text.replace("\n  namespace: gpu-operator\n", "\n  namespace: default\n", 1))
    judged.clear()
    after = lint_fleet(root / "fleet", root / "policies").findings
    assert judged == ["train-east"]
    assert any(f.rule_id == "GS601" and f.file.endswith("train-east.yaml") for f in after)
    assert after == _uncached(root, monkeypatch)

    judged.clear()
    assert lint_fleet(root / "fleet", root / "policies").findings == after and judged == []


def test_fleet_yaml_or_a_rule_parameter_changed_judges_every_cluster_again(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    judged = _judged(monkeypatch)
    lint_fleet(root / "fleet", root / "policies")
    settings = root / "fleet" / "fleet.yaml"
    settings.write_text(settings.read_text() + "\n# edited\n")
    judged.clear()
    lint_fleet(root / "fleet", root / "policies")
    assert sorted(judged) == ["infer-north", "train-east"]

    pack = next(p for p in sorted((root / "policies").glob("*.yaml")))
    pack.write_text(pack.read_text() + "\n# edited, no rule changed\n")
    judged.clear()
    lint_fleet(root / "fleet", root / "policies")
    assert judged == [], "a pack edit that changes no rule's parameters keeps every cluster's problems"


def test_a_rule_that_raises_on_one_cluster_is_reported_and_nothing_of_that_cluster_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    rule = PER_CLUSTER["GS601"]
    real = type(rule).check

    def broken(self: object, ctx: RuleContext):  # type: ignore[no-untyped-def]
        if any(c.name == "train-east" for c in ctx.fleet.clusters):
            raise RuntimeError("boom")
        return real(self, ctx)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(type(rule), "check", broken)
        crashed = lint_fleet(root / "fleet", root / "policies").findings
    assert [f.message for f in crashed if f.rule_id == "GS000"] == ["rule GS601 failed: RuntimeError: boom"]
    judged = _judged(monkeypatch)
    again = lint_fleet(root / "fleet", root / "policies").findings
    assert judged == ["train-east"]
    assert again == _uncached(root, monkeypatch)
