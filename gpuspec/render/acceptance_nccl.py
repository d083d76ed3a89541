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
"""gpuspec acceptance: NCCL all-reduce across every GPU of the sampled nodes; bus bandwidth as nccl-tests."""
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def main() -> int:
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    rank, world = dist.get_rank(), dist.get_world_size()
    check = torch.full((1024,), float(rank), device="cuda")
    dist.all_reduce(check)
    correct = bool(torch.all(check == float(world * (world - 1) // 2)).item())
    elements = int(os.environ["GPUSPEC_MESSAGE_MIB"]) * 1024 * 1024 // 4
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
    busbw = torch.tensor([algbw * 2 * (world - 1) / world], device="cuda")
    dist.all_reduce(busbw, op=dist.ReduceOp.MIN)
    result = {"busbw_gbps": round(float(busbw.item()), 2), "algbw_gbps": round(algbw, 2), "ranks": world,
              "bytes": elements * 4, "correct": correct}
    minimum = os.environ.get("GPUSPEC_MIN_BUSBW_GBPS", "")
    ok = correct and (not minimum or result["busbw_gbps"] >= float(minimum))
    if local == 0:
        with open(os.environ.get("GPUSPEC_TERMINATION_LOG", "/dev/termination-log"), "w", encoding="utf-8") as fh:
            json.dump(result, fh, sort_keys=True)
        print(json.dumps(result, sort_keys=True), flush=True)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
'''


def launch_command(job: str, service: str, nodes: int, gpus: int) -> list[str]:
    """The container command: torchrun with static rendezvous at pod 0 of the Indexed Job (node rank = index)."""
    run = (
        f"exec torchrun --nnodes={nodes} --nproc-per-node={gpus} --node-rank=\"$JOB_COMPLETION_INDEX\" "
        f"--master-addr={job}-0.{service} --master-port={RENDEZVOUS_PORT} {SCRIPT_DIR}/{SCRIPT_FILE}"
    )
    return ["/bin/sh", "-c", run]
