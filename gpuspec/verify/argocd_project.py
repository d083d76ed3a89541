"""What an Argo CD AppProject permits, evaluated as Argo CD v3.5.1 evaluates it (pure).

source: argoproj/argo-cd v3.5.1 (109ca7ca71139e514114499d294a492e7910a965)
  pkg/apis/application/v1alpha1/app_project_types.go: ``IsGroupKindNamePermitted`` (l. 399),
  ``globMatch`` (l. 446), ``IsDestinationPermitted`` (l. 483), ``isDestinationMatched`` (l. 507),
  ``isDenyPattern`` (l. 530);
  pkg/apis/application/v1alpha1/types.go: ``isResourceInList`` (l. 3843), ``isNamedResourceInList`` (l. 3856);
  controller/sync.go: ``validateSyncPermissions`` (l. 647): a resource whose group/kind is not permitted, or a
  namespaced resource whose namespace is not a destination, fails the sync of the whole Application.

Destination globs are gobwas/glob patterns without separators (``util/glob``); resource lists use Go's
``filepath.Match``.  ``permitOnlyProjectScopedClusters`` needs the cluster secrets Argo CD holds and is not
evaluated (reported as not checkable by the caller).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: The cluster Argo CD itself runs in, as Argo CD names it (``in-cluster``) and addresses it.
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
IN_CLUSTER_NAME = "in-cluster"


@lru_cache(maxsize=512)
def _compile(pattern: str, go_filepath: bool) -> re.Pattern[str] | None:
    """A regular expression for a gobwas glob (``go_filepath`` False) or a Go ``filepath.Match`` pattern.

    None for a pattern the Go code rejects (``filepath.ErrBadPattern``: Argo CD then treats it as no match).
    """
    out: list[str] = []
    any_char = "[^/]" if go_filepath else "."
    i = 0
    depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append(any_char + "*")
        elif c == "?":
            out.append(any_char)
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                return None
            body = pattern[i + 1:end]
            negate = body[:1] in ("^", "!") if not go_filepath else body[:1] == "^"
            if negate:
                body = body[1:]
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        elif c == "{" and not go_filepath:
            out.append("(?:")
            depth += 1
        elif c == "}" and depth and not go_filepath:
            out.append(")")
            depth -= 1
        elif c == "," and depth and not go_filepath:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        return None
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error:
        return None


def glob_match(pattern: str, value: str, *, allow_negation: bool = True) -> bool:
    """Argo CD's ``globMatch``: ``!pattern`` matches what ``pattern`` does not; ``*`` matches everything."""
    if allow_negation and is_deny(pattern):
        return not _glob(pattern[1:], value)
    if pattern == "*":
        return True
    return _glob(pattern, value)


def _glob(pattern: str, value: str) -> bool:
    compiled = _compile(pattern, False)
    return compiled is not None and compiled.match(value) is not None


def filepath_match(pattern: str, value: str) -> bool:
    """Go's ``filepath.Match`` (an invalid pattern matches nothing, as Argo CD ignores the error)."""
    compiled = _compile(pattern, True)
    return compiled is not None and compiled.match(value) is not None


def is_deny(pattern: str) -> bool:
    """Argo CD's ``isDenyPattern``."""
    return pattern.startswith("!")


@dataclass(frozen=True, slots=True)
class Destination:
    """A cluster (by server URL and/or name) and a namespace, as Argo CD matches them."""

    server: str
    name: str
    namespace: str


def destination_cluster(dest: Mapping[str, Any]) -> tuple[str, str]:
    """(server, name) of an Application's ``spec.destination``; the in-cluster name and URL complete each other."""
    server = str(dest.get("server") or "")
    name = str(dest.get("name") or "")
    if server == IN_CLUSTER_SERVER and not name:
        name = IN_CLUSTER_NAME
    elif name == IN_CLUSTER_NAME and not server:
        server = IN_CLUSTER_SERVER
    return server, name


def destination_permitted(project_spec: Mapping[str, Any], dst: Destination) -> bool:
    """``isDestinationMatched``: one destination entry matches and no deny entry rules it out first."""
    matched_any = False
    for item in _entries(project_spec.get("destinations")):
        item_name = str(item.get("name") or "")
        item_server = str(item.get("server") or "")
        item_namespace = str(item.get("namespace") or "")
        name_matched = dst.name != "" and glob_match(item_name, dst.name)
        server_matched = dst.server != "" and glob_match(item_server, dst.server)
        namespace_matched = glob_match(item_namespace, dst.namespace)
        if (server_matched or name_matched) and namespace_matched:
            matched_any = True
        elif _denied(item_name, item_server, item_namespace, name_matched, server_matched, namespace_matched):
            return False
    return matched_any


def _denied(item_name: str, item_server: str, item_namespace: str, name_matched: bool, server_matched: bool,
            namespace_matched: bool) -> bool:
    """The two deny cases of ``isDestinationMatched`` (Go's precedence in the first: A || (B && C))."""
    if (not name_matched and is_deny(item_name)) or (
            not server_matched and is_deny(item_server) and namespace_matched):
        return True
    return not namespace_matched and is_deny(item_namespace) and server_matched


def group_kind_permitted(project_spec: Mapping[str, Any], group: str, kind: str, name: str,
                         namespaced: bool) -> bool:
    """``IsGroupKindNamePermitted``: namespaced kinds pass unless a whitelist is set and misses them or a
    blacklist names them; cluster-scoped kinds only pass when the cluster whitelist names them."""
    if namespaced:
        white = project_spec.get("namespaceResourceWhitelist")
        black = _entries(project_spec.get("namespaceResourceBlacklist"))
        white_entries = _entries(white)
        listed = white is None or (bool(white_entries) and _in_list(group, kind, None, white_entries))
        return listed and not (bool(black) and _in_list(group, kind, None, black))
    white_entries = _entries(project_spec.get("clusterResourceWhitelist"))
    black = _entries(project_spec.get("clusterResourceBlacklist"))
    listed = bool(white_entries) and _in_list(group, kind, name, white_entries)
    return listed and not (bool(black) and _in_list(group, kind, name, black))


def _in_list(group: str, kind: str, name: str | None, items: Sequence[Mapping[str, Any]]) -> bool:
    """``isResourceInList`` (name None) / ``isNamedResourceInList``."""
    for item in items:
        if not filepath_match(str(item.get("kind") or ""), kind):
            continue
        if not filepath_match(str(item.get("group") or ""), group):
            continue
        item_name = str(item.get("name") or "")
        if name is None or item_name == "" or filepath_match(item_name, name):
            return True
    return False


def _entries(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
