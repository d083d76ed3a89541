"""Updates the API server refuses: immutable fields of built-in kinds and CRD transition rules (``oldSelf``).

Built-in kinds (Kubernetes v1.35, kubernetes ``pkg/apis/<group>/validation/validation.go``, the ``Validate*Update``
functions named per field in :data:`BUILTIN`).  Custom resources: the CRD's ``x-kubernetes-validations`` rules that
name ``oldSelf`` (apiextensions-apiserver ``pkg/apiserver/schema/cel``: a transition rule runs on an update when the
old object has the field too), evaluated with :mod:`gpuspec.kube.cel`; a rule beyond that subset is reported as
not verified, never as passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from gpuspec.kube import cel

_ABSENT: Any = object()
#: Path part that stands for every list item or map value.
ANY = "*"


@dataclass(frozen=True, slots=True)
class ImmutableField:
    """A field of a built-in kind that an update may not change.

    ``only_if_old`` (path, value): the field is immutable only when the old object has that value (ConfigMap and
    Secret ``immutable: true``).  ``default`` is what the API server sets when the field is left out.
    """

    group: str
    kind: str
    path: tuple[str, ...]
    source: str
    default: Any = _ABSENT
    only_if_old: tuple[tuple[str, ...], Any] | None = None
    instead: str = "delete the object and create it again (a new name, or a replace), after checking what depends on it"


_CORE = "kubernetes pkg/apis/core/validation/validation.go"
_APPS = "kubernetes pkg/apis/apps/validation/validation.go"
_REPLACE_WORKLOAD = ("create the workload under a new name and delete the old one (or delete and recreate it); "
                     "its pods are replaced")
#: Immutable fields of the built-in kinds gpuspec renders or is likely to meet (Kubernetes v1.35).
BUILTIN: tuple[ImmutableField, ...] = (
    ImmutableField("", "ConfigMap", ("data",), f"{_CORE} ValidateConfigMapUpdate", only_if_old=(("immutable",), True),
                   instead="create a ConfigMap under a new name and point its users at it"),
    ImmutableField("", "ConfigMap", ("binaryData",), f"{_CORE} ValidateConfigMapUpdate",
                   only_if_old=(("immutable",), True),
                   instead="create a ConfigMap under a new name and point its users at it"),
    ImmutableField("", "ConfigMap", ("immutable",), f"{_CORE} ValidateConfigMapUpdate",
                   only_if_old=(("immutable",), True), default=False,
                   instead="an immutable ConfigMap stays immutable: create a new one under a new name"),
    ImmutableField("", "Secret", ("data",), f"{_CORE} ValidateSecretUpdate", only_if_old=(("immutable",), True),
                   instead="create a Secret under a new name and point its users at it"),
    ImmutableField("", "Secret", ("immutable",), f"{_CORE} ValidateSecretUpdate",
                   only_if_old=(("immutable",), True), default=False,
                   instead="an immutable Secret stays immutable: create a new one under a new name"),
    ImmutableField("", "Secret", ("type",), f"{_CORE} ValidateSecretUpdate", default="Opaque"),
    ImmutableField("", "Service", ("spec", "clusterIP"), f"{_CORE} ValidateServiceUpdate"),
    ImmutableField("", "PersistentVolumeClaim", ("spec", "storageClassName"),
                   f"{_CORE} ValidatePersistentVolumeClaimUpdate"),
    ImmutableField("", "PersistentVolumeClaim", ("spec", "accessModes"),
                   f"{_CORE} ValidatePersistentVolumeClaimUpdate"),
    ImmutableField("", "PersistentVolumeClaim", ("spec", "volumeName"),
                   f"{_CORE} ValidatePersistentVolumeClaimUpdate"),
    ImmutableField("apps", "Deployment", ("spec", "selector"), f"{_APPS} ValidateDeploymentUpdate",
                   instead=_REPLACE_WORKLOAD),
    ImmutableField("apps", "DaemonSet", ("spec", "selector"), f"{_APPS} ValidateDaemonSetUpdate",
                   instead=_REPLACE_WORKLOAD),
    ImmutableField("apps", "ReplicaSet", ("spec", "selector"), f"{_APPS} ValidateReplicaSetUpdate",
                   instead=_REPLACE_WORKLOAD),
    ImmutableField("apps", "StatefulSet", ("spec", "selector"), f"{_APPS} ValidateStatefulSetUpdate",
                   instead=_REPLACE_WORKLOAD),
    ImmutableField("apps", "StatefulSet", ("spec", "serviceName"), f"{_APPS} ValidateStatefulSetUpdate",
                   instead=_REPLACE_WORKLOAD),
    ImmutableField("apps", "StatefulSet", ("spec", "podManagementPolicy"), f"{_APPS} ValidateStatefulSetUpdate",
                   default="OrderedReady", instead=_REPLACE_WORKLOAD),
    ImmutableField("batch", "Job", ("spec", "selector"), "kubernetes pkg/apis/batch/validation/validation.go "
                   "ValidateJobSpecUpdate", instead="delete the Job and create it again (or give it a new name)"),
    ImmutableField("batch", "Job", ("spec", "template"), "kubernetes pkg/apis/batch/validation/validation.go "
                   "ValidateJobSpecUpdate (only scheduling directives of a suspended Job may change)",
                   instead="delete the Job and create it again (or give it a new name)"),
    ImmutableField("batch", "Job", ("spec", "completionMode"), "kubernetes pkg/apis/batch/validation/validation.go "
                   "ValidateJobSpecUpdate", default="NonIndexed",
                   instead="delete the Job and create it again (or give it a new name)"),
    ImmutableField("rbac.authorization.k8s.io", "RoleBinding", ("roleRef",),
                   "kubernetes pkg/apis/rbac/validation/validation.go ValidateRoleBindingUpdate",
                   instead="create a binding under a new name and delete the old one"),
    ImmutableField("rbac.authorization.k8s.io", "ClusterRoleBinding", ("roleRef",),
                   "kubernetes pkg/apis/rbac/validation/validation.go ValidateClusterRoleBindingUpdate",
                   instead="create a binding under a new name and delete the old one"),
    ImmutableField("scheduling.k8s.io", "PriorityClass", ("value",),
                   "kubernetes pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate",
                   instead="create a PriorityClass under a new name, move the pods' priorityClassName to it, then "
                   "delete the old one"),
    ImmutableField("scheduling.k8s.io", "PriorityClass", ("preemptionPolicy",),
                   "kubernetes pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate",
                   default="PreemptLowerPriority",
                   instead="create a PriorityClass under a new name, move the pods' priorityClassName to it, then "
                   "delete the old one"),
    ImmutableField("storage.k8s.io", "StorageClass", ("provisioner",),
                   "kubernetes pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate"),
    ImmutableField("storage.k8s.io", "StorageClass", ("parameters",),
                   "kubernetes pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate"),
    ImmutableField("storage.k8s.io", "StorageClass", ("reclaimPolicy",),
                   "kubernetes pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate", default="Delete"),
    ImmutableField("storage.k8s.io", "StorageClass", ("volumeBindingMode",),
                   "kubernetes pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate",
                   default="Immediate"),
)


@dataclass(frozen=True, slots=True)
class TransitionRule:
    """A CRD validation rule that names ``oldSelf``, on the schema node at ``path`` (``*``: any item/value)."""

    group: str
    kind: str
    path: tuple[str, ...]
    rule: str
    message: str
    default: Any = _ABSENT
    releases: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class RefusedUpdate:
    """One field of an update the API server refuses (``verified`` False: a rule gpuspec could not evaluate)."""

    path: tuple[str | int, ...]
    before: Any
    after: Any
    message: str
    source: str
    instead: str
    verified: bool = True


def split_group(api_version: str) -> str:
    """The API group of ``apiVersion`` (``""`` for the core group)."""
    return api_version.rpartition("/")[0]


def transition_rules_of_crd(crd: Mapping[str, Any]) -> list[TransitionRule]:
    """Every transition rule in the served versions' schemas of a CRD object (duplicates across versions once)."""
    spec = crd.get("spec") if isinstance(crd.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    names = spec.get("names") if isinstance(spec.get("names"), Mapping) else {}
    assert isinstance(names, Mapping)
    group, kind = str(spec.get("group", "")), str(names.get("kind", ""))
    found: dict[tuple[tuple[str, ...], str], TransitionRule] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, Mapping):
            return
        for entry in node.get("x-kubernetes-validations") or []:
            if isinstance(entry, Mapping) and "oldSelf" in str(entry.get("rule", "")):
                found.setdefault((path, str(entry["rule"])), TransitionRule(
                    group, kind, path, str(entry["rule"]), str(entry.get("message", "")),
                    node.get("default", _ABSENT)))
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, (*path, str(name)))
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), Mapping):
                walk(node[key], (*path, ANY))

    for version in spec.get("versions") or []:
        if isinstance(version, Mapping) and version.get("served", True):
            schema = version.get("schema")
            if isinstance(schema, Mapping):
                walk(schema.get("openAPIV3Schema"), ())
    return list(found.values())


@lru_cache(maxsize=1)
def shipped_transition_rules() -> tuple[TransitionRule, ...]:
    """The GPU Operator CRDs' transition rules gpuspec ships (``data/crd-transition-rules.yaml``)."""
    text = resources.files("gpuspec.kube").joinpath("data/crd-transition-rules.yaml").read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    return tuple(
        TransitionRule(r["group"], r["kind"], tuple(r["path"]), r["rule"], r["message"],
                       r.get("default", _ABSENT), tuple(r["releases"]))
        for r in doc["rules"]
    )


def rules_for_release(release: str | None) -> list[TransitionRule]:
    """The shipped rules of a GPU Operator release (an unknown release: those of the newest known one)."""
    rules = shipped_transition_rules()
    known = sorted({r for rule in rules for r in rule.releases}, key=_version_key)
    chosen = release if release in known else (known[-1] if known else None)
    return [r for r in rules if chosen in r.releases]


def _version_key(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.lstrip("v").split(".") if p.isdigit())


def _values(node: Any, path: Sequence[str], at: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...],
                                                                                               Any]]:
    """Every (path, value) of ``node`` at ``path`` (``*`` expands list items and map values)."""
    if not path:
        yield at, node
        return
    head, rest = path[0], path[1:]
    if head == ANY:
        if isinstance(node, list):
            for index, item in enumerate(node):
                yield from _values(item, rest, (*at, index))
        elif isinstance(node, Mapping):
            for key, item in node.items():
                yield from _values(item, rest, (*at, str(key)))
        return
    if isinstance(node, Mapping) and head in node:
        yield from _values(node[head], rest, (*at, head))


def _get(node: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        found = (isinstance(node, Mapping) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node))
        if found:
            node = node[part]
        else:
            return _ABSENT
    return node


def refused_updates(old: Mapping[str, Any], new: Mapping[str, Any],
                    transition_rules: Iterable[TransitionRule] = ()) -> list[RefusedUpdate]:
    """What the API server refuses when ``old`` is updated to ``new`` (same kind, namespace and name).

    Built-in kinds use :data:`BUILTIN`; custom resources the given transition rules of their CRD.
    """
    group, kind = split_group(str(new.get("apiVersion", ""))), str(new.get("kind", ""))
    out: list[RefusedUpdate] = []
    for rule in BUILTIN:
        if (rule.group, rule.kind) != (group, kind):
            continue
        if rule.only_if_old is not None and _get(old, rule.only_if_old[0]) != rule.only_if_old[1]:
            continue
        before, after = _get(old, rule.path), _get(new, rule.path)
        if rule.default is not _ABSENT:
            before = rule.default if before is _ABSENT else before
            after = rule.default if after is _ABSENT else after
        if before is _ABSENT and after is _ABSENT:
            continue
        if rule.path == ("spec", "clusterIP") and _ABSENT in (before, after):
            continue  # the API server allocates it; an object that leaves it out keeps the allocated one
        if before != after:
            out.append(RefusedUpdate(rule.path, _shown(before), _shown(after),
                                     f"{'.'.join(rule.path)} is immutable" + (
                                         " once immutable is true" if rule.only_if_old else ""),
                                     rule.source, rule.instead))
    for transition in transition_rules:
        if (transition.group, transition.kind) != (group, kind):
            continue
        out += _transition(transition, old, new)
    return out


def _transition(rule: TransitionRule, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[RefusedUpdate]:
    source = f"CRD {rule.kind} ({rule.group}) x-kubernetes-validations rule {rule.rule!r}"
    olds = dict(_values(old, rule.path))
    news = dict(_values(new, rule.path))
    if rule.default is not _ABSENT and not any(p == ANY for p in rule.path):
        key = tuple(rule.path)
        olds.setdefault(key, rule.default)
        news.setdefault(key, rule.default)
    instead = "create a new object (a new name) with the new value and delete the old one"
    for path, after in news.items():
        if path not in olds:
            continue  # a transition rule runs only where the old object has the field
        before = olds[path]
        try:
            ok = cel.parse(rule.rule).evaluate(after, before)
        except (cel.Unsupported, cel.EvalError) as exc:
            yield RefusedUpdate(path, before, after, f"rule not verified offline ({exc})", source, instead,
                                verified=False)
            continue
        if not ok:
            yield RefusedUpdate(path, before, after, rule.message or f"rule {rule.rule!r} fails", source, instead)


def _shown(value: Any) -> Any:
    return None if value is _ABSENT else value
