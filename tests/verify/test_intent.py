"""The intent check on its own: values against objects, as the API server stores them (CRD defaults applied)."""

from __future__ import annotations

from typing import Any

from gpuspec.matrix.chartintent import ChartIntent, FieldSource
from gpuspec.verify.checks import Origin
from gpuspec.verify.intent import check_intent
from gpuspec.verify.manifests import Manifest
from gpuspec.verify.schemas import CrdSet

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "things.example.com"},
    "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Cluster",
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "limit": {"x-kubernetes-int-or-string": True, "default": "25%"},
                     "name": {"type": "string"}, "on": {"type": "boolean"}}}}}}}]},
}
INTENT = ChartIntent(
    release="v0.0.1", reference="test", reads={"a": "templates/thing.yaml:1"},
    fields=(
        FieldSource("a.limit", "Thing", "spec.limit", "templates/thing.yaml:5", guards=(".Values.a.limit",)),
        FieldSource("a.name", "Thing", "spec.name", "templates/thing.yaml:6", guards=(".Values.a.name",)),
        FieldSource("a.on", "Thing", "spec.on", "templates/thing.yaml:7"),
        FieldSource("a.renamed", "Thing", "spec.renamed", "templates/thing.yaml:8"),
    ),
)


def _check(values: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}
    findings = check_intent(values, {}, [Manifest(obj)], CrdSet([CRD]), "v0.0.1", Origin("values.yaml"),
                            intent=INTENT)
    return [f"{f.rule_id}: {f.message}" for f in findings]


def test_an_empty_value_left_out_is_carried_unless_the_crd_defaults_it() -> None:
    assert _check({"a": {"name": "", "on": False}}, {"on": False}) == []
    got = _check({"a": {"limit": 0}}, {})  # the API server stores the CRD's 25%, not 0
    assert len(got) == 1 and "a.limit is 0, but Thing spec.limit is '25%'" in got[0]


def test_a_value_the_object_does_not_carry_names_the_template_line() -> None:
    got = _check({"a": {"on": True, "renamed": "x"}}, {"on": False, "other": "x"})
    assert got[0].startswith("GS930: a.on is true, but Thing spec.on is false (templates/thing.yaml:7")
    assert "a.renamed is 'x', but Thing spec.renamed is absent: templates/thing.yaml:8" in got[1]


def test_a_key_no_template_reads_is_gs931() -> None:
    got = _check({"b": {"c": 1}}, {})
    assert got == ["GS931: values key b.c is read by no template of the GPU Operator chart v0.0.1; helm keeps it "
                   "and nothing uses it"]
