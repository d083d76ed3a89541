"""Recognise credentials in spec values: private keys, passwords, tokens, cloud keys, URLs with user:password.

Pure functions over plain YAML data; they return what kind of secret was seen,
never the secret itself, so no report ever repeats it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from gpuspec.findings import SENSITIVE, DocPath, Finding
from gpuspec.loader.files import shard_name
from gpuspec.redaction import SecretHit, SecretProbe, classify_value, is_secret_key, scan
from gpuspec.usercache import ShardedMemo

__all__ = ["SecretHit", "classify_value", "is_secret_key", "mark_sensitive", "scan", "scan_files"]


def scan_files(files: Mapping[str, Any], keys: Mapping[str, bytes], scope: str) -> dict[str, list[SecretHit]]:
    """``scan`` of each file's data, remembered between runs by the digest of the file's text (``keys``;
    a file without a key is scanned every time).  ``scope`` names the memo (the fleet folder), sharded like the
    parse cache."""
    memo = ShardedMemo("credentials", scope) if keys else None
    out: dict[str, list[SecretHit]] = {}
    probe = SecretProbe()
    for file, data in files.items():
        key = keys.get(file)
        if memo is not None and key is not None:
            hit, stored = memo.get(shard_name(file), key)
            if hit and isinstance(stored, list):
                out[file] = [SecretHit(tuple(path), kind, at_key) for path, kind, at_key in stored]
                continue
        out[file] = list(scan(data)) if probe.holds_secret(data) else []
        if memo is not None and key is not None:
            memo.put(shard_name(file), key, [(h.path, h.kind, h.at_key) for h in out[file]])
    if memo is not None:
        memo.save()
    return out


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
