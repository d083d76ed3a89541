"""Names, labels and selectors as apimachinery v0.35.2 validates them (gpuspec.kube.syntax / objects)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuspec.kube import objects, syntax


@pytest.mark.parametrize(("value", "ok"), [
    ("a" * 63, True), ("a" * 64, False), ("", True), ("MyValue", True), ("my_value.1", True),
    ("-start", False), ("end-", False), ("has space", False), ("a/b", False),
])
def test_label_values(value: str, ok: bool) -> None:
    assert (syntax.label_value(value) == []) is ok, syntax.label_value(value)


@pytest.mark.parametrize(("key", "ok"), [
    ("nvidia.com/gpu.product", True), ("example.com/" + "n" * 63, True), ("example.com/" + "n" * 64, False),
    ("Example.com/x", False), ("/x", False), ("a/b/c", False), ("plain", True), ("x" * 64, False),
    ("example.com/", False),
])
def test_label_keys(key: str, ok: bool) -> None:
    assert (syntax.label_key(key) == []) is ok, syntax.label_key(key)


def test_name_formats_per_kind() -> None:
    assert syntax.dns1123_label("a" * 63) == [] and syntax.dns1123_label("a" * 64)
    assert syntax.dns1123_subdomain("a.b-c") == [] and syntax.dns1123_subdomain("A")
    assert syntax.dns1123_subdomain("a" * 253) == [] and syntax.dns1123_subdomain("a" * 254)
    assert syntax.dns1035_label("1abc") and syntax.dns1035_label("abc1") == []
    assert syntax.path_segment("gpuspec:viewers") == [] and syntax.path_segment("a/b")
    assert objects.name_rule("v1", "Service")[0] == "dns1035-label"
    assert objects.name_rule("v1", "Namespace")[0] == "dns1123-label"
    assert objects.name_rule("rbac.authorization.k8s.io/v1", "ClusterRole")[0] == "path-segment"
    assert objects.name_rule("nvidia.com/v1alpha1", "NVIDIADriver")[0] == "dns1123-subdomain"


def _codes(obj: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...]]]:
    return [(p.code, p.path) for p in objects.check_object(obj)]


def test_rbac_names_may_carry_colons_but_services_may_not_start_with_a_digit() -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "gpuspec:view"}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1-metrics", "namespace": "gpu-operator"}}
    assert _codes(role) == []
    assert _codes(service) == [("name", ("metadata", "name"))]


def test_selector_rules() -> None:
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p", "namespace": "n"},
           "spec": {"selector": {"matchExpressions": [
               {"key": "app", "operator": "Exists", "values": ["x"]},
               {"key": "tier", "operator": "In", "values": []},
               {"key": "zone", "operator": "Near", "values": ["a"]},
               {"key": "ok", "operator": "NotIn", "values": ["a" * 64]},
           ]}}}
    assert _codes(pdb) == [
        ("selector", ("spec", "selector", "matchExpressions", 0, "values")),
        ("selector", ("spec", "selector", "matchExpressions", 1, "values")),
        ("selector", ("spec", "selector", "matchExpressions", 2, "operator")),
        ("selector", ("spec", "selector", "matchExpressions", 3, "values", 0)),
    ]


def test_node_selector_of_a_custom_resource_is_checked_as_labels() -> None:
    driver = {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "pool-a"},
              "spec": {"nodeSelector": {"example.com/pool": "x" * 64}}}
    assert _codes(driver) == [("selector", ("spec", "nodeSelector", "example.com/pool"))]


def test_reserved_names_and_values() -> None:
    system = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-x"},
              "value": 10}
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "x"},
            "value": 1_000_000_001}
    ok = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "x"},
          "value": 1_000_000_000}
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": "a", "labels": {"kubernetes.io/metadata.name": "b"}}}
    assert _codes(system) == [("reserved", ("metadata", "name"))]
    assert _codes(high) == [("reserved", ("value",))]
    assert _codes(ok) == []
    assert _codes(namespace) == [("reserved", ("metadata", "labels", "kubernetes.io/metadata.name"))]


def test_workload_selector_must_match_its_template_and_not_be_empty() -> None:
    def daemonset(selector: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d", "namespace": "n"},
                "spec": {"selector": selector, "template": {"metadata": {"labels": labels}}}}

    assert _codes(daemonset({"matchLabels": {"app": "a"}}, {"app": "a", "x": "y"})) == []
    assert _codes(daemonset({"matchExpressions": [{"key": "app", "operator": "In", "values": ["b"]}]},
                            {"app": "a"})) == [("selector", ("spec", "template", "metadata", "labels"))]
    assert _codes(daemonset({}, {"app": "a"})) == [("selector", ("spec", "selector"))]
    assert _codes(daemonset({"matchLabels": {}}, {"app": "a"})) == [("selector", ("spec", "selector"))]


def test_annotations_total_size() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "namespace": "n", "annotations": {"a": "x" * (256 * 1024)}}}
    assert _codes(obj) == [("label", ("metadata", "annotations"))]


def test_a_crd_schema_is_not_read_as_selectors() -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"versions": [{"schema": {"openAPIV3Schema": {"properties": {
               "nodeSelector": {"type": "string", "description": "Node labels, as in a pod spec"}}}}}]}}
    assert _codes(crd) == []


@pytest.mark.parametrize(("key", "ok"), [
    ("example.com/pool", True), ("nvidia.com/gpu.product", True), ("kubernetes.io/hostname", True),
    ("node.kubernetes.io/instance-type", True), ("gpu.node.kubernetes.io/pool", True),
    ("kubelet.kubernetes.io/x", True), ("topology.kubernetes.io/zone", True),
    ("node-role.kubernetes.io/gpu", False), ("node-restriction.kubernetes.io/pool", False),
    ("kubernetes.io/role", False), ("example.k8s.io/pool", False), ("plain", True),
])
def test_labels_a_kubelet_may_set_on_its_node(key: str, ok: bool) -> None:
    assert objects.kubelet_may_set(key) is ok
