"""Pydantic models of the few fields gpuspec reads from `kubectl get ... -o json`, and their parsing.

Only the fields audit and import need are modelled; everything else in the
exported objects is ignored.  Exports are read through
:mod:`gpuspec.loader.exportread`: items one at a time, each turned into its
model before the next is decoded, within the limits that module names.
Problems with the input are `GpuspecError`s (exit 2) that name the file, and
line and column for JSON syntax errors.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuspec.errors import GpuspecError
from gpuspec.loader import exportread
from gpuspec.loader.exportread import (
    ENTRY_COST,
    MAX_NODES,
    MAX_OPERATOR_RESOURCES,
    MODEL_COST,
    OBJECT_COST,
    Export,
    KeptBudget,
    ListReader,
    SharedStrings,
    entries,
)
from gpuspec.redaction import one_line

#: Display name of standard input in messages.
STDIN = exportread.STDIN


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


#: The annotations kept of an exported object: NVIDIA's (the driver upgrade state machine's); the rest, which can be
#: large (kubectl's last-applied-configuration), is never kept.
KEPT_ANNOTATION_PREFIX = "nvidia.com/"


class ObjectMeta(_Model):
    """Name, labels and NVIDIA's annotations of a Kubernetes object."""

    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @field_validator("annotations", mode="before")
    @classmethod
    def _nvidia_only(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if isinstance(k, str) and k.startswith(KEPT_ANNOTATION_PREFIX)
                    and isinstance(v, str) and len(v) <= 1024}
        return value


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

    @property
    def annotations(self) -> dict[str, str]:
        """The node's NVIDIA annotations (see :data:`KEPT_ANNOTATION_PREFIX`)."""
        return self.metadata.annotations


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
MAX_NUMBER_DIGITS = exportread.MAX_NUMBER_DIGITS


def load_json(text: str | Export, display: str) -> Any:
    """Parse a whole JSON document, raising a GpuspecError that names ``display`` and the line and column of a
    syntax error."""
    return exportread.load_json(text, display)


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


def _list_shape(reading: ListReader, display: str, what: str) -> None:
    """Raise the shape error of a document that is neither a List nor one object of the kinds read."""
    data = reading.document
    try:
        _ItemList.model_validate({**data, "items": []} if reading.streamed else data)
    except ValidationError as exc:
        raise _shape_error(display, what, exc) from None


def _kind_words(kind: Any, missing: str) -> str:
    """How a message names an item's ``kind``: its text when it is a short string, never a structure's content."""
    if not kind:
        return missing
    if isinstance(kind, str) and len(kind) <= 63:
        return one_line(kind)
    return f"kind of type {type(kind).__name__}"


def _too_many(display: str, count: int, noun: str, why: str) -> GpuspecError:
    return GpuspecError(f"{one_line(display)}: more than {count:,} {noun}; {why}; not read")


def _node_cost(item: Any) -> int:
    """What the Node of ``item`` keeps in memory (estimated, bytes)."""
    maps = entries(item, "metadata", "labels") + entries(item, "status", "capacity") + \
        entries(item, "status", "allocatable")
    models = entries(item, "spec", "taints") + entries(item, "status", "conditions")
    return OBJECT_COST + ENTRY_COST * maps + MODEL_COST * models


def _node(item: Any, index: int, display: str, what: str, shared: SharedStrings, budget: KeptBudget) -> Node:
    """The Node of one exported item (its strings shared with the nodes read before)."""
    kind = item.get("kind", "Node") if isinstance(item, dict) else None
    if kind != "Node":
        raise GpuspecError(f"{display}: items[{index}] is a {_kind_words(kind, 'non-object')}, "
                           f"expected a Node ({what})")
    cost = _node_cost(item)
    budget.check(cost, f"items[{index}]")
    shared.within(item, "metadata", "labels", depth=1)
    for key in ("capacity", "allocatable", "nodeInfo"):
        shared.within(item, "status", key, depth=1)
    shared.within(item, "status", "conditions", depth=2)
    shared.within(item, "spec", "taints", depth=2)
    try:
        node = Node.model_validate(item)
    except ValidationError as exc:
        raise _shape_error(display, what, exc, ("items", index)) from None
    budget.charge(cost)
    return node


def parse_nodes(source: str | Export, display: str) -> list[Node]:
    """The nodes of a `kubectl get nodes -o json` document (a List, a NodeList or a single Node).

    ``source`` is the JSON text or an :class:`~gpuspec.loader.exportread.Export` to read; at most
    :data:`~gpuspec.loader.exportread.MAX_NODES` nodes are read.
    """
    what = "the output of `kubectl get nodes -o json` (a List of Nodes)"
    reading = ListReader(source, display)
    shared, budget = SharedStrings(), KeptBudget(reading)
    nodes: list[Node] = []
    for index, item in enumerate(reading.objects(("Node",))):
        if index >= MAX_NODES:
            raise _too_many(display, MAX_NODES, "nodes", "Kubernetes supports 5,000 nodes per cluster")
        nodes.append(_node(item, index, display, what, shared, budget))
    if reading.streamed or not nodes:
        _list_shape(reading, display, what)
    duplicates = sorted(name for name, count in Counter(n.name for n in nodes).items() if count > 1)
    if duplicates:
        raise GpuspecError(f"{display}: node {duplicates[0]!r} appears more than once")
    return nodes


def _operator_resource(item: Any, index: int, display: str, what: str, budget: KeptBudget) -> OperatorResource:
    kind = item.get("kind") if isinstance(item, dict) else None
    if kind not in OPERATOR_KINDS:
        raise GpuspecError(
            f"{display}: items[{index}] is a {_kind_words(kind, 'object without kind')}, "
            "expected ClusterPolicy or NVIDIADriver"
        )
    cost = OBJECT_COST + ENTRY_COST * (entries(item, "metadata", "labels") + entries(item, "spec", "nodeSelector")) \
        + MODEL_COST * entries(item, "status", "conditions")
    budget.check(cost, f"items[{index}]")
    try:
        found = OperatorResource.model_validate(item)
    except ValidationError as exc:
        raise _shape_error(display, what, exc, ("items", index)) from None
    budget.charge(cost)
    return found


def parse_operator_resources(source: str | Export, display: str) -> list[OperatorResource]:
    """The ClusterPolicy and NVIDIADriver objects of a `kubectl get clusterpolicies,nvidiadrivers -o json` document.

    ``source`` is the JSON text or an :class:`~gpuspec.loader.exportread.Export` to read; at most
    :data:`~gpuspec.loader.exportread.MAX_OPERATOR_RESOURCES` objects are read.
    """
    what = "the output of `kubectl get clusterpolicies,nvidiadrivers -o json`"
    reading = ListReader(source, display)
    budget = KeptBudget(reading)
    found: list[OperatorResource] = []
    for index, item in enumerate(reading.objects(OPERATOR_KINDS)):
        if index >= MAX_OPERATOR_RESOURCES:
            raise _too_many(display, MAX_OPERATOR_RESOURCES, "ClusterPolicies and NVIDIADrivers",
                            "the operator reads one ClusterPolicy and one NVIDIADriver per node pool")
        found.append(_operator_resource(item, index, display, what, budget))
    if reading.streamed or not found:
        _list_shape(reading, display, what)
    return found


#: Largest node or operator export read (bytes).
MAX_INPUT_BYTES = exportread.MAX_EXPORT_BYTES


def read_input(source: str) -> tuple[Export, str]:
    """The export ``source`` names (a file path, or ``-`` for standard input), and the name to show for it.

    The export is checked (a file: a regular file of at most :data:`MAX_INPUT_BYTES`, never inside a ``.git``
    folder, never a link out of the repository, a FIFO or a device) but read only by the parser it is given
    to, piece by piece (:func:`~gpuspec.loader.exportread.open_export`).
    """
    export = exportread.open_export(source)
    return export, export.display
