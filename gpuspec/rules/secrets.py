"""Recognise credentials in spec values: private keys, passwords, tokens, cloud keys, URLs with user:password.

Pure functions over plain YAML data; they return what kind of secret was seen,
never the secret itself, so no report ever repeats it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpuspec.findings import SENSITIVE, DocPath, Finding

#: Value patterns, each with the words a finding uses for it.
_VALUE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"), "a PEM private key"),
    (re.compile(r"-----BEGIN CERTIFICATE-----[\s\S]*PRIVATE KEY"), "a PEM private key"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{16,}=*"), "a bearer token"),
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), "an AWS access key id"),
    (re.compile(r"(?i)aws_secret_access_key\s*[=:]\s*\S{20,}"), "an AWS secret access key"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), "a GitHub token"),
    (re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b"), "a GitLab token"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), "a Slack token"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "a JSON Web Token"),
    (re.compile(r"\bnvapi-[A-Za-z0-9_\-]{20,}"), "an NGC API key"),
    (re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@"), "a URL with user:password"),
    (re.compile(r'"auths"\s*:\s*\{'), "a Docker registry config with credentials"),
)

#: Mapping keys whose (non-empty) value is a credential.
_SECRET_KEY = re.compile(
    r"(?i)^(?:.*[-_.])?(pass(word|wd)?|pwd|secret|token|api[-_]?key|access[-_]?key|secret[-_]?key"
    r"|private[-_]?key|client[-_]?secret|credentials?)$"
)
#: Schema keys that hold Kubernetes object names, not secret values.
_NAME_KEYS = frozenset({"pullSecrets", "kubeConfigSecret"})


@dataclass(frozen=True, slots=True)
class SecretHit:
    """Where a credential was seen and what kind it is (never the value)."""

    path: DocPath
    kind: str
    at_key: bool = False


def classify_value(text: str) -> str | None:
    """The kind of credential ``text`` contains, or None."""
    for pattern, kind in _VALUE_PATTERNS:
        if pattern.search(text):
            return kind
    return None


def is_secret_key(key: str) -> bool:
    """True when a mapping key names a credential (``password``, ``apiKey``, ``db_token``…)."""
    return key not in _NAME_KEYS and bool(_SECRET_KEY.match(key))


def scan(data: Any, path: DocPath = ()) -> Iterator[SecretHit]:
    """Every credential written in ``data`` (plain YAML data), with its document path."""
    if isinstance(data, dict):
        for key, value in data.items():
            child = (*path, key if isinstance(key, str | int) else str(key))
            if isinstance(key, str) and is_secret_key(key) and value not in (None, "", [], {}) and not isinstance(
                value, bool
            ):
                yield SecretHit(child, f"a value under the credential-like key {key!r}")
                continue
            if isinstance(key, str):
                kind = classify_value(key)
                if kind:
                    yield SecretHit(child, kind, at_key=True)
                    continue
            yield from scan(value, child)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from scan(item, (*path, index))
    elif isinstance(data, str):
        kind = classify_value(data)
        if kind:
            yield SecretHit(path, kind)


def mark_sensitive(findings: Sequence[Finding], raw: Mapping[str, Any]) -> list[Finding]:
    """Tag every finding that sits on a credential (same file, same or enclosing spec path) as sensitive.

    Reporters show no source excerpt of sensitive findings, so an unknown-key or wrong-type error on a
    line that holds a password never repeats it in a CI log.  Only files that have findings are scanned.
    """
    files = {f.file for f in findings if f.file is not None and f.file in raw}
    hits: dict[str, list[DocPath]] = {file: [hit.path for hit in scan(raw[file])] for file in sorted(files)}
    out: list[Finding] = []
    for finding in findings:
        paths = hits.get(finding.file or "", [])
        touches = any(p[: len(finding.path)] == finding.path and finding.path for p in paths) or any(
            finding.path[: len(p)] == p for p in paths)
        if touches and SENSITIVE not in finding.tags:
            finding = replace(finding, tags=(*finding.tags, SENSITIVE))
        out.append(finding)
    return out
