"""Offline checks of one object as the API server validates it on create: name, namespace, labels, annotations,
label selectors and the reserved names and values of a few kinds.

Sources (Kubernetes v1.35; apimachinery v0.35.2):

- names: ``pkg/api/validation/objectmeta.go`` (``ValidateObjectMetaAccessor``, ``NameIsDNSSubdomain``,
  ``NameIsDNSLabel``, ``NameIsDNS1035Label``, ``ValidateNamespaceName``) in apimachinery; which kind uses which in
  kubernetes ``pkg/apis/core/validation/validation.go`` (Namespace: DNS-1123 label, Service: DNS-1035 label, the
  other core kinds: DNS-1123 subdomain), ``pkg/apis/rbac/validation/validation.go`` (``ValidateRBACName``: a path
  segment name), ``pkg/apis/apps``, ``batch``, ``policy``, ``scheduling`` validation (DNS-1123 subdomain), and
  apiextensions-apiserver ``pkg/registry/customresource/validator.go`` (custom resources: DNS-1123 subdomain);
- labels and selectors: apimachinery ``pkg/apis/meta/v1/validation/validation.go`` (``ValidateLabels``,
  ``ValidateLabelName``, ``ValidateLabelSelector``, ``ValidateLabelSelectorRequirement``);
- annotations: ``pkg/api/validation/objectmeta.go`` (``ValidateAnnotations``: keys are label keys, 256 KiB total);
- apps selectors: kubernetes ``pkg/apis/apps/validation/validation.go`` (an empty selector is invalid; the selector
  must match the pod template's labels);
- PriorityClass: kubernetes ``pkg/apis/scheduling/validation/validation.go`` (``system-`` names are reserved for
  the system's classes; a user class's value is at most 1000000000);
- Namespace: kubernetes ``pkg/registry/core/namespace/strategy.go`` sets ``kubernetes.io/metadata.name`` to the
  namespace's name (any other value is replaced).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.kube import syntax

#: ApiProblem.code values.
NAME = "name"
LABEL = "label"
SELECTOR = "selector"
RESERVED = "reserved"

#: ``TotalAnnotationSizeLimitB`` of objectmeta.go.
ANNOTATIONS_MAX_BYTES = 256 * 1024
#: ``HighestUserDefinablePriority`` of pkg/apis/scheduling.
HIGHEST_USER_PRIORITY = 1_000_000_000
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
SYSTEM_PRIORITY_PREFIX = "system-"

_RBAC = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
_WORKLOADS = {"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"}
_SELECTOR_KEYS = {"selector", "labelSelector", "namespaceSelector", "podSelector"}
_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}
_OBJECTMETA = "apimachinery pkg/api/validation/objectmeta.go"
_METAV1 = "apimachinery pkg/apis/meta/v1/validation/validation.go"

DocPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class ApiProblem:
    """One thing the API server would refuse (or silently replace) in an object.

    ``code`` is :data:`NAME`, :data:`LABEL`, :data:`SELECTOR` or :data:`RESERVED`; ``path`` is the key path inside
    the object; ``source`` names the validation code that decides it.
    """

    code: str
    path: DocPath
    message: str
    source: str


def name_rule(api_version: str, kind: str) -> tuple[str, str]:
    """The name format the API server requires of ``kind``: (format name, the validation code that says so)."""
    group = api_version.rpartition("/")[0]
    if group == "" and kind == "Namespace":
        return "dns1123-label", "kubernetes pkg/apis/core/validation/validation.go ValidateNamespaceName"
    if group == "" and kind == "Service":
        return "dns1035-label", "kubernetes pkg/apis/core/validation/validation.go ValidateServiceName"
    if group == "rbac.authorization.k8s.io" and kind in _RBAC:
        return "path-segment", "kubernetes pkg/apis/rbac/validation/validation.go ValidateRBACName"
    return "dns1123-subdomain", f"{_OBJECTMETA} NameIsDNSSubdomain"


_FORMATS = {
    "dns1123-label": (syntax.dns1123_label, "a DNS-1123 label"),
    "dns1035-label": (syntax.dns1035_label, "a DNS-1035 label"),
    "path-segment": (syntax.path_segment, "a path segment name"),
    "dns1123-subdomain": (syntax.dns1123_subdomain, "a DNS-1123 subdomain"),
}


def check_object(obj: Mapping[str, Any]) -> list[ApiProblem]:
    """Everything the API server's create validation would refuse in ``obj``'s metadata and selectors."""
    api_version = str(obj.get("apiVersion", ""))
    kind = str(obj.get("kind", ""))
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return []
    problems = list(_names(api_version, kind, meta))
    problems += _meta_maps(meta, ("metadata",))
    if kind == "CustomResourceDefinition":
        return problems  # its spec is a schema: keys named selector or template there are not selectors
    problems += _selectors(obj)
    problems += _kind_rules(api_version, kind, obj, meta)
    return problems


def _names(api_version: str, kind: str, meta: Mapping[str, Any]) -> Iterator[ApiProblem]:
    name = meta.get("name")
    if isinstance(name, str):
        rule, source = name_rule(api_version, kind)
        check, words = _FORMATS[rule]
        for text in check(name):
            yield ApiProblem(NAME, ("metadata", "name"), f"{kind} name {name!r} is not {words}: {text}", source)
    namespace = meta.get("namespace")
    if isinstance(namespace, str):
        for text in syntax.dns1123_label(namespace):
            yield ApiProblem(NAME, ("metadata", "namespace"), f"namespace {namespace!r} is not a DNS-1123 label: "
                             f"{text}", f"{_OBJECTMETA} ValidateNamespaceName")


def _labels(labels: Any, path: DocPath, what: str = "label") -> Iterator[ApiProblem]:
    if not isinstance(labels, Mapping):
        return
    for key, value in labels.items():
        for text in syntax.label_key(str(key)):
            yield ApiProblem(LABEL, (*path, str(key)), f"{what} key {key!r}: {text}", f"{_METAV1} ValidateLabelName")
        if not isinstance(value, str):
            continue  # the schema check reports a value that is not a string
        for text in syntax.label_value(value):
            yield ApiProblem(LABEL, (*path, str(key)), f"{what} {key}={value!r}: {text}",
                             f"{_METAV1} ValidateLabels")


def _meta_maps(meta: Mapping[str, Any], path: DocPath) -> Iterator[ApiProblem]:
    yield from _labels(meta.get("labels"), (*path, "labels"))
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping):
        size = 0
        for key, value in annotations.items():
            size += len(str(key)) + len(str(value))
            for text in syntax.label_key(str(key)):
                yield ApiProblem(LABEL, (*path, "annotations", str(key)), f"annotation key {key!r}: {text}",
                                 f"{_OBJECTMETA} ValidateAnnotations")
        if size > ANNOTATIONS_MAX_BYTES:
            yield ApiProblem(LABEL, (*path, "annotations"), f"annotations total {size} bytes, more than the "
                             f"{ANNOTATIONS_MAX_BYTES} the API server allows", f"{_OBJECTMETA} ValidateAnnotations")


def label_selector(selector: Any, path: DocPath) -> list[ApiProblem]:
    """Problems of a ``metav1.LabelSelector`` (``matchLabels`` and ``matchExpressions``) at ``path``."""
    if not isinstance(selector, Mapping):
        return []
    problems = list(_labels(selector.get("matchLabels"), (*path, "matchLabels"), "matchLabels"))
    expressions = selector.get("matchExpressions")
    for index, req in enumerate(expressions if isinstance(expressions, list) else []):
        if not isinstance(req, Mapping):
            continue
        here: DocPath = (*path, "matchExpressions", index)
        operator, values = req.get("operator"), req.get("values") or []
        key = str(req.get("key", ""))
        source = f"{_METAV1} ValidateLabelSelectorRequirement"
        if operator in ("In", "NotIn") and not values:
            problems.append(ApiProblem(SELECTOR, (*here, "values"), f"matchExpressions[{index}] ({key} {operator}): "
                                       "values must be specified when operator is 'In' or 'NotIn'", source))
        elif operator in ("Exists", "DoesNotExist") and values:
            problems.append(ApiProblem(SELECTOR, (*here, "values"), f"matchExpressions[{index}] ({key} {operator}): "
                                       "values may not be specified when operator is 'Exists' or 'DoesNotExist'",
                                       source))
        elif operator not in _OPERATORS:
            problems.append(ApiProblem(SELECTOR, (*here, "operator"), f"matchExpressions[{index}]: {operator!r} is "
                                       "not a valid selector operator (In, NotIn, Exists, DoesNotExist)", source))
        for text in syntax.label_key(key):
            problems.append(ApiProblem(SELECTOR, (*here, "key"), f"matchExpressions[{index}] key {key!r}: {text}",
                                       source))
        for v_index, value in enumerate(values if isinstance(values, list) else []):
            for text in syntax.label_value(str(value)):
                problems.append(ApiProblem(SELECTOR, (*here, "values", v_index),
                                           f"matchExpressions[{index}] value {value!r}: {text}", source))
    return problems


def _selectors(obj: Mapping[str, Any]) -> Iterator[ApiProblem]:
    """Label selectors, pod template labels and node selectors anywhere below ``spec``."""
    def walk(node: Any, path: DocPath) -> Iterator[ApiProblem]:
        if isinstance(node, Mapping):
            for key, value in node.items():
                here = (*path, str(key))
                if key in _SELECTOR_KEYS and isinstance(value, Mapping) and value and \
                        set(value) <= {"matchLabels", "matchExpressions"}:
                    yield from label_selector(value, here)
                    continue
                if key in ("nodeSelector", "selector") and isinstance(value, Mapping) and value and \
                        all(isinstance(v, str) for v in value.values()):
                    yield from (ApiProblem(SELECTOR, p.path, p.message.replace("label", str(key), 1), p.source)
                                for p in _labels(value, here))
                    continue
                if key == "template" and isinstance(value, Mapping) and isinstance(value.get("metadata"), Mapping):
                    yield from _meta_maps(value["metadata"], (*here, "metadata"))
                yield from walk(value, here)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                yield from walk(item, (*path, index))

    yield from walk(obj.get("spec"), ("spec",))


def _matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """True when ``labels`` satisfy ``selector`` (apimachinery pkg/labels/selector.go semantics)."""
    match_labels = selector.get("matchLabels")
    for key, value in (match_labels.items() if isinstance(match_labels, Mapping) else []):
        if labels.get(key) != value:
            return False
    expressions = selector.get("matchExpressions")
    for req in expressions if isinstance(expressions, list) else []:
        if not isinstance(req, Mapping):
            continue
        key, operator, values = str(req.get("key")), req.get("operator"), req.get("values") or []
        present = key in labels
        if operator == "In" and (not present or labels.get(key) not in values):
            return False
        if operator == "NotIn" and present and labels.get(key) in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _kind_rules(api_version: str, kind: str, obj: Mapping[str, Any], meta: Mapping[str, Any]) -> Iterator[ApiProblem]:
    group = api_version.rpartition("/")[0]
    name = meta.get("name")
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    if group == "apps" and kind in _WORKLOADS:
        source = "kubernetes pkg/apis/apps/validation/validation.go ValidatePodTemplateSpecForReplicaSet"
        selector = spec.get("selector")
        template = spec.get("template") if isinstance(spec.get("template"), Mapping) else {}
        assert isinstance(template, Mapping)
        tmeta = template.get("metadata") if isinstance(template.get("metadata"), Mapping) else {}
        assert isinstance(tmeta, Mapping)
        labels = tmeta.get("labels") if isinstance(tmeta.get("labels"), Mapping) else {}
        assert isinstance(labels, Mapping)
        if isinstance(selector, Mapping):
            if not selector.get("matchLabels") and not selector.get("matchExpressions"):
                yield ApiProblem(SELECTOR, ("spec", "selector"), f"empty selector is invalid for {kind}", source)
            elif not _matches(selector, labels):
                yield ApiProblem(SELECTOR, ("spec", "template", "metadata", "labels"),
                                 "selector does not match template labels", source)
    if group == "scheduling.k8s.io" and kind == "PriorityClass" and isinstance(name, str):
        source = "kubernetes pkg/apis/scheduling/validation/validation.go ValidatePriorityClass"
        if name.startswith(SYSTEM_PRIORITY_PREFIX):
            yield ApiProblem(RESERVED, ("metadata", "name"), f"priority class names with the '{SYSTEM_PRIORITY_PREFIX}'"
                             " prefix are reserved for system use only", source)
        else:
            value = obj.get("value")
            if isinstance(value, int) and not isinstance(value, bool) and value > HIGHEST_USER_PRIORITY:
                yield ApiProblem(RESERVED, ("value",), f"value {value}: the maximum of a user-defined priority is "
                                 f"{HIGHEST_USER_PRIORITY}", source)
    if group == "" and kind == "Namespace" and isinstance(name, str):
        labels = meta.get("labels")
        if isinstance(labels, Mapping) and NAMESPACE_NAME_LABEL in labels and labels[NAMESPACE_NAME_LABEL] != name:
            yield ApiProblem(RESERVED, ("metadata", "labels", NAMESPACE_NAME_LABEL),
                             f"label {NAMESPACE_NAME_LABEL}={labels[NAMESPACE_NAME_LABEL]!r}: the API server sets "
                             f"it to the namespace's name {name!r} and replaces any other value",
                             "kubernetes pkg/registry/core/namespace/strategy.go PrepareForCreate/PrepareForUpdate")


#: Labels a kubelet may set on its own Node (k8s.io/kubelet pkg/apis/well_known_labels.go, Kubernetes v1.35).
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type", "kubernetes.io/os", "kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
})
#: Label namespaces (and their subdomains) a kubelet may set on its own Node.
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
#: The namespace the NodeRestriction admission plugin keeps from kubelets (for admins to set).
NODE_RESTRICTION_NAMESPACE = "node-restriction.kubernetes.io"


def kubelet_may_set(key: str) -> bool:
    """True when a kubelet may set node label ``key`` itself (``--node-labels``): any key outside the
    ``kubernetes.io`` / ``k8s.io`` domains, or one of :data:`KUBELET_LABELS` / :data:`KUBELET_LABEL_NAMESPACES`.

    Sources: k8s.io/kubelet ``pkg/apis/well_known_labels.go`` (``IsKubeletLabel``), kubernetes
    ``cmd/kubelet/app/options/options.go`` (unknown ``kubernetes.io`` or ``k8s.io`` labels in ``--node-labels`` are
    refused) and ``plugin/pkg/admission/noderestriction/admission.go`` (kubelets may not set other such labels, nor
    ``node-restriction.kubernetes.io/`` ones, on their Node).
    """
    namespace = key.split("/", 1)[0] if "/" in key else ""
    if not any(namespace == d or namespace.endswith("." + d) for d in ("kubernetes.io", "k8s.io")):
        return True
    if key in KUBELET_LABELS:
        return True
    return any(namespace == n or namespace.endswith("." + n) for n in KUBELET_LABEL_NAMESPACES)
