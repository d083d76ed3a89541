"""The real upstream CRDs (../shared/upstream): transition-rule data, the CEL subset, rules on real objects."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.kube import cel
from gpuspec.kube.crdrules import FAILED, evaluate_rules
from gpuspec.kube.immutable import refused_updates, shipped_transition_rules, transition_rules_of_crd


@pytest.fixture(scope="module")
def upstream(shared_dir: Path) -> Path:
    """../shared/upstream."""
    return shared_dir / "upstream"


#: libyaml's safe loader where PyYAML has it: the pure-Python one took half a minute over ../shared/upstream.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _crds(folder: Path) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition below ``folder`` (read once per test session; tests only read them)."""
    out = []
    for path in sorted(folder.rglob("*.yaml")):
        for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_LOADER):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                out.append(doc)
    return out


def _key(rule: Any) -> tuple[Any, ...]:
    return (rule.group, rule.kind, rule.path, rule.rule, rule.message, repr(rule.default))


def test_shipped_transition_rules_are_those_of_every_release_crds(upstream: Path) -> None:
    releases = sorted(p.name for p in (upstream / "gpu-operator").iterdir() if (p / "crds").is_dir())
    assert len(releases) >= 8
    for release in releases:
        found = {_key(r) for crd in _crds(upstream / "gpu-operator" / release / "crds")
                 for r in transition_rules_of_crd(crd)}
        shipped = {_key(r) for r in shipped_transition_rules() if release in r.releases}
        assert found == shipped, release


def test_every_upstream_rule_is_in_the_subset(upstream: Path) -> None:
    rules: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            rules.extend(v["rule"] for v in node.get("x-kubernetes-validations") or [] if "rule" in v)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for crd in _crds(upstream):
        walk(crd)
    assert len(rules) >= 20
    for rule in rules:
        cel.parse(rule)  # raises Unsupported otherwise


def _schema(upstream: Path, release: str, kind: str) -> dict[str, Any]:
    for crd in _crds(upstream / "gpu-operator" / release / "crds"):
        if crd["spec"]["names"]["kind"] == kind:
            schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            return schema
    raise AssertionError(kind)


def test_real_nvidiadriver_rules_on_real_objects(upstream: Path) -> None:
    schema = _schema(upstream, "v26.7.0", "NVIDIADriver")
    spec: dict[str, Any] = {"default": False, "driverType": "gpu", "image": "driver", "nodeSelector": {"pool": "a"}}
    pool = {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "a100"}, "spec": spec}
    bad = {**pool, "spec": {**spec, "default": True}}
    assert evaluate_rules(pool, schema) == []
    outcomes = evaluate_rules(bad, schema)
    assert [(o.status, o.path, o.message) for o in outcomes] == [
        (FAILED, ("spec",), "default NVIDIADriver must not use nodeSelector")]


def test_real_gpucluster_singleton_rule(upstream: Path) -> None:
    schema = _schema(upstream, "v26.7.0", "GPUCluster")
    other = {"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUCluster", "metadata": {"name": "mine"}, "spec": {}}
    named = {**other, "metadata": {"name": "gpu-cluster"}}
    assert [o.status for o in evaluate_rules(other, schema)] == [FAILED]
    assert evaluate_rules(named, schema) == []


def test_real_crd_transition_rule_refuses_the_switch(upstream: Path) -> None:
    crd = next(c for c in _crds(upstream / "gpu-operator" / "v26.7.0" / "crds")
               if c["spec"]["names"]["kind"] == "NVIDIADriver")
    rules = transition_rules_of_crd(crd)
    old = {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "p"},
           "spec": {"usePrecompiled": False}}
    new = {**old, "spec": {"usePrecompiled": True}}
    refused = refused_updates(old, new, rules)
    assert [(r.path, r.verified) for r in refused] == [(("spec", "usePrecompiled"), True)]
    assert "usePrecompiled is an immutable field" in refused[0].message


def test_shipped_crd_defaults_are_those_of_every_release_crds(upstream: Path) -> None:
    from gpuspec.kube.crddefaults import defaults_of_crd, shipped_defaults

    releases = sorted(p.name for p in (upstream / "gpu-operator").iterdir() if (p / "crds").is_dir())
    for release in releases:
        found = {(kind, path, repr(default)) for crd in _crds(upstream / "gpu-operator" / release / "crds")
                 for kind, path, default in defaults_of_crd(crd) if kind in ("ClusterPolicy", "NVIDIADriver")}
        shipped = {(d.kind, d.path, repr(d.default)) for d in shipped_defaults() if release in d.releases}
        assert found == shipped, f"{release}: run scripts/refresh-crd-defaults"


def test_crd_defaults_fill_absent_fields_under_present_parents() -> None:
    from gpuspec.kube.crddefaults import defaulted, release_of

    obj = {"spec": {"driver": {"upgradePolicy": {"drain": {}}}, "migManager": {"config": {"name": ""}}}}
    stored = defaulted(obj, "ClusterPolicy", "v24.9.2")
    drain = stored["spec"]["driver"]["upgradePolicy"]["drain"]
    assert drain == {"deleteEmptyDir": False, "enable": False, "force": False, "timeoutSeconds": 300}
    assert stored["spec"]["migManager"]["config"] == {"name": "", "default": "all-disabled"}  # "" is a value
    assert "toolkit" not in stored["spec"] and obj["spec"]["driver"]["upgradePolicy"]["drain"] == {}
    assert (release_of("v24.9.1"), release_of("v24.9.2"), release_of("v24.12.0")) == ("v24.9.2", "v24.9.2", "v24.9.2")
