"""CRD and built-in schema validation against the real upstream CRDs and kubernetes-validate schemas."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.errors import GpuspecError
from gpuspec.verify.schemas import (
    INVALID,
    NO_SCHEMA,
    NOT_SERVED,
    CrdSet,
    json_path,
    kube_schema_version,
    openapi_to_jsonschema,
    shipped_kube_versions,
    validate_builtin,
    validate_object,
)

GPU_OPERATOR_TAGS = ["v23.9.2", "v24.3.0", "v24.6.2", "v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0"]


def _doc(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


CLUSTER_POLICY = _doc("""
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  operator: {defaultRuntime: containerd, runtimeClass: nvidia}
  daemonsets: {priorityClassName: system-node-critical, updateStrategy: RollingUpdate}
  mig: {strategy: mixed}
  driver:
    enabled: true
    repository: registry.example.com/nvidia
    image: driver
    version: "550.127.08"
    upgradePolicy:
      autoUpgrade: true
      maxParallelUpgrades: 1
      maxUnavailable: 25%
      drain: {enable: true, force: false, timeoutSeconds: 300, deleteEmptyDir: true}
  toolkit: {enabled: true, repository: registry.example.com/nvidia/k8s, image: container-toolkit, version: v1.14.6}
  devicePlugin:
    enabled: true
    repository: registry.example.com/nvidia
    image: k8s-device-plugin
    version: v0.14.5
    config: {name: time-slicing-config, default: any}
  dcgm: {enabled: false}
  dcgmExporter: {enabled: true, repository: registry.example.com/nvidia/k8s, image: dcgm-exporter, version: 3.3.5}
  gfd: {enabled: true}
  migManager:
    enabled: true
    config: {name: custom-mig-config, default: all-disabled}
  nodeStatusExporter: {enabled: false}
""")

NVIDIA_DRIVER = _doc("""
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata:
  name: h100-pool
spec:
  driverType: gpu
  repository: registry.example.com/nvidia
  image: driver
  version: "570.124.06"
  nodeSelector:
    gpuspec.io/pool: h100
""")

ARGO_APPLICATION = _doc("""
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: gpu-operator-train-east
  namespace: argocd
spec:
  project: gpu-platform
  source:
    repoURL: https://git.example.com/platform/gpu-fleet.git
    targetRevision: main
    path: rendered/clusters/train-east
  destination:
    server: https://train-east.example.com
    namespace: gpu-operator
  syncPolicy:
    automated: {prune: true, selfHeal: true}
    syncOptions: [CreateNamespace=true]
""")

FLUX_HELM_RELEASE = _doc("""
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: gpu-operator
  namespace: gpu-operator
spec:
  interval: 10m
  chart:
    spec:
      chart: gpu-operator
      version: v25.10.1
      sourceRef: {kind: HelmRepository, name: nvidia, namespace: flux-system}
  install:
    crds: CreateReplace
  upgrade:
    crds: CreateReplace
  valuesFrom:
    - kind: ConfigMap
      name: gpu-operator-values
""")

PROMETHEUS_RULE = _doc("""
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: gpu-alerts
  namespace: gpu-operator
spec:
  groups:
    - name: gpu.rules
      rules:
        - alert: GPUXidErrors
          expr: increase(DCGM_FI_DEV_XID_ERRORS[5m]) > 0
          for: 5m
          labels: {severity: warning}
          annotations: {summary: "XID errors on {{ $labels.Hostname }}"}
""")


@pytest.fixture(scope="module")
def gitops_crds(upstream_dir: Path) -> CrdSet:
    return CrdSet.from_paths(
        [upstream_dir / "argocd", upstream_dir / "flux", upstream_dir / "prometheus-operator"]
    )


def _errors(crds: CrdSet, obj: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e.code, e.path, e.message) for e in crds.validate(obj)]


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    node: Any = out
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = keys[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


# ---------------------------------------------------------------- GPU Operator CRDs


@pytest.mark.parametrize("tag", GPU_OPERATOR_TAGS)
def test_cluster_policy_valid_against_every_release(upstream_dir: Path, tag: str) -> None:
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / tag / "crds"])
    assert crds.validate(CLUSTER_POLICY) == []
    assert crds.validate(NVIDIA_DRIVER) == []


@pytest.mark.parametrize(
    ("path", "value", "where", "message"),
    [
        ("spec.mig.strategy", "both", "$.spec.mig.strategy", "is not one of"),
        ("spec.driver.upgradePolicy.maxParallelUpgrades", "two", "$.spec.driver.upgradePolicy.maxParallelUpgrades",
         "is not of type 'integer'"),
        ("spec.driver.upgradePolicy.maxUnavailable", True, "$.spec.driver.upgradePolicy.maxUnavailable",
         "is not of type 'integer', 'string'"),
        ("spec.devicePlugin.config.nmae", "x", "$.spec.devicePlugin.config", "'nmae' was unexpected"),
        ("spec.driver.enabled", "yes", "$.spec.driver.enabled", "is not of type 'boolean'"),
    ],
)
def test_cluster_policy_invalid(upstream_dir: Path, path: str, value: Any, where: str, message: str) -> None:
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v25.10.1" / "crds"])
    errors = crds.validate(_set(CLUSTER_POLICY, path, value))
    assert len(errors) == 1, errors
    error = errors[0]
    assert (error.code, error.path, error.kind, error.name) == (INVALID, where, "ClusterPolicy", "cluster-policy")
    assert message in error.message
    assert error.schema == "CRD clusterpolicies.nvidia.com v1"


def test_cluster_policy_missing_required(upstream_dir: Path) -> None:
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v25.10.1" / "crds"])
    obj = copy.deepcopy(CLUSTER_POLICY)
    del obj["spec"]["toolkit"]
    assert _errors(crds, obj) == [(INVALID, "$.spec", "'toolkit' is a required property")]


def test_nvidia_driver_invalid(upstream_dir: Path) -> None:
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v25.10.1" / "crds"])
    bad = _set(NVIDIA_DRIVER, "spec.driverType", "cuda")
    bad["spec"]["nodeSelector"]["gpuspec.io/count"] = 8
    bad["spec"]["kernelModuleType"] = "closed"
    assert [(e.path, e.message.split(" is ")[-1]) for e in crds.validate(bad)] == [
        ("$.spec.driverType", "not one of ['gpu', 'vgpu', 'vgpu-host-manager']"),
        ("$.spec.kernelModuleType", "not one of ['auto', 'open', 'proprietary']"),
        ("$.spec.nodeSelector['gpuspec.io/count']", "not of type 'string'"),
    ]


def test_required_fields_with_defaults_are_filled_first(upstream_dir: Path) -> None:
    # spec.image and spec.driverType are required but have defaults: the API server fills them in.
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v25.10.1" / "crds"])
    minimal = {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "d"}, "spec": {}}
    assert crds.validate(minimal) == []
    assert minimal["spec"] == {}  # the caller's object is not modified


def test_null_of_a_non_nullable_field_is_dropped_before_validation(upstream_dir: Path) -> None:
    # `name: {{ .Values.migManager.config.name }}` with the chart default "" (v24.9.2) writes `name: null`: the API
    # server drops a null whose schema is not nullable (then defaults it), it does not refuse the object.
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v24.9.2" / "crds"])
    assert crds.validate(_set(CLUSTER_POLICY, "spec.migManager.config.name", None)) == []
    driver = _set(NVIDIA_DRIVER, "spec.driverType", None)  # has a default: dropped, then defaulted
    assert crds.validate(driver) == []
    assert crds.defaulted(driver)["spec"]["driverType"] == "gpu"
    # A null is no value of a required field: the API server refuses that as missing.
    missing = _set(CLUSTER_POLICY, "spec.toolkit", None)
    assert _errors(crds, missing) == [(INVALID, "$.spec", "'toolkit' is a required property")]


def test_unknown_crd_version_and_kind(upstream_dir: Path) -> None:
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v25.10.1" / "crds"])
    wrong_version = _set(CLUSTER_POLICY, "apiVersion", "nvidia.com/v2")
    [error] = crds.validate(wrong_version)
    assert error.code == NO_SCHEMA and "has no version 'v2'" in error.message
    [error] = crds.validate({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}})
    assert error.code == NO_SCHEMA


def test_unserved_version_is_reported() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v0", "served": False, "storage": False,
                 "schema": {"openAPIV3Schema": {"type": "object"}}},
            ],
        },
    }
    crds = CrdSet([crd])
    [error] = crds.validate({"apiVersion": "example.com/v0", "kind": "Thing", "metadata": {"name": "x"}})
    assert error.code == NOT_SERVED


def test_v26_7_ships_more_crds(upstream_dir: Path) -> None:
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v26.7.0" / "crds"])
    assert ("nvidia.com", "ClusterPolicy") in crds.kinds()
    assert len(crds) >= 4


def test_crd_path_errors(tmp_path: Path) -> None:
    with pytest.raises(GpuspecError, match="not found"):
        CrdSet.from_paths([tmp_path / "missing"])
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: [unclosed\n")
    with pytest.raises(GpuspecError, match="cannot read CRD file"):
        CrdSet.from_paths([broken])


# ---------------------------------------------------------------- GitOps and monitoring CRDs


@pytest.mark.parametrize("obj", [ARGO_APPLICATION, FLUX_HELM_RELEASE, PROMETHEUS_RULE], ids=lambda o: o["kind"])
def test_gitops_objects_valid(gitops_crds: CrdSet, obj: dict[str, Any]) -> None:
    assert gitops_crds.validate(obj) == []


@pytest.mark.parametrize(
    ("obj", "path", "value", "where", "message"),
    [
        (ARGO_APPLICATION, "spec.syncPolicy.automated.prune", "yes", "$.spec.syncPolicy.automated.prune",
         "is not of type 'boolean'"),
        (ARGO_APPLICATION, "spec.destination.cluster", "x", "$.spec.destination", "'cluster' was unexpected"),
        (FLUX_HELM_RELEASE, "spec.install.crds", "Always", "$.spec.install.crds", "is not one of"),
        (FLUX_HELM_RELEASE, "spec.chart.spec.sourceRef.kind", "GitHub", "$.spec.chart.spec.sourceRef.kind",
         "is not one of"),
        (PROMETHEUS_RULE, "spec.groups.0.rules.0.expr", ["x"], "$.spec.groups[0].rules[0].expr",
         "is not of type 'integer', 'string'"),
        (PROMETHEUS_RULE, "spec.groups.0.rules.0.severity", "high", "$.spec.groups[0].rules[0]",
         "'severity' was unexpected"),
    ],
    ids=["argo-bool", "argo-unknown", "flux-enum", "flux-sourceref", "prom-expr-type", "prom-unknown"],
)
def test_gitops_objects_invalid(
    gitops_crds: CrdSet, obj: dict[str, Any], path: str, value: Any, where: str, message: str
) -> None:
    errors = gitops_crds.validate(_set(obj, path, value))
    assert [e.path for e in errors] == [where], errors
    assert message in errors[0].message


def test_argo_application_missing_required(gitops_crds: CrdSet) -> None:
    obj = copy.deepcopy(ARGO_APPLICATION)
    del obj["spec"]["destination"]
    assert _errors(gitops_crds, obj) == [(INVALID, "$.spec", "'destination' is a required property")]


# ---------------------------------------------------------------- built-in kinds


CONFIG_MAP = _doc("""
apiVersion: v1
kind: ConfigMap
metadata: {name: time-slicing-config, namespace: gpu-operator}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: 4
""")

RESOURCE_QUOTA = _doc("""
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota, namespace: team-a}
spec:
  hard:
    requests.nvidia.com/gpu: "8"
    limits.nvidia.com/gpu: 8
""")

NAMESPACE = _doc("""
apiVersion: v1
kind: Namespace
metadata:
  name: gpu-operator
  labels:
    pod-security.kubernetes.io/enforce: privileged
""")


@pytest.mark.parametrize("obj", [CONFIG_MAP, RESOURCE_QUOTA, NAMESPACE], ids=lambda o: o["kind"])
@pytest.mark.parametrize("kube", ["1.29", "1.31", "1.35"])
def test_builtin_valid(obj: dict[str, Any], kube: str) -> None:
    assert validate_builtin(obj, kube) == []


@pytest.mark.parametrize(
    ("obj", "path", "value", "where", "message"),
    [
        (CONFIG_MAP, "data.replicas", 4, "$.data.replicas", "is not of type 'string', 'null'"),
        (CONFIG_MAP, "spec", {}, "$", "'spec' was unexpected"),
    ],
    ids=["configmap-type", "configmap-unknown"],
)
def test_builtin_invalid(obj: dict[str, Any], path: str, value: Any, where: str, message: str) -> None:
    errors = validate_builtin(_set(obj, path, value), "1.31")
    assert [e.path for e in errors] == [where], errors
    assert message in errors[0].message
    assert errors[0].schema == "Kubernetes 1.31 schema"


def test_resource_quota_invalid() -> None:
    bad = copy.deepcopy(RESOURCE_QUOTA)
    bad["spec"]["hard"]["requests.nvidia.com/gpu"] = {"count": 8}
    bad["spec"]["scopes"] = "BestEffort"
    errors = validate_builtin(bad, "1.31")
    assert [e.path for e in errors] == ["$.spec.hard['requests.nvidia.com/gpu']", "$.spec.scopes"], errors


def test_namespace_invalid() -> None:
    bad = copy.deepcopy(NAMESPACE)
    bad["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = True
    bad["metadata"]["nmae"] = "typo"
    errors = validate_builtin(bad, "1.31")
    assert [e.path for e in errors] == ["$.metadata", "$.metadata.labels['pod-security.kubernetes.io/enforce']"]
    assert "'nmae' was unexpected" in errors[0].message


def test_nearest_schema_version() -> None:
    shipped = shipped_kube_versions()
    assert shipped[0] == "1.25" and "1.31" in shipped
    newest = shipped[-1]
    assert kube_schema_version("1.31").exact
    assert kube_schema_version("v1.31.4").used == "1.31"
    too_new = kube_schema_version("1.99")
    assert (too_new.used, too_new.exact) == (newest, False)
    assert too_new.describe() == f"Kubernetes {newest} (nearest shipped to 1.99)"
    # 1.9 is older than every shipped version: the oldest one is used (not a string comparison).
    assert kube_schema_version("1.9").used == "1.25"
    errors = validate_builtin(_set(CONFIG_MAP, "data.x", 1), "1.99")
    assert errors[0].schema == f"Kubernetes {newest} (nearest shipped to 1.99) schema"
    with pytest.raises(GpuspecError):
        kube_schema_version("latest")


def test_unknown_builtin_kind() -> None:
    [error] = validate_builtin({"apiVersion": "v1", "kind": "Gadget", "metadata": {"name": "g"}}, "1.31")
    assert error.code == NO_SCHEMA
    # A CRD-provided group that looks like a k8s.io one is not built in.
    [error] = validate_builtin(
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "g"}}, "1.31"
    )
    assert error.code == NO_SCHEMA


def test_validate_object_dispatch(upstream_dir: Path, gitops_crds: CrdSet) -> None:
    crds = CrdSet.from_paths([upstream_dir / "gpu-operator" / "v25.10.1" / "crds", upstream_dir / "argocd"])
    assert validate_object(CLUSTER_POLICY, crds=crds, kube_version="1.31") == []
    assert validate_object(ARGO_APPLICATION, crds=crds, kube_version="1.31") == []
    assert validate_object(CONFIG_MAP, crds=crds, kube_version="1.31") == []
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}},
                              "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": 3}]}}},
    }
    [error] = validate_object(deployment, crds=crds, kube_version="1.31")
    assert error.path == "$.spec.template.spec.containers[0].imagePullPolicy"
    [error] = validate_object(FLUX_HELM_RELEASE, crds=crds, kube_version="1.31")
    assert error.code == NO_SCHEMA and "no CRD loaded" in error.message
    [error] = validate_object({"metadata": {"name": "x"}}, crds=crds, kube_version="1.31")
    assert error.code == INVALID and "lacks apiVersion or kind" in error.message


# ---------------------------------------------------------------- OpenAPI conversion


def test_openapi_conversion_rules() -> None:
    import jsonschema

    schema = openapi_to_jsonschema({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "count": {"x-kubernetes-int-or-string": True,
                              "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "note": {"type": "string", "nullable": True},
                    "mode": {"type": "string", "enum": ["a", "b"], "nullable": True},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                             "properties": {"known": {"type": "integer"}}},
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                                 "x-kubernetes-preserve-unknown-fields": True},
                    "either": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                               "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
                    "listed": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                },
                "x-kubernetes-validations": [{"rule": "self.count > 0"}],
            },
        },
    })
    validator = jsonschema.Draft4Validator(schema)

    def errors(spec: dict[str, Any]) -> list[str]:
        obj = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n", "labels": {"a": "b"}}, "spec": spec}
        return sorted(json_path(e.absolute_path) for e in validator.iter_errors(obj))

    assert errors({"count": 3, "note": None, "mode": None, "listed": ["a"]}) == []
    assert errors({"count": "25%", "note": "n", "mode": "a"}) == []
    assert errors({"count": 1.5}) == ["$.spec.count"]
    assert errors({"mode": "c"}) == ["$.spec.mode"]
    assert errors({"unknown": 1}) == ["$.spec"]
    assert errors({"free": {"anything": {"deep": 1}, "known": 2}}) == []
    assert errors({"free": {"known": "two"}}) == ["$.spec.free.known"]
    assert errors({"embedded": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}}) == []
    assert errors({"either": {"a": "x"}}) == []
    assert errors({"either": {"a": "x", "b": "y"}}) == ["$.spec.either"]
    assert errors({"either": {"c": "x"}}) == ["$.spec.either", "$.spec.either"]
    assert "x-kubernetes-validations" not in str(schema)


def test_json_path_rendering() -> None:
    assert json_path(()) == "$"
    assert json_path(("spec", "items", 0, "a.b/c")) == "$.spec.items[0]['a.b/c']"
