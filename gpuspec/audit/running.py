"""What a cluster runs, read from its ClusterPolicy / NVIDIADriver objects and its Helm release (for `gpuspec import`).

Every value keeps where it was read (``origin``), so the draft can say so in a comment.  Values that none of
the exports give stay ``None``; the draft marks them ``# TODO: review``.  Exports are read through
:mod:`gpuspec.loader.exportread`: ClusterPolicies item by item, Helm's documents whole within its bounds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuspec.audit.inventory import OPERATOR_KINDS, OperatorResource, parse_operator_resources
from gpuspec.errors import GpuspecError
from gpuspec.loader.exportread import Export, ListReader, helm_document

_RELEASE = re.compile(r"^v?([0-9]{2}\.[0-9]{1,2}\.[0-9]{1,2})$")
_CHART = re.compile(r"^gpu-operator-(v?[0-9]{2}\.[0-9]{1,2}\.[0-9]{1,2})$")
_DRIVER = re.compile(r"^([0-9]{3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)")
#: ClusterPolicy spec keys of operands whose images carry a repository and pull secrets.
IMAGE_KEYS = ("operator", "validator", "driver", "toolkit", "devicePlugin", "dcgm", "dcgmExporter",
              "gfd", "migManager", "nodeStatusExporter", "gds", "gdrcopy", "vgpuManager", "sandboxDevicePlugin",
              "vfioManager", "kataManager", "ccManager")
#: Settings the ClusterPolicy and the Helm values name alike that the spec expresses: the device-plugin and MIG
#: ConfigMaps, the driver's package repository and CA ConfigMaps (paths as in both).
SETTINGS = ("devicePlugin.config.name", "devicePlugin.config.default", "migManager.config.name",
            "driver.repoConfig.configMapName", "driver.certConfig.name")
#: Spec operand toggle → ClusterPolicy / Helm path of its ``enabled`` flag.
OPERAND_FLAGS = {"dcgmExporter": ("dcgmExporter", "enabled"), "cdi": ("cdi", "enabled"),
                 "gds": ("gds", "enabled"), "gdrcopy": ("gdrcopy", "enabled"), "rdma": ("driver", "rdma", "enabled"),
                 "sandboxWorkloads": ("sandboxWorkloads", "enabled"), "nfd": ("nfd", "enabled")}


@dataclass(frozen=True)
class Read:
    """A value read from the cluster and where it came from."""

    value: Any
    origin: str


@dataclass
class RunningState:
    """The operator configuration a cluster runs, as far as its exports tell."""

    operator_version: Read | None = None
    namespace: Read | None = None
    driver_version: Read | None = None
    kernel_module_type: Read | None = None
    mig_strategy: Read | None = None
    operands: dict[str, Read] = field(default_factory=dict)
    service_monitor: Read | None = None
    upgrade: dict[str, Read] = field(default_factory=dict)
    drain: dict[str, Read] = field(default_factory=dict)
    repositories: dict[str, str] = field(default_factory=dict)
    pull_secrets: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    #: ClusterPolicy / Helm values path of a setting gpuspec expresses (:data:`SETTINGS`) -> what runs.
    settings: dict[str, Read] = field(default_factory=dict)
    #: NFD's image repository and tag from the Helm values (the ClusterPolicy does not carry NFD).
    nfd_repository: Read | None = None
    nfd_tag: Read | None = None


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _load_any(source: str | Export, display: str) -> Any:
    """A Helm export, JSON or YAML (helm prints either), with a message naming ``display`` on a syntax error.

    JSON is decoded as JSON; YAML, and JSON too broken to decode, by the YAML parser, which says where it
    broke.  Both within :func:`~gpuspec.loader.exportread.helm_document`'s bounds.
    """
    value, text = helm_document(source, display)
    if not text:
        return value
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise GpuspecError(f"{display}{where}: invalid YAML/JSON: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise GpuspecError(f"{display}: nested too deeply") from None
    except ValueError as exc:  # a value YAML cannot construct: an integer past 4,300 digits, a date like 2026-13-45
        raise GpuspecError(f"{display}: invalid YAML/JSON: {exc}") from None


def read_helm_release(text: str | Export, display: str) -> Read | None:
    """The operator release of the gpu-operator entry of `helm list -o json` (chart version, else appVersion)."""
    data = _load_any(text, display)
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise GpuspecError(f"{display}: not the output of `helm list -o json` (a list of releases)")
    for item in data:
        chart = str(item.get("chart", ""))
        match = _CHART.match(chart)
        if match:
            version = match.group(1)
            return Read(version if version.startswith("v") else f"v{version}",
                        f"helm list: release {item.get('name', '?')} chart {chart}")
    for item in data:
        app = _RELEASE.match(str(item.get("app_version", "")))
        if app and "gpu-operator" in str(item.get("chart", "")):
            return Read(f"v{app.group(1)}", f"helm list: release {item.get('name', '?')} appVersion")
    return None


def _policy_namespace(policies: str | Export, display: str) -> Read | None:
    """The ``status.namespace`` of the first ClusterPolicy that has one (the export read again, item by item)."""
    for item in ListReader(policies, display).objects(OPERATOR_KINDS):
        namespace = _get(item, "status", "namespace")
        if _get(item, "kind") == "ClusterPolicy" and isinstance(namespace, str) and namespace:
            return Read(namespace, "ClusterPolicy status.namespace")
    return None


def read_namespace(helm_list: str | Export | None, helm_display: str, policies: str | Export | None,
                   policies_display: str) -> Read | None:
    """The operator's namespace: the gpu-operator release's in `helm list -o json`, else a ClusterPolicy's status."""
    if helm_list is not None:
        data = _load_any(helm_list, helm_display)
        for item in data if isinstance(data, list) else []:
            if isinstance(item, dict) and _CHART.match(str(item.get("chart", ""))) and item.get("namespace"):
                return Read(str(item["namespace"]), f"helm list: release {item.get('name', '?')} namespace")
    if policies is not None:
        return _policy_namespace(policies, policies_display)
    return None


def read_helm_values(text: str | Export, display: str) -> dict[str, Any]:
    """The values of `helm get values -a -o json` (or YAML) of the GPU Operator release."""
    data = _load_any(text, display)
    if not isinstance(data, dict):
        raise GpuspecError(f"{display}: not the output of `helm get values -a -o json` (a mapping of values)")
    return data


def read_cluster_policies(source: str | Export, display: str) -> tuple[list[dict[str, Any]], list[OperatorResource]]:
    """The spec (raw) of the first ClusterPolicy, the one the operator applies, and the operator resources of
    `kubectl get clusterpolicies,nvidiadrivers -o json` (read twice, item by item)."""
    resources = parse_operator_resources(source, display)  # validates the shape, names the file on errors
    specs: list[dict[str, Any]] = []
    if any(r.kind == "ClusterPolicy" for r in resources):
        for item in ListReader(source, display).objects(OPERATOR_KINDS):
            spec = (item.get("spec") or {}) if _get(item, "kind") == "ClusterPolicy" else None
            if isinstance(spec, dict):
                specs = [spec]
                break
    return specs, list(resources)


def read_operator_objects(source: str | Export, display: str) -> list[dict[str, Any]]:
    """The ClusterPolicy and NVIDIADriver objects of `kubectl get clusterpolicies,nvidiadrivers -o json`, whole (for
    the round trip of :mod:`gpuspec.audit.roundtrip`; read item by item, the shape checked by
    :func:`~gpuspec.audit.inventory.parse_operator_resources` first)."""
    parse_operator_resources(source, display)
    return [item for item in ListReader(source, display).objects(OPERATOR_KINDS)
            if isinstance(item, dict) and item.get("kind") in OPERATOR_KINDS]


def _operator_from_images(spec: dict[str, Any], where: str) -> Read | None:
    for key in ("operator", "validator"):
        tag = _get(spec, key, "version")
        if isinstance(tag, str) and _RELEASE.match(tag):
            return Read(f"v{_RELEASE.match(tag).group(1)}", f"{where} spec.{key}.version")  # type: ignore[union-attr]
        image = _get(spec, key, "image")
        if isinstance(image, str) and ":" in image and _RELEASE.match(image.rsplit(":", 1)[1]):
            return Read(f"v{_RELEASE.match(image.rsplit(':', 1)[1]).group(1)}",  # type: ignore[union-attr]
                        f"{where} spec.{key}.image")
    return None


def running_state(policy_specs: list[dict[str, Any]], helm_values: dict[str, Any] | None,
                  helm_release: Read | None, namespace: Read | None = None) -> RunningState:
    """Combine the exports: the ClusterPolicy (what the operator applies) first, then the Helm values."""
    state = RunningState()
    layers: list[tuple[dict[str, Any], str]] = []
    if policy_specs:
        layers.append((policy_specs[0], "ClusterPolicy"))
    if helm_values:
        layers.append((helm_values, "helm values"))
    state.operator_version = helm_release
    state.namespace = namespace
    for spec, where in layers:
        if state.operator_version is None:
            state.operator_version = _operator_from_images(spec, where)
        version = _get(spec, "driver", "version")
        if state.driver_version is None and isinstance(version, str) and _DRIVER.match(version):
            state.driver_version = Read(_DRIVER.match(version).group(1), f"{where} spec.driver.version")  # type: ignore[union-attr]
        kmt = _get(spec, "driver", "kernelModuleType")
        if state.kernel_module_type is None:
            if kmt in ("auto", "open", "proprietary"):
                state.kernel_module_type = Read(kmt, f"{where} driver.kernelModuleType")
            elif isinstance(_get(spec, "driver", "useOpenKernelModules"), bool):
                open_ = _get(spec, "driver", "useOpenKernelModules")
                state.kernel_module_type = Read("open" if open_ else "proprietary",
                                                f"{where} driver.useOpenKernelModules")
        strategy = _get(spec, "mig", "strategy")
        if state.mig_strategy is None and strategy in ("single", "mixed", "none"):
            state.mig_strategy = Read(strategy, f"{where} mig.strategy")
        for name, path in OPERAND_FLAGS.items():
            flag = _get(spec, *path)
            if name not in state.operands and isinstance(flag, bool):
                state.operands[name] = Read(flag, f"{where} {'.'.join(path)}")
        monitor = _get(spec, "dcgmExporter", "serviceMonitor", "enabled")
        if state.service_monitor is None and isinstance(monitor, bool):
            state.service_monitor = Read(monitor, f"{where} dcgmExporter.serviceMonitor.enabled")
        policy = _get(spec, "driver", "upgradePolicy")
        if isinstance(policy, dict):
            for key in ("autoUpgrade", "maxParallelUpgrades", "maxUnavailable"):
                if key not in state.upgrade and policy.get(key) is not None:
                    state.upgrade[key] = Read(policy[key], f"{where} driver.upgradePolicy.{key}")
            drain = policy.get("drain")
            if isinstance(drain, dict):
                for key in ("enable", "force", "timeoutSeconds", "deleteEmptyDir", "podSelector"):
                    if key not in state.drain and drain.get(key) is not None:
                        state.drain[key] = Read(drain[key], f"{where} driver.upgradePolicy.drain.{key}")
        for key in IMAGE_KEYS:
            repo = _get(spec, key, "repository")
            if isinstance(repo, str) and repo and not repo.startswith("nvcr.io"):
                state.repositories.setdefault(key, repo)
            secrets = _get(spec, key, "imagePullSecrets")
            if isinstance(secrets, list):
                for secret in secrets:
                    if isinstance(secret, str) and secret not in state.pull_secrets:
                        state.pull_secrets.append(secret)
        for setting in SETTINGS:
            value = _get(spec, *setting.split("."))
            if setting not in state.settings and isinstance(value, (str, bool)):
                state.settings[setting] = Read(value, f"{where} {setting}")
        if where == "helm values":
            nfd = _get(spec, "node-feature-discovery", "image")
            repo, tag = (nfd.get("repository"), nfd.get("tag")) if isinstance(nfd, dict) else (None, None)
            if isinstance(repo, str) and repo:
                state.nfd_repository = Read(repo, "helm values node-feature-discovery.image.repository")
                if not repo.startswith("registry.k8s.io/"):
                    state.repositories.setdefault("node-feature-discovery", repo)
            if isinstance(tag, str) and tag:
                state.nfd_tag = Read(tag, "helm values node-feature-discovery.image.tag")
        namespace = _get(spec, "operator", "namespace") if where == "helm values" else None
        if state.namespace is None and isinstance(namespace, str):
            state.namespace = Read(namespace, f"{where} operator.namespace")
        state.sources.append(where)
    return state
