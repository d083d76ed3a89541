"""The CUDA sample image acceptance checks run (packaged data with its source note)."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml


@functools.cache
def _data() -> dict[str, Any]:
    ref = resources.files("gpuspec.matrix").joinpath("data", "acceptance.yaml")
    with ref.open("r", encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def sample_image() -> str:
    """``<repository>/<image>:<tag>`` of the CUDA vectorAdd sample NVIDIA documents for verifying GPUs."""
    sample = _data()["sample"]
    return f"{sample['repository'].rstrip('/')}/{sample['image']}:{sample['tag']}"


def nccl_image() -> str:
    """``<repository>/<image>:<tag>`` of the PyTorch (NCCL, torchrun) image the multi-node all-reduce check runs."""
    nccl = _data()["nccl"]
    return f"{nccl['repository'].rstrip('/')}/{nccl['image']}:{nccl['tag']}"
