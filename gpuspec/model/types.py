"""Constrained value types of the fleet spec and the base of its models (unknown keys are refused)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from gpuspec.model.patterns import DNS_LABEL_PATTERN as DNS_LABEL_PATTERN

API_VERSION = "gpuspec.io/v1alpha1"

Name = Annotated[str, StringConstraints(pattern=DNS_LABEL_PATTERN)]
#: A Kubernetes minor version such as "1.31".
KubeMinor = Annotated[str, StringConstraints(pattern=r"^1\.[0-9]{1,2}$")]
#: A GPU Operator release such as "v25.10.1".
OperatorVersion = Annotated[str, StringConstraints(pattern=r"^v[0-9]{2}\.[0-9]{1,2}\.[0-9]{1,2}$")]
#: A driver branch such as "580".
DriverBranch = Annotated[str, StringConstraints(pattern=r"^[0-9]{3}$")]
#: A full driver version such as "580.95.05".
DriverVersion = Annotated[str, StringConstraints(pattern=r"^[0-9]{3}\.[0-9]{1,3}(\.[0-9]{1,3})?$")]
#: A Kubernetes quantity or percentage for maxUnavailable, e.g. "25%" or 1.
#: The largest integer the spec takes: Kubernetes' int32, the narrowest integer a field it renders to has
#: (an int-or-string such as maxUnavailable is int32), so no number can make arithmetic on it or an object fail.
MAX_INT32 = 2**31 - 1
IntOrPercent = Annotated[int, Field(le=MAX_INT32)] | Annotated[str, StringConstraints(pattern=r"^[0-9]{1,3}%$")]
#: An upstream registry host (``nvcr.io``, ``registry.k8s.io``, optionally with a port).
REGISTRY_HOST_PATTERN = r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?$"
RegistryHost = Annotated[str, StringConstraints(pattern=REGISTRY_HOST_PATTERN)]
#: A mirror prefix: a registry host and optional path, as image references take it -- no scheme, tag or digest.
MIRROR_PREFIX_PATTERN = r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-]{1,2}[a-z0-9]+)*){0,16}$"
MirrorPrefix = Annotated[str, StringConstraints(pattern=MIRROR_PREFIX_PATTERN)]
LabelKey = Annotated[
    str,
    StringConstraints(pattern=r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"),
]
#: A mig-parted config name, as the value of the nvidia.com/mig.config node label.
MigConfigName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")]
LabelValue = Annotated[str, StringConstraints(pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")]
#: A GPU product id such as "H100-SXM5-80GB" (letters, digits, '-', '_', '.', '+').
PRODUCT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$"
Product = Annotated[str, StringConstraints(pattern=PRODUCT_PATTERN)]
#: An OS version such as "22.04" or "9.4".
OS_VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$"
OsVersion = Annotated[str, StringConstraints(pattern=OS_VERSION_PATTERN)]
#: A kernel release such as "5.15.0-105-generic" or "5.14.0-427.13.1.el9_4.x86_64".
KERNEL_PATTERN = r"^[0-9][A-Za-z0-9_.+~-]{0,127}$"
Kernel = Annotated[str, StringConstraints(pattern=KERNEL_PATTERN)]
#: A MIG profile such as "1g.10gb", "3g.40gb" or "1g.24gb+me.all".
MIG_PROFILE_PATTERN = r"^[0-9]{1,2}g\.[0-9]{1,4}gb(\+[a-z]{1,8}(\.[a-z]{1,8})?)?$"
MigProfile = Annotated[str, StringConstraints(pattern=MIG_PROFILE_PATTERN)]
#: A MIG resource the device plugin advertises (without nvidia.com/), such as "mig-1g.10gb" or "mig-1g.10gb.me".
MIG_RESOURCE_PATTERN = r"^mig-[0-9]{1,2}g\.[0-9]{1,4}gb(\.[a-z]{1,8}){0,2}$"
MigResource = Annotated[str, StringConstraints(pattern=MIG_RESOURCE_PATTERN)]
#: A folder inside the repository such as "rendered" or "gitops/rendered": relative, no "..", no hidden parts.
REPO_PATH_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}){0,15}$"
RepoPath = Annotated[str, StringConstraints(pattern=REPO_PATH_PATTERN)]


class SpecModel(BaseModel):
    """Base of every spec model: unknown keys are errors, numbers may be written where text is expected."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, frozen=False, defer_build=True)


# --------------------------------------------------------------------------- fleet.yaml


class ObjectMeta(SpecModel):
    """Identity of a spec object."""

    name: Name = Field(description="Name of the object; for a cluster it equals the file name without .yaml.")
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description="Free-form labels (environment, region, team) for selection and reports."
    )
    description: str | None = Field(default=None, description="One line saying what this object is for.")
