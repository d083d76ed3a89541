"""The multi-node NCCL all-reduce check (pure): a headless Service, the script's ConfigMap and how pods start it.

No MPI launcher (mpirun needs ssh between pods, or the MPI Operator): an Indexed Job runs one pod per node, each
pod runs ``torchrun`` with one process per GPU, and the pods meet through PyTorch's static rendezvous at pod 0
(``<job>-0.<service>``, the DNS name a headless Service gives an Indexed Job's pod with ``subdomain``).  Every
process joins one NCCL communicator over all GPUs of all nodes and all-reduces a buffer; the bus bandwidth is
computed as nccl-tests computes it (``busbw = algbw * 2 * (ranks - 1) / ranks``), the minimum over ranks is
written as ``{"busbw_gbps": …}`` to the termination message of every pod, and a bandwidth below the spec's
minimum fails the pod.
"""

from __future__ import annotations

#: TCP port of the rendezvous store on pod 0.
RENDEZVOUS_PORT = 29500
#: Where the script's ConfigMap is mounted.
SCRIPT_DIR = "/opt/gpuspec"
SCRIPT_FILE = "allreduce.py"

#: The all-reduce each GPU process runs (PyTorch with the NCCL backend; environment set by torchrun).
SCRIPT = '''\
"""gpuspec acceptance: NCCL all-reduce over every GPU of the sampled nodes.

Bus bandwidth as nccl-tests computes it: algbw * 2 * (ranks - 1) / ranks.
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist

LOG = os.environ.get("GPUSPEC_TERMINATION_LOG", "/dev/termination-log")


def main() -> int:
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    rank, world = dist.get_rank(), dist.get_world_size()
    check = torch.full((1024,), float(rank), device="cuda")
    dist.all_reduce(check)
    expected = float(world * (world - 1) // 2)
    correct = bool(torch.all(check == expected).item())
    mib = int(os.environ["GPUSPEC_MESSAGE_MIB"])
    elements = mib * 1024 * 1024 // 4
    buf = torch.ones(elements, dtype=torch.float32, device="cuda")
    for _ in range(5):
        dist.all_reduce(buf)
    torch.cuda.synchronize()
    dist.barrier()
    iters = 20
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(buf)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / iters
    algbw = elements * 4 / seconds / 1e9
    bus = algbw * 2 * (world - 1) / world
    busbw = torch.tensor([bus], device="cuda")
    dist.all_reduce(busbw, op=dist.ReduceOp.MIN)
    result = {
        "busbw_gbps": round(float(busbw.item()), 2),
        "algbw_gbps": round(algbw, 2),
        "ranks": world,
        "bytes": elements * 4,
        "correct": correct,
    }
    minimum = os.environ.get("GPUSPEC_MIN_BUSBW_GBPS", "")
    fast = not minimum or result["busbw_gbps"] >= float(minimum)
    if local == 0:
        with open(LOG, "w", encoding="utf-8") as fh:
            json.dump(result, fh, sort_keys=True)
        print(json.dumps(result, sort_keys=True), flush=True)
    dist.destroy_process_group()
    return 0 if correct and fast else 1


if __name__ == "__main__":
    sys.exit(main())
'''


def launch_command(job: str, service: str, nodes: int, gpus: int) -> list[str]:
    """The container command: torchrun with static rendezvous at pod 0 of the Indexed Job (node rank = its
    index, ``$(JOB_COMPLETION_INDEX)``, which the kubelet expands from the variable the Job controller sets)."""
    return [
        "torchrun", f"--nnodes={nodes}", f"--nproc-per-node={gpus}", "--node-rank=$(JOB_COMPLETION_INDEX)",
        f"--master-addr={job}-0.{service}", f"--master-port={RENDEZVOUS_PORT}", f"{SCRIPT_DIR}/{SCRIPT_FILE}",
    ]
