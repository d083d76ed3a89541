"""Rollout findings about the acceptance checks that run after each rollout (GS560-GS564)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

ACCEPTANCE_IMAGE_NOT_MIRRORED = Entry(
    id="GS560",
    title="Acceptance image of an air-gapped cluster is not served by its mirror",
    severity=Severity.ERROR,
    rationale=(
        "An air-gapped node pulls every acceptance image through the mirror's registry map; an image of a registry "
        "the mirror does not map is pulled from the internet, never arrives, and the check fails after its deadline "
        "for a reason that has nothing to do with the pool."
    ),
    doc="""
Every image an acceptance check of an air-gapped cluster runs (a team workload's `image`, `nccl.image`) comes
from a registry the cluster's mirror maps in `fleet.yaml` (`mirrors[].registries`), so that gpuspec rewrites it
to the mirror and lists it in `images.txt` for the mirroring job.

Failing (mirror `dc-north` maps `nvcr.io` and `registry.k8s.io`):

```yaml
acceptance:
  workloads:
    - name: embed
      image: ghcr.io/acme/embedder:1.4.2
```

Passing: `image: nvcr.io/nvidia/tritonserver:25.01-py3`, or add `ghcr.io: <mirror prefix>` to the mirror.
""",
    tags=("rollout", "acceptance", "air-gap"),
)

ACCEPTANCE_FLOATING_TAG = Entry(
    id="GS561",
    title="Acceptance image has a floating tag",
    severity=Severity.ERROR,
    rationale=(
        "A check that runs `:latest` runs a different workload after every push: a pass says nothing about the "
        "image that will run tomorrow, and the Job name (a digest of the spec) does not change when the image does."
    ),
    doc="""
A team workload's `image` and `nccl.image` name a fixed tag or a digest, never `latest`.

Failing: `image: nvcr.io/nvidia/pytorch:latest`.  Passing: `image: nvcr.io/nvidia/pytorch:25.01-py3` (or
`@sha256:…`).
""",
    tags=("rollout", "acceptance", "images"),
)

NCCL_WITHOUT_FABRIC = Entry(
    id="GS562",
    title="NCCL check asked for where it cannot measure the fabric",
    severity=Severity.WARNING,
    rationale=(
        "The all-reduce check spans nodes to measure the GPU fabric between them. On a pool without GPUDirect "
        "RDMA it measures TCP sockets; on a pool of one node, a MIG or a shared pool gpuspec renders no NCCL Job "
        "at all, although the spec asks for one."
    ),
    doc="""
`acceptance.nccl.enabled: true` is set on a pool that has GPUDirect RDMA (`devices.rdma` and the cluster's
`operator.operands.rdma`), two or more nodes and whole GPUs.  Without RDMA the check runs but NCCL falls back to
sockets (set `minBusBandwidthGbps` to what that network really gives, and accept the finding); on one node, MIG or
sharing it is not rendered.

Failing: `nccl: {enabled: true}` on a pool without `devices.rdma`.  Passing: the same pool with
`devices: {rdma: true}` on a cluster with `operands: {rdma: true}`.
""",
    tags=("rollout", "acceptance"),
)

READINESS_NEEDS_SIDECARS = Entry(
    id="GS563",
    title="Readiness workload needs native sidecar containers (Kubernetes 1.29+)",
    severity=Severity.ERROR,
    rationale=(
        "A service workload (`ready:` set) runs as a native sidecar whose startup probe holds the Job's pod until "
        "the service is ready. Before Kubernetes 1.29 (SidecarContainers beta, on by default) the API server drops "
        "`restartPolicy: Always` of an init container, the service runs as a plain init container that never ends, "
        "and the check can only time out."
    ),
    doc="""
A workload with `ready:` is only declared on clusters with `kubernetes.version` 1.29 or later.

Failing: `kubernetes: {version: "1.28"}` with a workload that sets `ready: {path: /healthz, port: 8080}`.
Passing: `kubernetes: {version: "1.29"}`, or a batch workload (no `ready:`) that passes when it exits 0.
""",
    source="Kubernetes documentation, Sidecar Containers (feature state beta and enabled by default since v1.29)",
    tags=("rollout", "acceptance"),
)

EVICTION_CHECK_MISMATCH = Entry(
    id="GS564",
    title="Eviction check does not exercise what the upgrade does",
    severity=Severity.WARNING,
    rationale=(
        "The eviction check drains one node through the eviction API, honouring PodDisruptionBudgets, as the "
        "upgrade controller drains a node when `rollout.drain.enable` is on. With drain off the upgrade removes GPU "
        "pods in its pod-deletion step instead, and a pool of one node has nowhere to move the evicted pod: a pass "
        "would prove nothing about the rollout."
    ),
    doc="""
`acceptance.eviction.enabled: true` is set on a pool of two or more nodes of a cluster whose rollout drains nodes
(`rollout.drain.enable: true`).

Failing: `eviction: {enabled: true}` with `rollout.drain` absent or `enable: false`.  Passing: the same pool with
`rollout: {drain: {enable: true, timeoutSeconds: 900}}`.
""",
    tags=("rollout", "acceptance", "upgrade"),
)

#: This module's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    ACCEPTANCE_IMAGE_NOT_MIRRORED,
    ACCEPTANCE_FLOATING_TAG,
    NCCL_WITHOUT_FABRIC,
    READINESS_NEEDS_SIDECARS,
    EVICTION_CHECK_MISMATCH,
)
