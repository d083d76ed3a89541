"""The labels and annotations that tie an exported acceptance Job to its pool, its check and the rendered revision.

`gpuspec render` writes them on every acceptance Job; `acceptance report` and `gate` read them back from
`kubectl get jobs,pods -n gpuspec-acceptance -o json`.
"""

from __future__ import annotations

from gpuspec.render.acceptance import ACCEPTANCE_DIR, ACCEPTANCE_NAMESPACE

__all__ = [
    "ACCEPTANCE_DIR", "ACCEPTANCE_LABEL", "ACCEPTANCE_NAMESPACE", "BUDGET_ANNOTATION", "BUSBW_KEY", "CHECK_LABEL",
    "DEFAULT_CHECK", "JOB_NAME_LABELS", "MIN_BUSBW_ANNOTATION", "POOL_LABEL", "check_of", "revision_of",
]

#: Label every acceptance Job carries ("true").
ACCEPTANCE_LABEL = "gpuspec.io/acceptance"
#: Label naming the pool a Job accepts.
POOL_LABEL = "gpuspec.io/pool"
#: Label naming the check a Job runs (smoke, all-gpus, nccl, dcgm-diag, mig, shared, workload-<name>, eviction).
CHECK_LABEL = "gpuspec.io/check"
#: Optional annotation: seconds from scheduling to ready (or completion) the check may take.
BUDGET_ANNOTATION = "gpuspec.io/readiness-budget-seconds"
#: Optional annotation: the least bus bandwidth (GB/s) a collective check must measure.
MIN_BUSBW_ANNOTATION = "gpuspec.io/min-busbw-gbps"
#: Key of the JSON object a check container writes to its termination message.
BUSBW_KEY = "busbw_gbps"
#: The check of a Job without a check label: the CUDA sample Job every pool had first.
DEFAULT_CHECK = "smoke"
#: Labels the Job controller sets on the pods of a Job (the first is the current name, the second the old one).
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")


def check_of(labels: dict[str, str]) -> str:
    """The check id a Job's labels name (:data:`DEFAULT_CHECK` when the label is absent or empty)."""
    return labels.get(CHECK_LABEL) or DEFAULT_CHECK


def revision_of(job_name: str) -> str:
    """The content hash that ends a rendered Job's name (``acceptance-h100-50d0e5f6`` → ``50d0e5f6``)."""
    return job_name.rsplit("-", 1)[-1] if "-" in job_name else job_name
