"""Label findings about a node's GPU workload (GS707): what the operator deploys on a VM pool's nodes."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

SANDBOX_POOL_RUNS_CONTAINERS = Entry(
    id="GS707",
    title="Sandbox pool without sandbox workloads runs the container stack",
    severity=Severity.ERROR,
    rationale=(
        "The operator chooses a node's GPU stack from its `nvidia.com/gpu.workload.config` label only when sandbox "
        "workloads are enabled in the ClusterPolicy; otherwise every node gets the `container` stack (driver, "
        "toolkit, device plugin) and a pool meant for VMs gets no VFIO binding and no sandbox device plugin."
    ),
    doc="""
A pool with `devices.sandbox: true` is in a cluster with `operator.operands.sandboxWorkloads: true`.

With both, `gpuspec render` enables `sandboxWorkloads` in the values and lists
`nvidia.com/gpu.workload.config=vm-passthrough` for the pool in `node-labels.yaml` (the chart's
`sandboxWorkloads.defaultWorkload` stays `container`, so a node without the label runs containers; label the
pool's nodes with your provisioning, `gpuspec audit` checks it). gpu-operator `controllers/state_manager.go`
(`getWorkloadConfig`) returns `container` whenever sandbox workloads are off, whatever the label says.

Failing: a pool with `devices: {sandbox: true}` and `sandboxWorkloads` off.  Passing: `operator.operands:
{sandboxWorkloads: true}`.
""",
    source="NVIDIA gpu-operator-kubevirt page (label nodes with nvidia.com/gpu.workload.config); NVIDIA/gpu-operator "
           "controllers/state_manager.go getWorkloadConfig at v26.7.0",
    tags=("labels", "sandbox"),
)

#: This module's entries, in id order.
ENTRIES: tuple[Entry, ...] = (SANDBOX_POOL_RUNS_CONTAINERS,)
