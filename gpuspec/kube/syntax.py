"""The syntax rules of apimachinery for names, label keys and values (Kubernetes v1.35, apimachinery v0.35.2).

Sources: ``k8s.io/apimachinery`` ``pkg/api/validate/content/dns.go`` and ``kube.go`` (DNS-1123 label and
subdomain, DNS-1035 label, label key and value), ``pkg/util/validation/validation.go`` (the same formats and
lengths), ``pkg/api/validation/path/name.go`` (path segment names).  Each function returns the problems as
short texts (empty: valid), worded like the API server's messages.
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63
LABEL_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL}$")
_DNS1123_SUBDOMAIN_RE = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_DNS1035_LABEL_RE = re.compile("^[a-z]([-a-z0-9]*[a-z0-9])?$")
_LABEL_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_NAME_RE = re.compile(f"^{_LABEL_NAME}$")
_LABEL_VALUE_RE = re.compile(f"^({_LABEL_NAME})?$")


def _too_long(value: str, limit: int) -> list[str]:
    return [f"must be no more than {limit} characters (is {len(value)})"] if len(value) > limit else []


def dns1123_label(value: str) -> list[str]:
    """Problems of ``value`` as a lowercase RFC 1123 label (Namespace names): ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``, 63."""
    problems = _too_long(value, DNS1123_LABEL_MAX)
    if not _DNS1123_LABEL_RE.match(value):
        problems.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                        "and must start and end with an alphanumeric character")
    return problems


def dns1123_subdomain(value: str) -> list[str]:
    """Problems of ``value`` as a lowercase RFC 1123 subdomain (most object names, label key prefixes), 253."""
    problems = _too_long(value, DNS1123_SUBDOMAIN_MAX)
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        problems.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                        "'.', and must start and end with an alphanumeric character")
    return problems


def dns1035_label(value: str) -> list[str]:
    """Problems of ``value`` as a DNS-1035 label (Service names): ``[a-z]([-a-z0-9]*[a-z0-9])?``, 63."""
    problems = _too_long(value, DNS1035_LABEL_MAX)
    if not _DNS1035_LABEL_RE.match(value):
        problems.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                        "alphabetic character, and end with an alphanumeric character")
    return problems


def path_segment(value: str) -> list[str]:
    """Problems of ``value`` as a path segment name (RBAC object names): not ``.``/``..``, no ``/`` or ``%``."""
    if value in (".", ".."):
        return [f"may not be {value!r}"]
    return [f"may not contain {c!r}" for c in ("/", "%") if c in value]


def label_key(key: str) -> list[str]:
    """Problems of ``key`` as a label (or annotation) key: optional DNS-1123 subdomain prefix and ``/``, then a
    name of at most 63 characters of ``[-A-Za-z0-9_.]`` that starts and ends with an alphanumeric character."""
    parts = key.split("/")
    problems: list[str] = []
    if len(parts) > 2:
        return ["a valid label key has at most one '/' (an optional DNS subdomain prefix, e.g. "
                "'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += [f"prefix part {p}" for p in dns1123_subdomain(prefix)]
    if not name:
        problems.append("name part must be non-empty")
        return problems
    problems += [f"name part {p}" for p in _too_long(name, LABEL_NAME_MAX)]
    if not _LABEL_NAME_RE.match(name):
        problems.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                        "end with an alphanumeric character")
    return problems


def label_value(value: str) -> list[str]:
    """Problems of ``value`` as a label value: empty, or at most 63 characters of ``[-A-Za-z0-9_.]`` that start and
    end with an alphanumeric character."""
    problems = _too_long(value, LABEL_VALUE_MAX)
    if not _LABEL_VALUE_RE.match(value):
        problems.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                        "'.', and must start and end with an alphanumeric character")
    return problems
