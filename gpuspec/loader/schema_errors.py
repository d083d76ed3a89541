"""Turn pydantic validation errors into findings with the spec's own words."""

from __future__ import annotations

import difflib
import functools
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from gpuspec.catalogue.validate import BAD_API_VERSION, BAD_VALUE, MISSING_KEY, UNKNOWN_KEY
from gpuspec.findings import DocPath, Finding
from gpuspec.redaction import REDACTED, contains_secret, is_secret_key


@functools.cache
def _pattern_words() -> dict[str, str]:
    """What each spec pattern means, in words (built on the first schema error: it needs the spec models)."""
    from gpuspec.model import pool_specs, types

    return {
        types.DNS_LABEL_PATTERN: "a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters, "
        "starting and ending with a letter or digit",
        r"^1\.[0-9]{1,2}$": 'a Kubernetes minor version such as "1.31" (quote it in YAML)',
        r"^v[0-9]{2}\.[0-9]{1,2}\.[0-9]{1,2}$": 'a GPU Operator release such as "v25.10.1"',
        r"^[0-9]{3}$": 'a driver branch such as "580"',
        r"^[0-9]{3}\.[0-9]{1,3}(\.[0-9]{1,3})?$": 'a driver version such as "580.95.05"',
        r"^[0-9]{1,3}%$": 'a whole number or a percentage such as "25%"',
        types.PRODUCT_PATTERN: 'a GPU product id such as "H100-SXM5-80GB"',
        types.REGISTRY_HOST_PATTERN: 'a registry host such as "nvcr.io" (lowercase, optional :port)',
        types.MIRROR_PREFIX_PATTERN: 'a mirror prefix: registry host and path such as "harbor.example.internal/nvcr" '
        "(no scheme, no tag, no digest, lowercase)",
        types.OS_VERSION_PATTERN: 'an OS version such as "22.04"',
        types.KERNEL_PATTERN: 'a kernel release such as "5.15.0-105-generic"',
        types.MIG_PROFILE_PATTERN: 'a MIG profile such as "1g.10gb" or "1g.24gb+me"',
        types.MIG_RESOURCE_PATTERN: 'a MIG resource such as "mig-1g.10gb" (nvidia.com/ is added)',
        types.REPO_PATH_PATTERN: 'a folder inside the repository such as "rendered" (relative, no "..")',
        pool_specs.IMAGE_REF_PATTERN:
            'an image with a tag or digest such as "nvcr.io/nvidia/pytorch:25.01-py3" (lowercase repository, no '
            "scheme)",
        pool_specs.QUANTITY_PATTERN: 'a CPU or memory quantity such as "500m", "4" or "16Gi"',
        pool_specs.RESOURCE_NAME_PATTERN: 'a resource name such as "rdma/rdma_shared_device_a"',
        pool_specs.WORKLOAD_NAME_PATTERN: "a short name: lowercase letters, digits and '-', at most 20 characters",
    }


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types an annotation may hold (Optional, unions and Annotated removed)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    return [annotation]


def _model_at(root: type[BaseModel], path: DocPath) -> type[BaseModel] | None:
    """The model class that describes the mapping at ``path``, if there is one."""
    current: list[Any] = [root]
    for part in path:
        following: list[Any] = []
        for candidate in current:
            origin = typing.get_origin(candidate)
            if isinstance(candidate, type) and issubclass(candidate, BaseModel) and isinstance(part, str):
                for name, field in candidate.model_fields.items():
                    if part in (field.alias, name):
                        following.extend(_unwrap(field.annotation))
            elif origin is list and isinstance(part, int):
                following.extend(_unwrap(typing.get_args(candidate)[0]))
            elif origin is dict:
                following.extend(_unwrap(typing.get_args(candidate)[1]))
        current = following
    for candidate in current:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def known_keys(model: type[BaseModel]) -> list[str]:
    """The keys a spec file may use in a mapping described by ``model``."""
    return [field.alias or name for name, field in model.model_fields.items()]


def _data_path(data: Any, loc: tuple[int | str, ...]) -> DocPath:
    """Keep the parts of a pydantic location that exist in the data (drop union-member tags)."""
    out: list[str | int] = []
    node: Any = data
    for part in loc:
        in_mapping = isinstance(node, dict) and part in node
        in_sequence = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_mapping or in_sequence:
            out.append(part)
            node = node[part]
        # otherwise: a union-member tag or an absent key; it names no place in the file
    return tuple(out)


def _describe(value: Any) -> str:
    if isinstance(value, int) and value.bit_length() > 4096:  # repr refuses past 4,300 digits
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _message(error: ErrorDetails, input_value: Any) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        words = _pattern_words().get(pattern)
        if words:
            return f"{_describe(input_value)} is not {words}"
    if kind == "literal_error":
        return f"{_describe(input_value)} is not one of {ctx.get('expected', '')}"
    if kind == "enum":
        return f"{_describe(input_value)} is not one of {ctx.get('expected', '')}"
    return f"{error['msg']} (got {_describe(input_value)})"


def schema_findings(
    error: ValidationError, data: Any, model: type[BaseModel], file: str
) -> list[Finding]:
    """Findings for every problem pydantic found when building ``model`` from ``data`` read from ``file``."""
    findings: dict[tuple[DocPath, str], Finding] = {}
    preferred = ("string_pattern_mismatch", "literal_error", "enum")
    errors = sorted(error.errors(), key=lambda e: 0 if e["type"] in preferred else 1)
    for err in errors:
        loc = tuple(err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden":
            path = _data_path(data, loc)
            key = str(loc[-1])
            parent = _model_at(model, path[:-1])
            choices = known_keys(parent) if parent else []
            close = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else (
                f"known keys here: {', '.join(sorted(choices))}" if choices else None
            )
            finding = UNKNOWN_KEY.finding(f"unknown key {key!r}", file, path, hint, at_key=True)
        elif kind == "missing":
            path = _data_path(data, loc[:-1])
            finding = MISSING_KEY.finding(f"missing required key {str(loc[-1])!r}", file, path,
                              at_key=True)
        else:
            path = _data_path(data, loc)
            rule = BAD_API_VERSION if path and path[-1] in ("apiVersion", "kind") and len(path) == 1 else BAD_VALUE
            value = err.get("input")
            secret = any(isinstance(p, str) and is_secret_key(p) for p in path) or contains_secret(value)
            shown = REDACTED if secret else value
            finding = rule.finding(_message(err, shown), file, path)
        findings.setdefault((finding.path, finding.rule_id), finding)
    return list(findings.values())
