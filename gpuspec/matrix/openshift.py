"""OpenShift facts of the support matrix (data/openshift.yaml): Kubernetes per OpenShift version, OLM naming."""

from __future__ import annotations

from typing import Literal

from gpuspec.matrix import query
from gpuspec.matrix.data_models import NfdOperator, OlmPackage, OpenShiftData, OpenShiftPrecompiled
from gpuspec.matrix.load import load_matrix


def data() -> OpenShiftData:
    """The OpenShift data file, validated."""
    return load_matrix().openshift


def openshift_minor(version: str) -> str:
    """``4.19`` of ``4.19``, ``4.19.7`` or ``v4.19``."""
    parts = version.strip().lstrip("vV").split(".")
    return ".".join(parts[:2])


def kubernetes_of(openshift_version: str) -> str | Literal[False] | None:
    """The Kubernetes minor OpenShift ``openshift_version`` ships; None when the matrix records it as unknown,
    False when the OpenShift version is not in the matrix at all."""
    minor = openshift_minor(openshift_version)
    for row in data().kubernetes_versions:
        if row.openshift == minor:
            return row.kubernetes
    return False


def olm() -> OlmPackage:
    """The GPU Operator's OLM package facts."""
    return data().olm


def nfd() -> NfdOperator:
    """The Node Feature Discovery Operator's OLM facts."""
    return data().nfd


def precompiled() -> OpenShiftPrecompiled:
    """Where precompiled RHCOS driver images come from."""
    return data().precompiled


def channel(version: str) -> str:
    """The OLM channel of GPU Operator release ``version``'s line (``v26.7``)."""
    line = query.line_of(version)
    if line is None:
        raise ValueError(f"unknown GPU Operator release {version}")
    return olm().channel_pattern.format(line=line)


def csv_name(version: str) -> str:
    """The ClusterServiceVersion name of GPU Operator release ``version`` (``gpu-operator-certified.v26.7.0``)."""
    rel = query.release(version)
    if rel is None:
        raise ValueError(f"unknown GPU Operator release {version}")
    return olm().csv_pattern.format(version=rel.version)


def catalog_image(openshift_version: str, index: str) -> str:
    """The operator catalog image of an OpenShift minor (``<index>:v4.19``)."""
    return f"{index}:v{openshift_minor(openshift_version)}"
