"""The consumers of rendered values: for each kind of string gpuspec writes, the program that reads it and a check
that reads it as that program does.

``data/consumers.yaml`` names each check's program, its source and the values that program accepts and refuses
(from its documented behaviour; tests/kube/test_consumers.py runs them); ``data/rendered-fields.yaml`` says, for
every string field of the rendered objects and values, which check applies or that it is free text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from gpuspec.kube import formats, selectors, syntax
from gpuspec.kube.objects import name_rule

#: A check: (value, apiVersion, kind of the object holding it) → problems (empty: the consumer accepts it).
Check = Callable[[str, str, str], list[str]]

_NAME_CHECKS = {
    "dns1123-label": syntax.dns1123_label,
    "dns1035-label": syntax.dns1035_label,
    "path-segment": syntax.path_segment,
    "dns1123-subdomain": syntax.dns1123_subdomain,
}


def _object_name(value: str, api_version: str, kind: str) -> list[str]:
    rule, _ = name_rule(api_version, kind)
    return _NAME_CHECKS[rule](value)


def _plain(check: Callable[[str], list[str]]) -> Check:
    return lambda value, _api_version, _kind: check(value)


def _key_value_pair(value: str) -> list[str]:
    """``KEY=VALUE`` (Argo CD sync options)."""
    key, eq, _ = value.partition("=")
    return [] if eq and key and key.replace("-", "").isalnum() else [f"{value!r} is not KEY=VALUE"]


def _key_value_list(value: str) -> list[str]:
    """A comma-separated list of ``KEY=VALUE`` (Argo CD's ``sync-options`` annotation)."""
    return [p for part in value.split(",") for p in _key_value_pair(part)]


def _integer(value: str) -> list[str]:
    """A decimal integer (strconv.Atoi / int())."""
    digits = value[1:] if value[:1] == "-" else value
    return [] if digits.isascii() and digits.isdigit() else [f"{value!r} is not an integer"]


def _number(value: str) -> list[str]:
    """A decimal number (strconv.ParseFloat / float())."""
    try:
        float(value)
    except ValueError:
        return [f"{value!r} is not a number"]
    return [] if value.strip() == value and value.lower() not in ("nan", "inf", "-inf", "+inf") else [
        f"{value!r} is not a finite number"]


def _percent(value: str) -> list[str]:
    """An int-or-string given as a string: ``intstr.GetScaledValueFromIntOrPercent`` takes only ``<int>%``."""
    digits = value[:-1] if value.endswith("%") else ""
    return [] if digits.isascii() and digits.isdigit() else [
        f"invalid value for IntOrString: invalid type: string {value!r} is not a percentage"]


def _yaml_map_or_empty(value: str) -> list[str]:
    return [] if value == "" else _yaml_map(value)


def _python_source(value: str) -> list[str]:
    """Python source the acceptance Jobs run (python3 in the image compiles it)."""
    try:
        compile(value, "<configmap>", "exec")
    except SyntaxError as err:
        return [f"python: {err.msg} (line {err.lineno})"]
    return []


def _json_text(value: str) -> list[str]:
    import json
    try:
        json.loads(value)
    except ValueError as err:
        return [f"json: {err}"]
    return []


def _yaml_map(value: str) -> list[str]:
    try:
        data = yaml.safe_load(value)
    except yaml.YAMLError as err:
        return [f"yaml: {str(err).splitlines()[0]}"]
    return [] if isinstance(data, Mapping) else ["yaml: not a mapping"]


def _taint_tag(value: str) -> list[str]:
    """cluster-autoscaler AWS ``node-template/taint/<key>`` tag value: ``value:Effect``."""
    taint_value, sep, effect = value.rpartition(":")
    problems = [] if sep else [f"{value!r} is not value:Effect"]
    if sep and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
        problems.append(f"effect {effect!r} is not NoSchedule, PreferNoSchedule or NoExecute")
    return problems + (syntax.label_value(taint_value) if sep else [])


def _gpu_total_flag(value: str) -> list[str]:
    """cluster-autoscaler ``--gpu-total=<gpu_type>:<min>:<max>`` (``parseMultipleGpuLimits``)."""
    flag, eq, spec = value.partition("=")
    if flag != "--gpu-total" or not eq:
        return [f"{value!r} is not --gpu-total=<type>:<min>:<max>"]
    parts = spec.split(":")
    if len(parts) != 3 or not parts[0]:
        return [f"incorrect gpu limit specification: {spec}"]
    if not parts[1].isdigit() or not parts[2].isdigit():
        return [f"incorrect gpu limit specification: {spec}"]
    if int(parts[1]) > int(parts[2]):
        return [f"incorrect gpu limits specification: {spec}, min must not be greater than max"]
    return []


def _url(schemes: tuple[str, ...]) -> Check:
    def check(value: str, _api_version: str, _kind: str) -> list[str]:
        from urllib.parse import urlsplit
        try:
            parts = urlsplit(value)
        except ValueError as err:
            return [f"url: {err}"]
        if parts.scheme not in schemes or not parts.netloc:
            return [f"{value!r} is not a {'/'.join(schemes)} URL with a host"]
        return []
    return check


def _argocd_repo(value: str, api_version: str, kind: str) -> list[str]:
    """An Argo CD source ``repoURL``: a git or Helm URL, or an OCI Helm repository written without a scheme."""
    if not _url(("https", "http", "ssh", "oci"))(value, api_version, kind) or not formats.image_repository(value):
        return []
    return [f"{value!r} is neither an https/http/ssh/oci URL nor an OCI repository (host/path)"]


def _enum(allowed: tuple[str, ...]) -> Check:
    def check(value: str, _api_version: str, _kind: str) -> list[str]:
        return [] if value in allowed else [f"{value!r} is not one of {', '.join(allowed)}"]
    return check


#: Every check by id (``data/consumers.yaml`` describes each; ``enum`` takes its values from the field entry).
CHECKS: dict[str, Check] = {
    "object-name": _object_name,
    "dns1123-subdomain": _plain(syntax.dns1123_subdomain),
    "dns1123-label": _plain(syntax.dns1123_label),
    "dns1035-label": _plain(syntax.dns1035_label),
    "label-key": _plain(syntax.label_key),
    "label-value": _plain(syntax.label_value),
    "label-selector": _plain(selectors.label_selector),
    "field-selector": _plain(selectors.field_selector),
    "go-duration": _plain(formats.go_duration),
    "flux-duration": _plain(formats.flux_duration),
    "prometheus-duration": _plain(formats.prometheus_duration),
    "quantity": _plain(formats.nonnegative_quantity),
    "time-zone": _plain(formats.time_zone),
    "image-reference": _plain(formats.image_reference),
    "image-repository": _plain(formats.image_repository),
    "image-name": _plain(formats.image_name),
    "image-tag": _plain(formats.image_tag),
    "env-var-name": _plain(formats.env_var_name),
    "absolute-path": _plain(formats.absolute_path),
    "integer": _plain(_integer),
    "number": _plain(_number),
    "key-value-list": _plain(_key_value_list),
    "python-source": _plain(_python_source),
    "json": _plain(_json_text),
    "yaml-map": _plain(_yaml_map),
    "yaml-map-or-empty": _plain(_yaml_map_or_empty),
    "percent": _plain(_percent),
    "asg-taint-tag": _plain(_taint_tag),
    "gpu-total-flag": _plain(_gpu_total_flag),
    "git-url": _url(("https", "http", "ssh")),
    "oci-url": _url(("oci",)),
    "helm-repo-url": _url(("https", "http", "oci")),
    "argocd-repo-url": _argocd_repo,
}


@dataclass(frozen=True, slots=True)
class Consumer:
    """One check as ``data/consumers.yaml`` describes it: the program, its source, documented examples."""

    id: str
    program: str
    source: str
    accepts: tuple[str, ...]
    refuses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FieldRule:
    """One entry of ``data/rendered-fields.yaml``: fields matching ``match`` (``<Kind or file>:<dotted path>``,
    ``[]`` for list items, shell wildcards) are read by ``check`` (with ``values`` for an enum), checked by the
    real ``tool`` in ``gpuspec verify``, or ``free`` text nobody parses (the reason)."""

    match: str
    check: str | None
    values: tuple[str, ...]
    tool: str | None
    free: str | None
    consumer: str

    def run(self, value: str, api_version: str, kind: str) -> list[str]:
        """Problems of ``value`` by this field's check (none for free text or a tool-checked field)."""
        if self.check == "enum":
            return _enum(self.values)(value, api_version, kind)
        if self.check is None:
            return []
        return CHECKS[self.check](value, api_version, kind)


def _load(name: str) -> Any:
    return yaml.safe_load(resources.files("gpuspec.kube").joinpath("data", name).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def consumers() -> dict[str, Consumer]:
    """The checks of ``data/consumers.yaml`` by id."""
    return {c["id"]: Consumer(c["id"], c["program"], c["source"], tuple(c["accepts"]), tuple(c["refuses"]))
            for c in _load("consumers.yaml")["checks"]}


@lru_cache(maxsize=1)
def field_rules() -> tuple[FieldRule, ...]:
    """The entries of ``data/rendered-fields.yaml``, in order (the first match wins)."""
    return tuple(FieldRule(e["match"], e.get("check"), tuple(e.get("values", ())), e.get("tool"), e.get("free"),
                           e.get("consumer", "")) for e in _load("rendered-fields.yaml")["fields"])


def field_key(doc: str, path: tuple[str | int, ...]) -> str:
    """The inventory key of a field: ``<doc>:<path>`` with list indexes as ``[]``."""
    return doc + ":" + ".".join("[]" if isinstance(p, int) else str(p) for p in path)


@lru_cache(maxsize=4096)
def rule_for(key: str) -> FieldRule | None:
    """The first entry of ``data/rendered-fields.yaml`` matching field ``key``, or None."""
    return next((r for r in field_rules() if _pattern(r.match).match(key)), None)


@lru_cache(maxsize=512)
def _pattern(match: str) -> re.Pattern[str]:
    """``*`` matches any text (dots included); everything else, ``[]`` too, is literal."""
    return re.compile("^" + ".*".join(re.escape(part) for part in match.split("*")) + "$")


def string_fields(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string leaf below ``node`` with its path."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from string_fields(value, (*path, str(key)))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from string_fields(item, (*path, index))
    elif isinstance(node, str):
        yield path, node
