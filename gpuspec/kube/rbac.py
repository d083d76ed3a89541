"""Decide a request as the Kubernetes RBAC authorizer does, offline, from Role/ClusterRole/binding objects.

Follows ``k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go`` and ``plugin/pkg/auth/authorizer/rbac``:
a request is allowed when some binding whose subjects include the user (by name, group, or service account)
references a role with a rule matching the request's verb, API group, resource (``resource/subresource``,
``*``, ``*/subresource``), resource name (an empty list matches every name) or non-resource URL (``*`` suffix
matches a prefix).  A RoleBinding applies only in its own namespace and only to namespaced requests; a
ClusterRoleBinding applies everywhere.  Aggregated ClusterRoles (``aggregationRule``) get the rules of every
ClusterRole whose labels match one of their selectors, as the aggregation controller writes them.  RBAC only
grants: there is no deny rule, so "not allowed" is the default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RBAC_GROUP = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Request:
    """One authorization request: who asks, and for what (resource attributes or a non-resource path)."""

    verb: str
    resource: str = ""
    api_group: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""
    user: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_resource(self) -> bool:
        """Whether this is a resource request (else a non-resource URL such as ``/metrics``)."""
        return not self.path


def _verb_matches(rule: Mapping[str, Any], verb: str) -> bool:
    verbs = rule.get("verbs") or []
    return "*" in verbs or verb in verbs


def _group_matches(rule: Mapping[str, Any], group: str) -> bool:
    groups = rule.get("apiGroups") or []
    return "*" in groups or group in groups


def _resource_matches(rule: Mapping[str, Any], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for candidate in rule.get("resources") or []:
        if candidate == "*" or candidate == combined:
            return True
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


def _name_matches(rule: Mapping[str, Any], name: str) -> bool:
    names = rule.get("resourceNames") or []
    return not names or name in names


def _url_matches(rule: Mapping[str, Any], path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(rule: Mapping[str, Any], request: Request) -> bool:
    """Whether one PolicyRule matches ``request`` (the subject is not checked here)."""
    if not _verb_matches(rule, request.verb):
        return False
    if not request.is_resource:
        return _url_matches(rule, request.path)
    return (
        _group_matches(rule, request.api_group)
        and _resource_matches(rule, request.resource, request.subresource)
        and _name_matches(rule, request.name)
    )


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against ``labels`` (matchLabels and matchExpressions, ANDed)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _subject_matches(subject: Mapping[str, Any], binding_namespace: str, request: Request) -> bool:
    kind = subject.get("kind")
    name = subject.get("name", "")
    if kind == "User":
        return bool(request.user) and request.user == name
    if kind == "Group":
        return name in request.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return request.user == f"system:serviceaccount:{namespace}:{name}"
    return False


class Authorizer:
    """The RBAC authorizer of one set of objects (any mix of kinds; non-RBAC objects are ignored)."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Index the Roles, ClusterRoles (aggregation resolved) and bindings among ``objects``."""
        self._roles: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        cluster_roles: dict[str, Mapping[str, Any]] = {}
        self._bindings: list[Mapping[str, Any]] = []
        for obj in objects:
            if not isinstance(obj, Mapping) or not str(obj.get("apiVersion", "")).startswith(RBAC_GROUP + "/"):
                continue
            kind, meta = obj.get("kind"), obj.get("metadata") or {}
            if kind == "Role":
                self._roles[(meta.get("namespace", ""), meta.get("name", ""))] = list(obj.get("rules") or [])
            elif kind == "ClusterRole":
                cluster_roles[meta.get("name", "")] = obj
            elif kind in ("RoleBinding", "ClusterRoleBinding"):
                self._bindings.append(obj)
        self._cluster_roles = {name: self._aggregate(name, role, cluster_roles) for name, role in cluster_roles.items()}

    @staticmethod
    def _aggregate(
        name: str, role: Mapping[str, Any], cluster_roles: Mapping[str, Mapping[str, Any]]
    ) -> list[Mapping[str, Any]]:
        """The rules of ClusterRole ``name``: its own, or with an aggregationRule, those of the roles it selects."""
        aggregation = role.get("aggregationRule")
        if not aggregation:
            return list(role.get("rules") or [])
        rules: list[Mapping[str, Any]] = []
        selectors: Sequence[Mapping[str, Any]] = aggregation.get("clusterRoleSelectors") or []
        for other_name, other in sorted(cluster_roles.items()):
            if other_name == name:
                continue
            labels = (other.get("metadata") or {}).get("labels") or {}
            if any(_selector_matches(s, labels) for s in selectors):
                rules.extend(r for r in other.get("rules") or [] if r not in rules)
        return rules

    def _role_rules(self, ref: Mapping[str, Any], binding_namespace: str) -> list[Mapping[str, Any]]:
        if ref.get("apiGroup", RBAC_GROUP) != RBAC_GROUP:
            return []
        if ref.get("kind") == "ClusterRole":
            return self._cluster_roles.get(ref.get("name", ""), [])
        if ref.get("kind") == "Role" and binding_namespace:
            return self._roles.get((binding_namespace, ref.get("name", "")), [])
        return []

    def allowed(self, request: Request) -> bool:
        """Whether ``request`` is allowed by some binding of these objects."""
        return self.granting(request) is not None

    def granting(self, request: Request) -> str | None:
        """The ``Kind namespace/name`` of the first binding that allows ``request``, or None."""
        for binding in self._bindings:
            meta = binding.get("metadata") or {}
            binding_namespace = meta.get("namespace", "") if binding.get("kind") == "RoleBinding" else ""
            # A RoleBinding grants only namespaced resource requests in its own namespace.
            if binding.get("kind") == "RoleBinding" and (
                not request.is_resource or request.namespace != binding_namespace
            ):
                continue
            if not any(_subject_matches(s, binding_namespace, request) for s in binding.get("subjects") or []):
                continue
            if any(
                rule_allows(rule, request) for rule in self._role_rules(binding.get("roleRef") or {}, binding_namespace)
            ):
                where = f"{binding_namespace}/" if binding_namespace else ""
                return f"{binding.get('kind')} {where}{meta.get('name', '')}"
        return None
