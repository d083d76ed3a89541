"""Pydantic models of the few fields gpuspec reads from `kubectl get ... -o json`, and their parsing.

Only the fields audit and import need are modelled; everything else in the
exported objects is ignored.  Problems with the input are `GpuspecError`s
(exit 2) that name the file, and line and column for JSON syntax errors.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuspec.errors import GpuspecError
from gpuspec.redaction import one_line

#: Display name of standard input in messages.
STDIN = "<stdin>"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class ObjectMeta(_Model):
    """Name and labels of a Kubernetes object."""

    name: str
    labels: dict[str, str] = Field(default_factory=dict)


class NodeTaint(_Model):
    """A taint on a node."""

    key: str
    value: str = ""
    effect: str = ""


class NodeSpec(_Model):
    """The node fields audit reads from `spec`: cordon and taints."""

    unschedulable: bool = False
    taints: list[NodeTaint] = Field(default_factory=list)
    provider_id: str = Field(default="", alias="providerID")


class Condition(_Model):
    """A status condition (node or operator custom resource)."""

    type: str
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None


class NodeInfo(_Model):
    """Versions the kubelet reports about its node."""

    kubelet_version: str = Field(default="", alias="kubeletVersion")
    container_runtime_version: str = Field(default="", alias="containerRuntimeVersion")
    os_image: str = Field(default="", alias="osImage")
    kernel_version: str = Field(default="", alias="kernelVersion")


class NodeStatus(_Model):
    """Conditions, resources and versions of a node."""

    conditions: list[Condition] = Field(default_factory=list)
    capacity: dict[str, str] = Field(default_factory=dict)
    allocatable: dict[str, str] = Field(default_factory=dict)
    node_info: NodeInfo = Field(default_factory=NodeInfo, alias="nodeInfo")


class Node(_Model):
    """A Kubernetes Node as `kubectl get nodes -o json` prints it (only the fields gpuspec reads)."""

    kind: str = "Node"
    metadata: ObjectMeta
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)

    @property
    def name(self) -> str:
        """The node's name."""
        return self.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        """The node's labels."""
        return self.metadata.labels


class OperatorStatus(_Model):
    """`status` of a ClusterPolicy or NVIDIADriver."""

    state: str | None = None
    conditions: list[Condition] = Field(default_factory=list)


class OperatorResourceSpec(_Model):
    """The NVIDIADriver spec fields audit reads (ClusterPolicy has none that audit needs)."""

    version: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict, alias="nodeSelector")
    use_precompiled: bool | None = Field(default=None, alias="usePrecompiled")


class OperatorResource(_Model):
    """A ClusterPolicy or NVIDIADriver custom resource of the GPU Operator."""

    kind: str
    metadata: ObjectMeta
    spec: OperatorResourceSpec = Field(default_factory=OperatorResourceSpec)
    status: OperatorStatus = Field(default_factory=OperatorStatus)


class _ItemList(_Model):
    kind: str | None = None
    items: list[dict[str, Any]]


#: Kinds `kubectl get clusterpolicies,nvidiadrivers -o json` prints.
OPERATOR_KINDS = ("ClusterPolicy", "NVIDIADriver")


#: Most digits a JSON number may have (Python refuses to convert integers past 4,300 digits).
MAX_NUMBER_DIGITS = 100


def _bounded_int(text: str) -> int:
    """A JSON integer, refused past :data:`MAX_NUMBER_DIGITS` digits."""
    if len(text) > MAX_NUMBER_DIGITS:
        raise _NumberTooLong(len(text))
    return int(text)


class _NumberTooLong(Exception):
    """A JSON integer with too many digits (its digit count)."""


def load_json(text: str, display: str) -> Any:
    """Parse JSON text, raising a GpuspecError that names ``display`` and the line and column of a syntax error."""
    try:
        return json.loads(text, parse_int=_bounded_int)
    except _NumberTooLong as exc:
        raise GpuspecError(f"{display}: invalid JSON: a number with {exc.args[0]} digits "
                           f"(at most {MAX_NUMBER_DIGITS})") from None
    except json.JSONDecodeError as exc:
        raise GpuspecError(
            f"{display}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}",
            hint="pass the output of `kubectl get ... -o json` (YAML output is not accepted)",
        ) from None
    except RecursionError:
        raise GpuspecError(f"{display}: invalid JSON: nested too deeply") from None


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<document>"


def _shape_error(display: str, what: str, exc: ValidationError, prefix: tuple[int | str, ...] = ()) -> GpuspecError:
    errors = exc.errors()
    parts = [f"{_location((*prefix, *e['loc']))}: {e['msg']}" for e in errors[:3]]
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return GpuspecError(f"{display}: not {what}: {'; '.join(parts)}{more}")


def _items(data: Any, display: str, what: str, single_kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    if isinstance(data, dict) and data.get("kind") in single_kinds:
        return [data]
    try:
        listing = _ItemList.model_validate(data)
    except ValidationError as exc:
        raise _shape_error(display, what, exc) from None
    return listing.items


def _kind_words(kind: Any, missing: str) -> str:
    """How a message names an item's ``kind``: its text when it is a short string, never a structure's content."""
    if not kind:
        return missing
    if isinstance(kind, str) and len(kind) <= 63:
        return one_line(kind)
    return f"kind of type {type(kind).__name__}"


def parse_nodes(text: str, display: str) -> list[Node]:
    """The nodes of a `kubectl get nodes -o json` document (a List, a NodeList or a single Node)."""
    what = "the output of `kubectl get nodes -o json` (a List of Nodes)"
    items = _items(load_json(text, display), display, what, ("Node",))
    nodes: list[Node] = []
    for index, item in enumerate(items):
        kind = item.get("kind", "Node") if isinstance(item, dict) else None
        if kind != "Node":
            raise GpuspecError(f"{display}: items[{index}] is a {_kind_words(kind, 'non-object')}, "
                               f"expected a Node ({what})")
        try:
            nodes.append(Node.model_validate(item))
        except ValidationError as exc:
            raise _shape_error(display, what, exc, ("items", index)) from None
    duplicates = sorted(name for name, count in Counter(n.name for n in nodes).items() if count > 1)
    if duplicates:
        raise GpuspecError(f"{display}: node {duplicates[0]!r} appears more than once")
    return nodes


def parse_operator_resources(text: str, display: str) -> list[OperatorResource]:
    """The ClusterPolicy and NVIDIADriver objects of a `kubectl get clusterpolicies,nvidiadrivers -o json` document."""
    what = "the output of `kubectl get clusterpolicies,nvidiadrivers -o json`"
    items = _items(load_json(text, display), display, what, OPERATOR_KINDS)
    found: list[OperatorResource] = []
    for index, item in enumerate(items):
        kind = item.get("kind") if isinstance(item, dict) else None
        if kind not in OPERATOR_KINDS:
            raise GpuspecError(
                f"{display}: items[{index}] is a {_kind_words(kind, 'object without kind')}, "
                "expected ClusterPolicy or NVIDIADriver"
            )
        try:
            found.append(OperatorResource.model_validate(item))
        except ValidationError as exc:
            raise _shape_error(display, what, exc, ("items", index)) from None
    return found


#: Largest node or operator export read (about 100,000 nodes of `kubectl get nodes -o json`).
MAX_INPUT_BYTES = 256 * 1024 * 1024


def read_input(source: str) -> tuple[str, str]:
    """The text of ``source`` (a file path, or ``-`` for standard input) and the name to show for it.

    A file is read like a fleet file (:func:`~gpuspec.loader.safefile.read_bounded`): a regular file of at
    most :data:`MAX_INPUT_BYTES`, never inside a ``.git`` folder, never a link out of the repository, a FIFO
    or a device.  Standard input is read up to the same bound.
    """
    from gpuspec.loader.safefile import UnsafeFile, read_bounded

    if source == "-":
        import sys

        try:
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1) if hasattr(sys.stdin, "buffer") else \
                sys.stdin.read(MAX_INPUT_BYTES + 1).encode("utf-8", "surrogatepass")
        except (OSError, ValueError) as exc:
            raise GpuspecError(f"{STDIN}: cannot read: {exc}") from None
        if len(data) > MAX_INPUT_BYTES:
            raise GpuspecError(f"{STDIN}: larger than the {MAX_INPUT_BYTES}-byte limit") from None
        try:
            return data.decode("utf-8"), STDIN
        except UnicodeDecodeError:
            raise GpuspecError(f"{STDIN}: not UTF-8 text") from None
    path = Path(source)
    shown = one_line(source)
    try:
        return read_bounded(path, MAX_INPUT_BYTES).decode("utf-8"), source
    except FileNotFoundError:
        raise GpuspecError(f"{shown}: no such file",
                           hint="export it with `kubectl get nodes -o json > nodes.json` or pass - for stdin") from None
    except UnsafeFile as refused:
        raise GpuspecError(f"{shown}: {refused.message}") from None
    except IsADirectoryError:
        raise GpuspecError(f"{shown}: is a directory, expected a JSON file") from None
    except UnicodeDecodeError:
        raise GpuspecError(f"{shown}: not UTF-8 text") from None
    except OSError as exc:
        raise GpuspecError(f"{shown}: cannot read: {exc.strerror or exc}") from None
