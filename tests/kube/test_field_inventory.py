"""Every string field gpuspec renders has a consumer check or a free-text mark, and passes its check.

The fields come from the example fleet's rendered/, the render tests' golden trees (tests/render/golden) and the
fixture clusters of tests/kube/inventory.py (OpenShift, autoscaling, the coverage clusters of tests/render/fleets.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.kube.consumers import CHECKS, FieldRule, consumers, field_rules, rule_for
from gpuspec.kube.objects import check_object
from tests.kube.inventory import Field, all_fields


@pytest.fixture(scope="module")
def fields(tmp_path_factory: pytest.TempPathFactory) -> list[Field]:
    return all_fields(tmp_path_factory.mktemp("inventory"))


def test_every_rendered_string_field_has_a_consumer_or_is_free_text(fields: list[Field]) -> None:
    unmatched = sorted({f.key for f in fields if rule_for(f.key) is None})
    assert not unmatched, "fields without a consumer check or a free-text mark in " \
        "gpuspec/kube/data/rendered-fields.yaml:\n" + "\n".join(unmatched)


def test_every_rendered_value_passes_its_consumers_check(fields: list[Field]) -> None:
    wrong = []
    for f in fields:
        rule = rule_for(f.key)
        if rule is not None and (problems := rule.run(f.value, f.api_version, f.kind)):
            wrong.append(f"{f.where} {f.key} = {f.value[:60]!r}: {problems[0]}")
    assert not wrong, "\n".join(sorted(set(wrong))[:40])


def test_every_entry_is_used_and_well_formed(fields: list[Field]) -> None:
    used = {id(rule_for(f.key)) for f in fields}
    unused = [r.match for r in field_rules() if id(r) not in used]
    assert not unused, f"entries no rendered field matches (remove them or add the fixture that renders them): {unused}"
    for rule in field_rules():
        assert sum(x is not None for x in (rule.check, rule.tool, rule.free)) == 1, rule.match
        assert rule.consumer, rule.match
        if rule.check is not None:
            assert (rule.check == "enum" and rule.values) or (rule.check in CHECKS and rule.check in consumers()), rule


def test_the_inventory_refuses_a_field_nobody_reads() -> None:
    """A new field gets no entry by accident: an unknown key matches nothing; a wrong value fails its check."""
    assert rule_for("Job:spec.template.spec.schedulerName") is None
    rule = rule_for("NVIDIADriver:spec.upgradePolicy.drain.podSelector")
    assert isinstance(rule, FieldRule) and rule.run("app in prod", "nvidia.com/v1alpha1", "NVIDIADriver")


def test_every_rendered_object_passes_the_api_servers_checks(tmp_path: Path) -> None:
    import yaml

    from tests.kube.inventory import REPO
    problems = []
    for root in (REPO / "rendered", REPO / "tests" / "render" / "golden"):
        for file in sorted(root.rglob("*.yaml")):
            for doc in yaml.safe_load_all(file.read_text(encoding="utf-8")):
                if isinstance(doc, dict) and "kind" in doc and "metadata" in doc:
                    problems += [f"{file}: {p.message}" for p in check_object(doc)]
    assert not problems, "\n".join(problems)
