"""Judge each acceptance check of the rendered revision from the exported Jobs and Pods (pure; no I/O).

A check is the Job that `gpuspec render` wrote for a pool and check id.  Its status:

- ``passed``: the Job completed, every measured time to readiness is within its budget and the bus bandwidth,
  where a floor is set, reached it;
- ``failed``: the Job failed (back-off limit, a pod error), or it completed over its budget or under its
  bandwidth floor;
- ``timed-out``: the Job controller stopped it at its ``activeDeadlineSeconds`` (condition ``Failed``, reason
  ``DeadlineExceeded``);
- ``running``: the Job has not finished;
- ``not-run``: no Job of this revision is in the export (perhaps one of an older revision is).

Time to readiness is per pod: from its ``PodScheduled`` condition to its ``Ready`` condition, or, for a pod
that ran to completion, to the last container's termination.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from gpuspec.acceptance.contract import (
    ACCEPTANCE_LABEL,
    BUDGET_ANNOTATION,
    BUSBW_KEY,
    MIN_BUSBW_ANNOTATION,
    POOL_LABEL,
    check_of,
    revision_of,
)
from gpuspec.acceptance.expected import ExpectedJob, RenderedAcceptance, budget_value, busbw_value
from gpuspec.acceptance.exports import AcceptanceExport, Job, Pod, termination_data


class Status(StrEnum):
    """The outcome of one check."""

    PASSED = "passed"
    FAILED = "failed"
    TIMED_OUT = "timed-out"
    RUNNING = "running"
    NOT_RUN = "not-run"


#: Job condition reason the Job controller sets when activeDeadlineSeconds is reached.
DEADLINE_EXCEEDED = "DeadlineExceeded"


@dataclass(frozen=True)
class PodResult:
    """One pod of a check: where it ran, how it ended, how long it took to be ready and what it measured."""

    name: str
    node: str | None
    phase: str
    seconds_to_ready: float | None
    busbw_gbps: float | None
    problem: str | None = None


@dataclass(frozen=True)
class OtherJob:
    """An exported acceptance Job that is not the check's Job of this revision (an older revision, or no check)."""

    name: str
    pool: str
    check: str
    revision: str
    status: Status
    reason: str


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one check of one pool for the rendered revision."""

    pool: str
    check: str
    job: str
    revision: str
    status: Status
    reason: str
    budget_seconds: int | None = None
    seconds_to_ready: float | None = None
    busbw_gbps: float | None = None
    min_busbw_gbps: float | None = None
    pods: tuple[PodResult, ...] = ()
    older: tuple[OtherJob, ...] = ()

    @property
    def passed(self) -> bool:
        """True when the check passed."""
        return self.status is Status.PASSED

    @property
    def nodes(self) -> tuple[str, ...]:
        """The nodes the check's pods ran on, sorted."""
        return tuple(sorted({p.node for p in self.pods if p.node}))

    @property
    def within_budget(self) -> bool | None:
        """Whether the time to readiness is within the budget (None when no budget is set or nothing was measured)."""
        if self.budget_seconds is None or self.seconds_to_ready is None:
            return None
        return self.seconds_to_ready <= self.budget_seconds


@dataclass(frozen=True)
class AcceptanceReport:
    """Every check of the rendered revision of one cluster, judged from one export."""

    cluster: str
    digest: str | None
    export: str
    checks: tuple[CheckResult, ...]
    unexpected: tuple[OtherJob, ...] = field(default=())

    @property
    def passed(self) -> bool:
        """True when every check of this revision passed (a cluster without checks passes)."""
        return all(c.passed for c in self.checks)

    def of_pool(self, pool: str) -> list[CheckResult]:
        """The checks of ``pool``."""
        return [c for c in self.checks if c.pool == pool]

    def counts(self) -> dict[str, int]:
        """How many checks have each status (every status, in the order of :class:`Status`)."""
        return {s.value: sum(1 for c in self.checks if c.status is s) for s in Status}


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    delta = (end - start).total_seconds()
    return delta if delta >= 0 else None


def _pod_problem(pod: Pod) -> str | None:
    for status in (*pod.status.init_container_statuses, *pod.status.container_statuses):
        state = status.state
        if state.terminated is not None and state.terminated.exit_code != 0:
            reason = state.terminated.reason or "Error"
            return f"container {status.name} exited {state.terminated.exit_code} ({reason})"
        if state.waiting is not None and state.waiting.reason:
            detail = f": {state.waiting.message}" if state.waiting.message else ""
            return f"container {status.name} waiting: {state.waiting.reason}{detail}"
    unscheduled = next((c for c in pod.status.conditions if c.type == "PodScheduled" and c.status != "True"), None)
    if unscheduled is not None:
        return f"not scheduled: {unscheduled.reason or 'Unschedulable'}" + \
            (f": {unscheduled.message}" if unscheduled.message else "")
    if pod.status.phase == "Failed":
        return pod.status.reason or pod.status.message or "pod failed"
    return None


def _pod_busbw(pod: Pod) -> float | None:
    values = [busbw_value(termination_data(s.state.terminated.message).get(BUSBW_KEY))
              for s in pod.status.container_statuses if s.state.terminated is not None]
    measured = [v for v in values if v is not None]
    return min(measured) if measured else None


def pod_result(pod: Pod) -> PodResult:
    """One pod's node, phase, time to readiness (scheduled → ready, or → completion) and measured bandwidth."""
    scheduled = pod.condition("PodScheduled")
    end: datetime | None = None
    if pod.status.phase == "Succeeded":
        finished = [s.state.terminated.finished_at for s in pod.status.container_statuses
                    if s.state.terminated is not None and s.state.terminated.finished_at is not None]
        end = max(finished) if finished else None
    else:
        ready = pod.condition("Ready")
        end = ready.last_transition_time if ready else None
    seconds = _seconds(scheduled.last_transition_time if scheduled else None, end)
    return PodResult(pod.name, pod.spec.node_name, pod.status.phase, seconds, _pod_busbw(pod), _pod_problem(pod))


def _condition(job: Job, *kinds: str) -> tuple[str, str | None, str | None] | None:
    for kind in kinds:
        found = job.condition(kind)
        if found is not None:
            return kind, found.reason, found.message
    return None


def job_status(job: Job, pods: Iterable[PodResult] = ()) -> tuple[Status, str]:
    """The status of an exported Job from its conditions (Failed / FailureTarget, Complete / SuccessCriteriaMet)."""
    problems = [f"{p.name}: {p.problem}" for p in pods if p.problem]
    more = f"; {'; '.join(problems[:3])}" if problems else ""
    failed = _condition(job, "Failed", "FailureTarget")
    if failed is not None:
        _, reason, message = failed
        detail = f": {message}" if message else ""
        if reason == DEADLINE_EXCEEDED:
            limit = job.spec.active_deadline_seconds
            within = f" of {limit} s" if limit is not None else ""
            return Status.TIMED_OUT, f"stopped at its deadline{within} (DeadlineExceeded){detail}{more}"
        return Status.FAILED, f"the Job failed ({reason or 'no reason given'}){detail}{more}"
    if _condition(job, "Complete", "SuccessCriteriaMet") is not None:
        return Status.PASSED, "completed"
    if job.spec.suspend:
        return Status.NOT_RUN, "the Job is suspended"
    detail = f" ({'; '.join(problems[:3])})" if problems else ""
    return Status.RUNNING, f"not finished: {job.status.active} active, {job.status.succeeded} succeeded, " \
                           f"{job.status.failed} failed pods{detail}"


def _fmt(value: float) -> str:
    return f"{value:g}"


def _judge(expected: ExpectedJob, job: Job, pods: list[PodResult], older: tuple[OtherJob, ...]) -> CheckResult:
    status, reason = job_status(job, pods)
    annotations = job.metadata.annotations
    budget = expected.budget_seconds or budget_value(annotations.get(BUDGET_ANNOTATION))
    floor = expected.min_busbw_gbps if expected.min_busbw_gbps is not None else \
        busbw_value(annotations.get(MIN_BUSBW_ANNOTATION))
    times = [p.seconds_to_ready for p in pods if p.seconds_to_ready is not None]
    seconds = max(times) if times else None
    if seconds is None and status is Status.PASSED and not pods:
        seconds = _seconds(job.status.start_time, job.status.completion_time)
        if seconds is not None:
            reason += " (time measured from the Job's start to its completion: its pods are not in the export)"
    measured = [p.busbw_gbps for p in pods if p.busbw_gbps is not None]
    busbw = min(measured) if measured else None
    if status is Status.PASSED:
        problems: list[str] = []
        if budget is not None and seconds is None:
            problems.append(f"no time to readiness measured against its budget of {budget} s")
        elif budget is not None and seconds is not None and seconds > budget:
            problems.append(f"time to readiness {_fmt(seconds)} s is over its budget of {budget} s")
        if floor is not None and busbw is None:
            problems.append(f"no bus bandwidth reported (at least {_fmt(floor)} GB/s required)")
        elif floor is not None and busbw is not None and busbw < floor:
            problems.append(f"bus bandwidth {_fmt(busbw)} GB/s is under its floor of {_fmt(floor)} GB/s")
        if problems:
            status, reason = Status.FAILED, "completed, but " + "; ".join(problems)
    return CheckResult(expected.pool, expected.check, expected.name, revision_of(expected.name), status, reason,
                       budget, seconds, busbw, floor, tuple(pods), older)


def _not_run(expected: ExpectedJob, older: tuple[OtherJob, ...]) -> CheckResult:
    if older:
        ran = "; ".join(f"{o.name} ({o.status.value})" for o in older)
        reason = f"no Job of this revision in the export; only an older revision ran: {ran}"
    else:
        reason = "no Job of this revision in the export"
    if expected.deleted_on_success:
        reason += ("; Argo CD deletes this hook Job when it succeeds (hook-delete-policy HookSucceeded), so a "
                   "success leaves nothing to export")
    return CheckResult(expected.pool, expected.check, expected.name, revision_of(expected.name), Status.NOT_RUN,
                       reason, expected.budget_seconds, min_busbw_gbps=expected.min_busbw_gbps, older=older)


def _other(job: Job, export: AcceptanceExport) -> OtherJob:
    labels = job.metadata.labels
    status, reason = job_status(job, [pod_result(p) for p in export.pods_of(job.name)])
    return OtherJob(job.name, labels.get(POOL_LABEL, ""), check_of(labels), revision_of(job.name), status, reason)


def acceptance_report(rendered: RenderedAcceptance, export: AcceptanceExport) -> AcceptanceReport:
    """Judge every check of the rendered revision from ``export``; list the other acceptance Jobs it holds."""
    expected_names = {j.name for j in rendered.jobs}
    by_name = {j.name: j for j in export.jobs}
    others: dict[tuple[str, str], list[OtherJob]] = defaultdict(list)
    for job in export.jobs:
        labels = job.metadata.labels
        if job.name in expected_names or labels.get(ACCEPTANCE_LABEL) != "true":
            continue
        other = _other(job, export)
        others[(other.pool, other.check)].append(other)
    checks: list[CheckResult] = []
    claimed: set[tuple[str, str]] = set()
    for expected in rendered.jobs:
        key = (expected.pool, expected.check)
        claimed.add(key)
        older = tuple(sorted(others.get(key, []), key=lambda o: o.name))
        found = by_name.get(expected.name)
        if found is None:
            checks.append(_not_run(expected, older))
        else:
            pods = [pod_result(p) for p in export.pods_of(found.name)]
            checks.append(_judge(expected, found, pods, older))
    unexpected = tuple(sorted((o for key, items in others.items() if key not in claimed for o in items),
                              key=lambda o: (o.pool, o.check, o.name)))
    return AcceptanceReport(rendered.cluster, rendered.digest, export.display, tuple(checks), unexpected)
