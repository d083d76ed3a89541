"""The acceptance Jobs of the current revision: the ones committed in ``rendered/clusters/<cluster>/acceptance/``.

Their names end in a content hash, so a Job of the export with the same pool and check but another name ran
for an older revision.  Reading is bounded and safe like every input (no link out of the repository, no FIFO);
a file that is not YAML is a `GpuspecError` naming file, line and column.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuspec.acceptance.contract import (
    ACCEPTANCE_DIR,
    ACCEPTANCE_LABEL,
    BUDGET_ANNOTATION,
    MIN_BUSBW_ANNOTATION,
    POOL_LABEL,
    check_of,
)
from gpuspec.errors import GpuspecError
from gpuspec.loader.safefile import UnsafeFile, read_bounded

#: Largest rendered acceptance file read.
MAX_RENDERED_BYTES = 64 * 1024 * 1024
#: Argo CD's hook deletion policy annotation: ``HookSucceeded`` deletes a hook Job once it succeeds.
ARGOCD_DELETE_POLICY = "argocd.argoproj.io/hook-delete-policy"


@dataclass(frozen=True)
class ExpectedJob:
    """One acceptance Job of the rendered revision: its name, pool, check, budget and bandwidth floor."""

    name: str
    pool: str
    check: str
    budget_seconds: int | None
    min_busbw_gbps: float | None
    deadline_seconds: int | None
    file: str
    deleted_on_success: bool = False


@dataclass(frozen=True)
class RenderedAcceptance:
    """The acceptance Jobs one cluster's rendered folder holds, and the digest of the acceptance files that hold
    them (``sha256:…``: the rendered revision a report names; the Job names carry the cluster's configuration)."""

    cluster: str
    jobs: tuple[ExpectedJob, ...]
    digest: str | None
    folder: str

    def of_pool(self, pool: str) -> list[ExpectedJob]:
        """The Jobs of ``pool``."""
        return [j for j in self.jobs if j.pool == pool]


def budget_value(text: str | None) -> int | None:
    """A readiness budget annotation as whole seconds, None when absent or not a positive integer."""
    if text is None or not text.strip().isdigit():
        return None
    value = int(text.strip())
    return value if value > 0 else None


def busbw_value(text: Any) -> float | None:
    """A bandwidth (annotation text or a JSON number) in GB/s, None when absent, not a number or not finite."""
    if isinstance(text, bool) or text is None:
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def load_documents(path: Path, display: str) -> tuple[str, list[Any]]:
    """The text and the YAML documents of a rendered file (bounded, safe read; bad YAML names line and column)."""
    try:
        text = read_bounded(path, MAX_RENDERED_BYTES).decode("utf-8")
    except UnsafeFile as refused:
        raise GpuspecError(f"{display}: {refused.message}") from None
    except UnicodeDecodeError:
        raise GpuspecError(f"{display}: not UTF-8 text") from None
    except OSError as exc:
        raise GpuspecError(f"{display}: cannot read: {exc.strerror or exc}") from None
    try:
        return text, [doc for doc in yaml.load_all(text, Loader=yaml.CSafeLoader) if doc is not None]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{mark.line + 1}:{mark.column + 1}:" if mark else ""
        raise GpuspecError(f"{display}:{where} invalid YAML: {exc.problem or exc.context or 'syntax error'}",
                           hint="rendered/ is written by `gpuspec render`; re-render instead of editing it") from None
    except (ValueError, RecursionError) as exc:  # an integer past Python's digit limit, nesting past its stack
        raise GpuspecError(f"{display}: unusable YAML: {type(exc).__name__}",
                           hint="rendered/ is written by `gpuspec render`; re-render instead of editing it") from None
    except yaml.YAMLError as exc:
        raise GpuspecError(f"{display}: invalid YAML: {exc}") from None


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (rendered documents read defensively)."""
    return value if isinstance(value, dict) else {}


def _expected(doc: dict[str, Any], display: str, index: int) -> ExpectedJob | None:
    meta = mapping(doc.get("metadata"))
    if not isinstance(meta.get("name"), str):
        raise GpuspecError(f"{display}: document {index + 1} is a Job without metadata.name")
    labels = mapping(meta.get("labels"))
    if str(labels.get(ACCEPTANCE_LABEL)) != "true" or not labels.get(POOL_LABEL):
        return None
    annotations = mapping(meta.get("annotations"))
    spec = mapping(doc.get("spec"))
    deadline = spec.get("activeDeadlineSeconds")
    return ExpectedJob(
        name=meta["name"], pool=str(labels[POOL_LABEL]), check=check_of({k: str(v) for k, v in labels.items()}),
        budget_seconds=budget_value(_text(annotations.get(BUDGET_ANNOTATION))),
        min_busbw_gbps=busbw_value(annotations.get(MIN_BUSBW_ANNOTATION)),
        deadline_seconds=deadline if isinstance(deadline, int) and not isinstance(deadline, bool) else None,
        file=display,
        deleted_on_success="HookSucceeded" in str(annotations.get(ARGOCD_DELETE_POLICY, "")).split(","),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def read_rendered(rendered_dir: Path, cluster: str) -> RenderedAcceptance:
    """The acceptance Jobs of ``cluster`` in ``rendered_dir`` (every ``acceptance/*.yaml``), in file and document order.

    A cluster folder that does not exist is an input error (a wrong --cluster or --rendered); a cluster
    without an acceptance folder has no checks.
    """
    cluster_dir = rendered_dir / "clusters" / cluster
    shown_root = rendered_dir.as_posix().rstrip("/")
    if not cluster_dir.is_dir():
        known = sorted(p.name for p in (rendered_dir / "clusters").glob("*") if p.is_dir()) \
            if (rendered_dir / "clusters").is_dir() else []
        raise GpuspecError(f"{shown_root}/clusters/{cluster}: no rendered output for cluster {cluster!r}",
                           hint=(f"rendered clusters: {', '.join(known)}" if known
                                 else "run `gpuspec render`, or pass --rendered the folder it writes"))
    folder = cluster_dir / ACCEPTANCE_DIR
    shown_folder = f"{shown_root}/clusters/{cluster}/{ACCEPTANCE_DIR}"
    jobs: list[ExpectedJob] = []
    content = hashlib.sha256()
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        display = f"{shown_folder}/{path.name}"
        text, docs = load_documents(path, display)
        content.update(path.name.encode("utf-8", "surrogateescape") + b"\0" + text.encode() + b"\0")
        for index, doc in enumerate(docs):
            if not isinstance(doc, dict) or doc.get("kind") != "Job":
                continue
            job = _expected(doc, display, index)
            if job is not None:
                jobs.append(job)
    digest = f"sha256:{content.hexdigest()}" if jobs else None
    seen: dict[str, ExpectedJob] = {}
    for job in jobs:
        if job.name in seen:
            raise GpuspecError(f"{job.file}: Job {job.name!r} is rendered twice (also in {seen[job.name].file})")
        seen[job.name] = job
    return RenderedAcceptance(cluster, tuple(jobs), digest, shown_folder)
