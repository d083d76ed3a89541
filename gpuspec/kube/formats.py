"""Value formats parsed by the programs that read rendered values: durations, quantities, time zones, image
references, paths, environment variable names.

Each function returns the problems of one string as short texts (empty: the consumer accepts it), worded like the
consumer's own error.  Sources, each at the version gpuspec pins its checks to:

- Go durations: Go 1.24 ``time.ParseDuration`` (``src/time/format.go``); Flux's duration fields add the CRD
  pattern ``^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$`` (fluxcd source-controller / kustomize-controller /
  helm-controller API ``v1``/``v2``, ``+kubebuilder:validation:Pattern``);
- Prometheus durations: prometheus/common ``model/time.go`` (``ParseDuration``), the pattern of the Prometheus
  Operator CRDs (``monitoring.coreos.com_prometheusrules``/``servicemonitors``, ``Duration``);
- quantities: apimachinery v0.35.2 ``pkg/api/resource/quantity.go`` (``ParseQuantity``); container requests and
  ResourceQuota values must not be negative (kubernetes ``pkg/apis/core/validation``
  ``ValidateNonnegativeQuantity``);
- time zones: the IANA tz database as Python's ``zoneinfo`` reads it (the data Go's ``time.LoadLocation`` reads);
- image references: distribution/reference ``regexp.go`` (the grammar containerd and the kubelet parse);
- environment variable names: kubernetes v1.35 ``pkg/apis/core/validation`` with
  ``RelaxedEnvironmentVariableValidation`` (GA in 1.34: printable ASCII except ``=``);
- container paths: kubernetes ``pkg/apis/core/validation`` (``validateVolumeMounts``: mountPath must be absolute
  on Linux), the container toolkit's file options (absolute host paths).
"""

from __future__ import annotations

import re
import zoneinfo
from functools import lru_cache

_GO_UNITS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
             "m": 60_000_000_000, "h": 3_600_000_000_000}
_INT64_MAX = 2**63 - 1
_FLUX_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")
_PROM_DURATION = re.compile(r"^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$")
_PROM_UNITS_MS = (365 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1_000, 1)
_QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$")
# distribution/reference regexp.go
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = f"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|{_IPV6})(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_REFERENCE_RE = re.compile(rf"^({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?$")
_REPOSITORY_RE = re.compile(rf"^{_NAME}$")
_PATH_COMPONENT_RE = re.compile(rf"^{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*$")
_TAG_RE = re.compile(rf"^{_TAG}$")
_DIGEST_RE = re.compile(rf"^{_DIGEST}$")
_NAME_TOTAL_MAX = 255


def go_duration(text: str) -> list[str]:
    """Problems of ``text`` as Go's ``time.ParseDuration`` reads it (e.g. ``1h30m``, ``300ms``, ``-1.5h``)."""
    quoted = f'time: invalid duration "{text}"'
    s = text
    if s[:1] in ("-", "+"):
        s = s[1:]
    if s == "0":
        return []
    if not s:
        return [quoted]
    total = 0.0
    while s:
        if not (s[0] == "." or s[0].isdigit()):
            return [quoted]
        match = re.match(r"([0-9]*)(?:\.([0-9]*))?", s)
        assert match is not None
        whole, frac = match.group(1), match.group(2)
        if not whole and not frac:
            return [quoted]  # ".s": no digits on either side of the dot
        s = s[match.end():]
        unit_end = next((i for i, c in enumerate(s) if c == "." or c.isdigit()), len(s))
        unit, s = s[:unit_end], s[unit_end:]
        if not unit:
            return [f'time: missing unit in duration "{text}"']
        if unit not in _GO_UNITS:
            return [f'time: unknown unit "{unit}" in duration "{text}"']
        total += float(f"{whole or '0'}.{frac or '0'}") * _GO_UNITS[unit]
        if total > _INT64_MAX:
            return [quoted]
    return []


def flux_duration(text: str) -> list[str]:
    """Problems of ``text`` as a Flux duration field (``metav1.Duration`` with the CRD's pattern)."""
    problems = go_duration(text)
    if not problems and not _FLUX_DURATION.match(text):
        problems.append(f"{text!r} does not match the CRD pattern {_FLUX_DURATION.pattern}")
    return problems


def prometheus_duration(text: str) -> list[str]:
    """Problems of ``text`` as a Prometheus duration (``30s``, ``1h30m``, ``2d``; units y w d h m s ms, each once,
    in that order)."""
    if text == "":
        return ["empty duration string"]
    if text == "0":
        return []
    match = _PROM_DURATION.match(text)
    if match is None:
        return [f'not a valid duration string: "{text}"']
    total = sum(int(match.group(2 * i + 2) or 0) * unit for i, unit in enumerate(_PROM_UNITS_MS))
    if total > _INT64_MAX // 1_000_000:
        return ["duration out of range"]
    return []


def quantity(text: str) -> list[str]:
    """Problems of ``text`` as ``resource.ParseQuantity`` reads it (``500m``, ``4``, ``32Gi``, ``1e3``)."""
    if not _QUANTITY.match(text):
        return ["quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"]
    return []


def nonnegative_quantity(text: str) -> list[str]:
    """Problems of ``text`` as a quantity the API server takes for a request, limit or quota (not negative)."""
    problems = quantity(text)
    if not problems and text.startswith("-") and re.search(r"[1-9]", text.split("e")[0].split("E")[0]):
        problems.append("must be greater than or equal to 0")
    return problems


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def time_zone(text: str) -> list[str]:
    """Problems of ``text`` as an IANA time zone name (``Europe/Berlin``, ``UTC``): a name of the tz database,
    matched exactly (Go's ``time.LoadLocation`` on Linux is case-sensitive too)."""
    if text in _zones():
        return []
    close = sorted(z for z in _zones() if z.lower() == text.lower())
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return [f"unknown time zone {text!r}: no such zone in the IANA tz database{hint}"]


def image_reference(text: str) -> list[str]:
    """Problems of ``text`` as a container image reference (``registry/path/name[:tag][@digest]``)."""
    match = _REFERENCE_RE.match(text)
    if match is None:
        return ["invalid reference format" + (": repository name must be lowercase"
                                              if _REFERENCE_RE.match(text.lower()) else "")]
    if len(match.group(1)) > _NAME_TOTAL_MAX:
        return [f"repository name must not be more than {_NAME_TOTAL_MAX} characters"]
    return []


def image_repository(text: str) -> list[str]:
    """Problems of ``text`` as the registry/path part an operand's ``repository`` value gives (no tag)."""
    return [] if _REPOSITORY_RE.match(text) else ["invalid reference format: not a registry and path"]


def image_name(text: str) -> list[str]:
    """Problems of ``text`` as the path part an operand's ``image`` value gives (joined after the repository)."""
    return [] if _PATH_COMPONENT_RE.match(text) else ["invalid reference format: not an image path component"]


def image_tag(text: str) -> list[str]:
    """Problems of ``text`` as an image tag (or a ``sha256:`` digest the operator joins with ``@``)."""
    if _TAG_RE.match(text) or _DIGEST_RE.match(text):
        return []
    return [f"invalid reference format: {text!r} is not a tag ([A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}) or a digest"]


def env_var_name(text: str) -> list[str]:
    """Problems of ``text`` as a container environment variable name (printable ASCII except ``=``)."""
    if text and all(" " <= c <= "~" and c != "=" for c in text):
        return []
    return ["a valid environment variable name must consist only of printable ASCII characters other than '='"]


def absolute_path(text: str) -> list[str]:
    """Problems of ``text`` as an absolute Linux path (a mount path, a host file the toolkit reads)."""
    if not text.startswith("/"):
        return ["must be an absolute path"]
    if "\x00" in text:
        return ["must not contain a NUL character"]
    return []
