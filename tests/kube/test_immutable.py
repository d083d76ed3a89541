"""Updates the API server refuses: built-in immutable fields and CRD transition rules."""

from __future__ import annotations

from typing import Any

from gpuspec.kube.immutable import TransitionRule, refused_updates, rules_for_release


def _paths(old: dict[str, Any], new: dict[str, Any], rules: list[TransitionRule] | None = None) -> list[Any]:
    return [(r.path, r.before, r.after, r.verified) for r in refused_updates(old, new, rules or [])]


def _job(image: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "n"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}


def test_job_template_is_immutable() -> None:
    assert [p for p, *_ in _paths(_job("a:1"), _job("a:2"))] == [("spec", "template")]
    assert _paths(_job("a:1"), _job("a:1")) == []


def test_configmap_data_is_immutable_only_once_immutable() -> None:
    def cm(data: str, immutable: bool | None) -> dict[str, Any]:
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": data}}
        if immutable is not None:
            obj["immutable"] = immutable
        return obj

    assert _paths(cm("a", None), cm("b", None)) == []
    assert _paths(cm("a", True), cm("b", True)) == [(("data",), {"k": "a"}, {"k": "b"}, True)]
    assert _paths(cm("a", True), cm("a", None)) == [(("immutable",), True, False, True)]
    assert _paths(cm("a", False), cm("a", True)) == []


def test_rolebinding_roleref_and_priorityclass_policy_with_its_default() -> None:
    def rb(role: str) -> dict[str, Any]:
        return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}}

    def pc(policy: str | None) -> dict[str, Any]:
        obj: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                               "metadata": {"name": "p"}, "value": 1}
        if policy:
            obj["preemptionPolicy"] = policy
        return obj

    assert [p for p, *_ in _paths(rb("a"), rb("b"))] == [("roleRef",)]
    assert _paths(pc(None), pc("PreemptLowerPriority")) == []
    assert [p for p, *_ in _paths(pc(None), pc("Never"))] == [("preemptionPolicy",)]


def test_service_cluster_ip_left_out_is_not_a_change() -> None:
    def svc(ip: str | None) -> dict[str, Any]:
        spec = {"clusterIP": ip} if ip else {}
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec}

    assert _paths(svc("10.0.0.1"), svc(None)) == []
    assert [p for p, *_ in _paths(svc("10.0.0.1"), svc("10.0.0.2"))] == [("spec", "clusterIP")]


def _driver(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "d"}, "spec": spec}


def test_shipped_transition_rules_refuse_a_use_precompiled_flip() -> None:
    rules = rules_for_release("v26.7.0")
    assert _paths(_driver(usePrecompiled=False), _driver(usePrecompiled=True), rules) == [
        (("spec", "usePrecompiled"), False, True, True)]
    assert _paths(_driver(usePrecompiled=True), _driver(usePrecompiled=True), rules) == []
    # driverType defaults to gpu: leaving it out equals gpu, vgpu is a change
    assert _paths(_driver(), _driver(driverType="gpu"), rules) == []
    assert [p for p, *_ in _paths(_driver(), _driver(driverType="vgpu"), rules)] == [("spec", "driverType")]
    # a transition rule runs only where the old object has the field
    assert _paths(_driver(), _driver(usePrecompiled=True), rules) == []


def test_an_unknown_release_uses_the_newest_rules() -> None:
    assert {(r.kind, r.path) for r in rules_for_release("v99.1.0")} == {
        (r.kind, r.path) for r in rules_for_release("v26.7.0")}
    assert ("ComputeDomain", ("spec",)) not in {(r.kind, r.path) for r in rules_for_release("v26.3.3")}


def test_a_rule_beyond_the_subset_is_reported_not_verified() -> None:
    rule = TransitionRule("nvidia.com", "NVIDIADriver", ("spec", "env"), "self.all(e, e in oldSelf)", "grow only")
    assert _paths(_driver(env=[1]), _driver(env=[1, 2]), [rule]) == [(("spec", "env"), [1], [1, 2], False)]


def test_transition_rules_on_list_items() -> None:
    rule = TransitionRule("nvidia.com", "NVIDIADriver", ("spec", "env", "*", "name"), "self == oldSelf", "fixed")
    old = _driver(env=[{"name": "A"}, {"name": "B"}])
    assert [p for p, *_ in _paths(old, _driver(env=[{"name": "A"}, {"name": "C"}]), [rule])] == [
        ("spec", "env", 1, "name")]
