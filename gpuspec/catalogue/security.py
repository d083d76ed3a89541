"""Security and access findings (GS6xx)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry, Param
from gpuspec.catalogue.ownership import ENTRIES as OWNERSHIP_ENTRIES
from gpuspec.findings import Severity

DEDICATED_OPERATOR_NAMESPACE = Entry(
    id="GS601",
    title="Operator namespace is dedicated",
    severity=Severity.ERROR,
    rationale="The operator namespace is privileged; other workloads must not share it.",
    doc="""
The GPU Operator runs in a namespace of its own, not `default` or a `kube-*` system namespace.

gpuspec renders the operator namespace with Pod Security Admission labels
(privileged, since the operands load kernel modules); sharing that
namespace would grant the same to every other workload in it.

Failing: `operator: {namespace: kube-system}`.  Passing:
`operator: {namespace: gpu-operator}`.
""",
    params=(
        Param(
            "forbidden_namespaces",
            list,
            ("default", "kube-system", "kube-public", "kube-node-lease"),
            "Namespaces the operator must not use.",
        ),
    ),
    tags=("security",),
)

DEVICE_OPERANDS_ONLY_WHEN_NEEDED = Entry(
    id="GS602",
    title="Device operands enabled only where a pool needs them",
    severity=Severity.WARNING,
    rationale="Least privilege: host devices and kernel modules no pool uses are pure attack surface.",
    doc="""
RDMA, GDS, GDRCopy and sandbox workloads are enabled for a cluster only if some pool declares the need.

Each of these operands exposes extra host devices or kernel modules.  A
pool declares its need in `devices` (`rdma`, `gds`, `gdrcopy`,
`sandbox`); enabling the operand in `operator.operands` without such a
pool is exposure nobody asked for.

Failing: `operands: {gds: true}` and no pool with `devices: {gds: true}`.
Passing: a pool declares `devices: {gds: true}`.
""",
    tags=("security", "devices"),
)

DEVICE_NEEDS_ENABLED = Entry(
    id="GS603",
    title="Pools declare device needs only where the cluster enables them",
    severity=Severity.ERROR,
    rationale="A declared but unserved device need fails at run time, on the workload.",
    doc="""
A pool that declares a device need is in a cluster that enables the matching operand.

`devices.rdma` on a pool does nothing unless `operator.operands.rdma`
is on; the workloads scheduled there would start without the device.

Failing: a pool with `devices: {rdma: true}` in a cluster without
`operands: {rdma: true}`.  Passing: both set.
""",
    tags=("security", "devices"),
)

SHARING_JUSTIFIED = Entry(
    id="GS604",
    title="GPU sharing has a written justification",
    severity=Severity.ERROR,
    rationale="Time-slicing and MPS share memory and faults between pods; the choice must be deliberate.",
    doc="""
GPU sharing (time-slicing or MPS) carries a written justification of at least `min_length` characters.

Shared GPUs give no memory or fault isolation between pods; the spec must
say why that is acceptable for this pool.

Failing: `sharing: {mode: time-slicing, replicas: 4}`.  Passing: the
same with `justification: Stateless inference replicas of trusted models`.
""",
    params=(Param("min_length", int, 20, "Shortest acceptable justification, in characters."),),
    tags=("security", "sharing"),
)

TENANTS_HAVE_GPU_QUOTA = Entry(
    id="GS605",
    title="Every tenant has a GPU quota",
    severity=Severity.ERROR,
    rationale="Shared clusters need quotas so one tenant cannot starve the others.",
    doc="""
In a cluster with tenants, every tenant has a GPU quota (`gpuQuota` or `migQuota`).

Without a quota one team can take every GPU of the cluster.

Failing: a tenant without `gpuQuota` and `migQuota`.  Passing:
`gpuQuota: 32` (`0` with a `migQuota` is fine too).
""",
    tags=("security", "tenancy"),
)

TENANT_POOLS_TAINTED = Entry(
    id="GS606",
    title="GPU pools of multi-tenant clusters are tainted",
    severity=Severity.ERROR,
    rationale="Taints keep non-GPU workloads of any tenant off scarce GPU nodes.",
    doc="""
In a cluster with tenants, every GPU pool carries a `NoSchedule` or `NoExecute` taint.

Without a taint any pod can land on a GPU node and hold its CPU and
memory; quotas only count GPU requests.

Failing: a pool without `taints` in a cluster with `tenants`.
Passing: `taints: [{key: acme.example/gpu, value: h100, effect: NoSchedule}]`.
""",
    tags=("security", "tenancy"),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    DEDICATED_OPERATOR_NAMESPACE,
    DEVICE_OPERANDS_ONLY_WHEN_NEEDED,
    DEVICE_NEEDS_ENABLED,
    SHARING_JUSTIFIED,
    TENANTS_HAVE_GPU_QUOTA,
    TENANT_POOLS_TAINTED,
    *OWNERSHIP_ENTRIES,
)
