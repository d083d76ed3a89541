"""Field-by-field differences of two operator object specs, as the operator reads them, and their image references.

Compared as the operator reads a spec: a null, an empty string, list or map and an absent field are the same (Go's
zero value), numbers equal their text, and the labels the chart's operand-labels helper adds for Helm are not
settings.  The fields of an operand that is off on both sides (``enabled: false``, or absent) are not compared: they
run nothing.  Image references (``repository``/``image``/``version`` of one block) are compared as whole references
(:func:`image_refs`), not field by field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.matrix.chartspec import HELM_LABELS

#: Where the chart writes labels for Helm into an object's ``spec``.
_LABEL_PATHS = frozenset({"daemonsets.labels"})
#: The keys of a block that make its image reference.
IMAGE_KEYS = ("repository", "image", "version")


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


#: The value of a field one side does not have.
ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """One dotted ``path`` below ``spec`` where the two sides differ (:data:`ABSENT` when a side lacks it)."""

    path: str
    rendered: Any
    running: Any


def _zero(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def normalized(value: Any, at: str = "") -> Any:
    """``value`` with zero values (null, "", [], {}) and Helm's bookkeeping labels left out."""
    if isinstance(value, Mapping):
        out = {}
        for key, inner in value.items():
            if at in _LABEL_PATHS and key in HELM_LABELS:
                continue
            kept = normalized(inner, f"{at}.{key}" if at else str(key))
            if not _zero(kept):
                out[str(key)] = kept
        return out
    if isinstance(value, list):
        return [normalized(item, at) for item in value]
    return value


def same(a: Any, b: Any) -> bool:
    """Whether two normalized values mean the same (numbers equal their text, booleans only booleans)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (int, float, str)) and isinstance(b, (int, float, str)):
        return a == b or str(a) == str(b)
    return bool(a == b)


#: Operands the operator deploys only for sandbox workloads (``sandboxWorkloads.enabled``; gpu-operator
#: controllers/state_manager.go, the sandbox states): with it off on both sides their settings do not matter.
SANDBOX_OPERANDS = frozenset({"sandboxDevicePlugin", "vfioManager", "vgpuManager", "vgpuDeviceManager", "kataManager",
                              "ccManager", "kataSandboxDevicePlugin"})


def _sandbox_off(spec: Any) -> bool:
    block = spec.get("sandboxWorkloads") if isinstance(spec, Mapping) else None
    return not (isinstance(block, Mapping) and block.get("enabled") is True)


def _off(block: Any) -> bool:
    """True for an operand block that runs nothing on its side: absent, or ``enabled: false``."""
    return block is ABSENT or (isinstance(block, Mapping) and block.get("enabled") is False)


def _is_image_block(block: Any) -> bool:
    return isinstance(block, Mapping) and isinstance(block.get("image"), str)


def _walk(rendered: Any, running: Any, prefix: str) -> Iterator[FieldDifference]:
    r_map, c_map = isinstance(rendered, Mapping), isinstance(running, Mapping)
    if (r_map or c_map) and (r_map or rendered is ABSENT) and (c_map or running is ABSENT):
        r: Mapping[str, Any] = rendered if r_map else {}
        c: Mapping[str, Any] = running if c_map else {}
        if ("enabled" in r or "enabled" in c) and _off(rendered) and _off(running):
            return  # an operand off on both sides runs nothing: its settings do not matter
        images = _is_image_block(r) or _is_image_block(c)
        for key in sorted({*r, *c}):
            if images and key in IMAGE_KEYS:
                continue
            yield from _walk(r.get(key, ABSENT), c.get(key, ABSENT), f"{prefix}.{key}" if prefix else key)
        return
    if not same(rendered, running):
        yield FieldDifference(prefix, rendered, running)


def _without_sandbox(rendered: Mapping[str, Any], running: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both specs without the sandbox operands when neither side runs sandbox workloads."""
    if not (_sandbox_off(rendered) and _sandbox_off(running)):
        return dict(rendered), dict(running)
    return ({k: v for k, v in rendered.items() if k not in SANDBOX_OPERANDS},
            {k: v for k, v in running.items() if k not in SANDBOX_OPERANDS})


def differences(rendered: Mapping[str, Any], running: Mapping[str, Any]) -> list[FieldDifference]:
    """Every path where the normalized ``rendered`` and ``running`` specs differ (maps key by key, lists whole)."""
    mine, theirs = _without_sandbox(rendered, running)
    return list(_walk(normalized(mine), normalized(theirs), ""))


def image_ref(block: Mapping[str, Any]) -> str | None:
    """The image reference a block's ``repository``/``image``/``version`` make, or None without an image."""
    image = block.get("image")
    if not isinstance(image, str) or not image:
        return None
    repository = str(block.get("repository") or "").rstrip("/")
    version = str(block.get("version") or "")
    ref = f"{repository}/{image}" if repository else image
    if version:
        ref += f"@{version}" if version.startswith("sha256:") else f":{version}"
    return ref


def image_refs(spec: Any, other: Any = ABSENT, prefix: str = "") -> dict[str, str]:
    """Block path -> image reference of every block of ``spec`` with an image, leaving out the operands that are
    off in ``spec`` and in ``other`` (the other side's spec, when comparing)."""
    out: dict[str, str] = {}
    if not isinstance(spec, Mapping):
        return out
    if not prefix and isinstance(other, Mapping):
        spec, other = _without_sandbox(spec, other)
    if _off(spec) and _off(other) and "enabled" in spec:
        return out
    ref = image_ref(spec)
    if ref is not None:
        out[prefix] = ref
    for key, value in spec.items():
        if isinstance(value, Mapping):
            counterpart = other.get(key, ABSENT) if isinstance(other, Mapping) else ABSENT
            out.update(image_refs(value, counterpart, f"{prefix}.{key}" if prefix else str(key)))
    return out
