"""The objects the GPU Operator creates for each operand, so the documents can name them.

source: GPU Operator release assets (``assets/state-*`` manifests of NVIDIA/gpu-operator, v24.9–v26.7): each
operand DaemonSet carries the label ``app=<DaemonSet name>``; the chart names the ClusterPolicy
``cluster-policy`` and the operator Deployment ``gpu-operator``.  The alerts of gpuspec/render/alerts.py match
the same names (driver and validator pods, DCGM exporter job), and a test keeps them in step.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The ClusterPolicy the chart creates.
CLUSTER_POLICY = "cluster-policy"
#: The operator Deployment (and its ``app`` label).
OPERATOR_DEPLOYMENT = "gpu-operator"
#: DaemonSet of the driver when the ClusterPolicy installs it.
DRIVER_DAEMONSET = "nvidia-driver-daemonset"
#: Prefix of the DaemonSets an NVIDIADriver creates (``nvidia-gpu-driver-<os>-<hash>``); label ``app.kubernetes.io/
#: component=nvidia-driver`` and ``nvidia.com/node-pool`` are set by the operator on them.
NVIDIADRIVER_DAEMONSET_PREFIX = "nvidia-gpu-driver-"


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand: its Helm values path, the DaemonSet that runs it and what it does for a pod."""

    values_path: str
    daemonset: str
    role: str


#: Operands in the order a pod depends on them (driver first, telemetry last).
OPERANDS: tuple[Operand, ...] = (
    Operand("toolkit", "nvidia-container-toolkit-daemonset",
            "configures the container runtime so containers get the driver libraries and devices (CDI)"),
    Operand("devicePlugin", "nvidia-device-plugin-daemonset",
            "advertises the GPU resources to the kubelet and allocates devices to containers"),
    Operand("gfd", "gpu-feature-discovery", "labels nodes with GPU product, count, memory, MIG and sharing facts"),
    Operand("migManager", "nvidia-mig-manager", "partitions GPUs per the node's nvidia.com/mig.config label"),
    Operand("validator", "nvidia-operator-validator", "validates driver, toolkit, CUDA and device plugin on each node"),
    Operand("dcgmExporter", "nvidia-dcgm-exporter", "exports GPU telemetry (DCGM_FI_* metrics) for Prometheus"),
)
