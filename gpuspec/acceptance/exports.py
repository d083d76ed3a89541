"""Pydantic models of the Job and Pod fields the acceptance report reads, and the parsing of their export.

The input is `kubectl get jobs,pods -n gpuspec-acceptance -o json`: a v1 List of Jobs and Pods.  Only the
fields the report needs are modelled; the rest is ignored.  The export is read through
:mod:`gpuspec.loader.exportread`: items one at a time, each turned into its model (or dropped, when of another
namespace) before the next is decoded.  Problems are `GpuspecError`s (exit 2) naming the file, the line and
column of a JSON syntax error, the item path of a field of the wrong shape, or the limit an export passed.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuspec.acceptance.contract import ACCEPTANCE_NAMESPACE, JOB_NAME_LABELS
from gpuspec.errors import GpuspecError
from gpuspec.loader.exportread import (
    ENTRY_COST,
    MAX_NAMESPACE_OBJECTS,
    MODEL_COST,
    OBJECT_COST,
    STATUS_COST,
    Export,
    KeptBudget,
    ListReader,
    SharedStrings,
    entries,
)
from gpuspec.redaction import one_line


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class OwnerReference(_Model):
    """The controller of an object (a Pod's Job)."""

    kind: str = ""
    name: str = ""


class Meta(_Model):
    """Name, namespace, labels, annotations and owners of a Job or Pod."""

    name: str
    namespace: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    creation_timestamp: datetime | None = Field(default=None, alias="creationTimestamp")
    owner_references: list[OwnerReference] = Field(default_factory=list, alias="ownerReferences")


class Condition(_Model):
    """A Job or Pod status condition."""

    type: str
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None
    last_transition_time: datetime | None = Field(default=None, alias="lastTransitionTime")


class JobSpec(_Model):
    """The Job spec fields the report reads."""

    active_deadline_seconds: int | None = Field(default=None, alias="activeDeadlineSeconds")
    completions: int | None = None
    parallelism: int | None = None
    suspend: bool = False


class JobStatus(_Model):
    """The Job status fields the report reads."""

    conditions: list[Condition] = Field(default_factory=list)
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    start_time: datetime | None = Field(default=None, alias="startTime")
    completion_time: datetime | None = Field(default=None, alias="completionTime")


class Job(_Model):
    """A batch/v1 Job as kubectl prints it (only the fields the report reads)."""

    kind: str = "Job"
    metadata: Meta
    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobStatus = Field(default_factory=JobStatus)

    @property
    def name(self) -> str:
        """The Job's name."""
        return self.metadata.name

    def condition(self, kind: str) -> Condition | None:
        """The Job's condition of type ``kind`` when its status is True, else None."""
        return next((c for c in self.status.conditions if c.type == kind and c.status == "True"), None)


class Terminated(_Model):
    """A container that ended: exit code, reason, its termination message, start and finish time."""

    exit_code: int = Field(default=0, alias="exitCode")
    reason: str | None = None
    message: str | None = None
    started_at: datetime | None = Field(default=None, alias="startedAt")
    finished_at: datetime | None = Field(default=None, alias="finishedAt")


class Waiting(_Model):
    """A container that has not started (image pull, config error)."""

    reason: str | None = None
    message: str | None = None


class ContainerState(_Model):
    """One of waiting, running or terminated."""

    waiting: Waiting | None = None
    #: Present when the container runs; its content (when it started) is not kept.
    running: dict[str, Any] | None = None
    terminated: Terminated | None = None


class ContainerStatus(_Model):
    """The state of one container of a Pod."""

    name: str
    ready: bool = False
    restart_count: int = Field(default=0, alias="restartCount")
    state: ContainerState = Field(default_factory=ContainerState)


class PodSpec(_Model):
    """The node a Pod was bound to."""

    node_name: str | None = Field(default=None, alias="nodeName")


class PodStatus(_Model):
    """Phase, conditions and container states of a Pod."""

    phase: str = "Unknown"
    reason: str | None = None
    message: str | None = None
    conditions: list[Condition] = Field(default_factory=list)
    container_statuses: list[ContainerStatus] = Field(default_factory=list, alias="containerStatuses")
    init_container_statuses: list[ContainerStatus] = Field(default_factory=list, alias="initContainerStatuses")


class Pod(_Model):
    """A v1 Pod as kubectl prints it (only the fields the report reads)."""

    kind: str = "Pod"
    metadata: Meta
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus = Field(default_factory=PodStatus)

    @property
    def name(self) -> str:
        """The Pod's name."""
        return self.metadata.name

    @property
    def job_name(self) -> str | None:
        """The Job that created the Pod: its job-name label, else its Job owner reference."""
        for label in JOB_NAME_LABELS:
            if self.metadata.labels.get(label):
                return self.metadata.labels[label]
        owner = next((o for o in self.metadata.owner_references if o.kind == "Job" and o.name), None)
        return owner.name if owner else None

    def condition(self, kind: str) -> Condition | None:
        """The Pod's condition of type ``kind`` when its status is True, else None."""
        return next((c for c in self.status.conditions if c.type == kind and c.status == "True"), None)


@dataclass(frozen=True)
class AcceptanceExport:
    """The Jobs and Pods of one export of the acceptance namespace (objects of other namespaces left out)."""

    jobs: tuple[Job, ...]
    pods: tuple[Pod, ...]
    display: str
    _by_job: dict[str, tuple[Pod, ...]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        groups: dict[str, list[Pod]] = defaultdict(list)
        for pod in self.pods:
            if pod.job_name:
                groups[pod.job_name].append(pod)
        self._by_job.update({job: tuple(sorted(pods, key=lambda p: p.name)) for job, pods in groups.items()})

    def pods_of(self, job: str) -> list[Pod]:
        """The Pods the Job named ``job`` created, by name."""
        return list(self._by_job.get(job, ()))


#: Kinds `kubectl get jobs,pods -o json` prints.
EXPORT_KINDS = ("Job", "Pod")
_WHAT = "the output of `kubectl get jobs,pods -n gpuspec-acceptance -o json` (a List of Jobs and Pods)"


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<document>"


def _shape_error(display: str, exc: ValidationError, prefix: tuple[int | str, ...]) -> GpuspecError:
    errors = exc.errors()
    parts = [f"{_location((*prefix, *e['loc']))}: {e['msg']}" for e in errors[:3]]
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return GpuspecError(f"{display}: not {_WHAT}: {'; '.join(parts)}{more}")


def _kind_text(kind: Any) -> str:
    if not kind:
        return "object without kind"
    if isinstance(kind, str) and len(kind) <= 63:
        return one_line(kind)
    return f"kind of type {type(kind).__name__}"


def _shape(data: Any, display: str) -> None:
    """Raise the error for a document that is neither a List nor one Job or Pod."""
    shown = type(data).__name__ if not isinstance(data, dict) else "an object without a list of items"
    raise GpuspecError(f"{display}: not {_WHAT}: the document is {shown}",
                       hint="export it with `kubectl get jobs,pods -n gpuspec-acceptance -o json`")


def _cost(item: Any) -> int:
    """What the Job or Pod of ``item`` keeps in memory (estimated, bytes)."""
    maps = entries(item, "metadata", "labels") + entries(item, "metadata", "annotations")
    models = entries(item, "metadata", "ownerReferences") + entries(item, "status", "conditions")
    statuses = entries(item, "status", "containerStatuses") + entries(item, "status", "initContainerStatuses")
    return OBJECT_COST + ENTRY_COST * maps + MODEL_COST * models + STATUS_COST * statuses


def _forget_running(item: Any) -> None:
    """Empty what a running container's state says (when it started): the report reads only that it runs."""
    status = item.get("status")
    for key in ("containerStatuses", "initContainerStatuses"):
        listed = status.get(key) if isinstance(status, dict) else None
        for container in listed if isinstance(listed, list) else ():
            state = container.get("state") if isinstance(container, dict) else None
            if isinstance(state, dict) and isinstance(state.get("running"), dict):
                state["running"] = {}


def _object(item: Any, index: int, display: str, shared: SharedStrings, budget: KeptBudget) -> tuple[Job | Pod, int]:
    """The Job or Pod of one exported item (its strings shared with the objects read before) and what it keeps."""
    kind = item.get("kind") if isinstance(item, dict) else None
    if kind not in EXPORT_KINDS:
        raise GpuspecError(f"{display}: items[{index}] is a {_kind_text(kind)}, expected a Job or a Pod ({_WHAT})")
    cost = _cost(item)
    budget.check(cost, f"items[{index}]")
    _forget_running(item)
    for key in ("labels", "annotations", "ownerReferences"):
        shared.within(item, "metadata", key, depth=2)
    shared.within(item, "status", "conditions", depth=2)
    try:
        return (Job.model_validate(item) if kind == "Job" else Pod.model_validate(item)), cost
    except ValidationError as exc:
        raise _shape_error(display, exc, ("items", index)) from None


def parse_export(source: str | Export, display: str) -> AcceptanceExport:
    """The Jobs and Pods of a `kubectl get jobs,pods -o json` document (a List, a JobList, a PodList or one object).

    ``source`` is the JSON text or an :class:`~gpuspec.loader.exportread.Export` to read.  Objects of another
    namespace than the acceptance namespace (an export with ``-A``) are left out as they are read; at most
    :data:`~gpuspec.loader.exportread.MAX_NAMESPACE_OBJECTS` Jobs and Pods of the acceptance namespace are read.
    """
    jobs: list[Job] = []
    pods: list[Pod] = []
    reading = ListReader(source, display)
    shared, budget = SharedStrings(), KeptBudget(reading)
    seen = 0
    for index, item in enumerate(reading.objects(EXPORT_KINDS)):
        seen += 1
        found, cost = _object(item, index, display, shared, budget)
        if found.metadata.namespace not in ("", ACCEPTANCE_NAMESPACE):
            continue
        budget.charge(cost)
        if len(jobs) + len(pods) >= MAX_NAMESPACE_OBJECTS:
            raise GpuspecError(
                f"{one_line(display)}: more than {MAX_NAMESPACE_OBJECTS:,} Jobs and Pods in namespace "
                f"{ACCEPTANCE_NAMESPACE}; Kubernetes' scalability thresholds put 3,000 pods in one namespace; not read")
        if isinstance(found, Job):
            jobs.append(found)
        else:
            pods.append(found)
    if not seen and not reading.streamed:
        _shape(reading.document, display)
    for what, names in (("Job", [j.name for j in jobs]), ("Pod", [p.name for p in pods])):
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            raise GpuspecError(f"{display}: {what} {one_line(duplicates[0])!r} appears more than once")
    return AcceptanceExport(tuple(jobs), tuple(pods), display)


def termination_data(message: str | None) -> dict[str, Any]:
    """The JSON object a check container wrote to its termination message ({} when it wrote none or no object)."""
    if not message or not message.lstrip().startswith("{"):
        return {}
    try:
        data = json.loads(message)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}
