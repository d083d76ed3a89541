"""Find the container images Kubernetes objects pull: ClusterPolicy / NVIDIADriver operand blocks and pod specs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.findings import DocPath

#: Kinds whose pod template lives at ``spec.template.spec``.
_TEMPLATED = frozenset({"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "ReplicationController"})
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
#: ClusterPolicy operands that only run for sandbox (VM) workloads, i.e. when ``sandboxWorkloads.enabled``.
SANDBOX_OPERANDS = frozenset({
    "vgpuManager", "vgpuDeviceManager", "vfioManager", "sandboxDevicePlugin", "kataManager",
    "kataSandboxDevicePlugin",
})
#: Operands whose tag the operator completes with ``-<os>`` (e.g. ``580.95.05-ubuntu22.04``).
DRIVER_LIKE = frozenset({"driver", "gds", "gdrcopy", "vgpuManager"})
#: NVIDIADriver spec blocks → the ClusterPolicy/values component they correspond to.
_NVIDIADRIVER_BLOCKS = {"": "driver", "manager": "driver.manager", "gds": "gds", "gdrcopy": "gdrcopy"}


@dataclass(frozen=True, slots=True)
class ImageRef:
    """An image reference split into ``base`` (registry/path/name), ``tag`` and ``digest``."""

    base: str
    tag: str | None
    digest: str | None

    @classmethod
    def parse(cls, ref: str) -> ImageRef:
        """Split ``registry/path/name[:tag][@digest]``."""
        ref = ref.strip()
        digest = None
        if "@" in ref:
            ref, digest = ref.split("@", 1)
        tag = None
        slash, colon = ref.rfind("/"), ref.rfind(":")
        if colon > slash:
            ref, tag = ref[:colon], ref[colon + 1:]
        return cls(base=ref, tag=tag, digest=digest)

    @property
    def name(self) -> str:
        """The last path segment of the image, e.g. ``k8s-device-plugin``."""
        return self.base.rsplit("/", 1)[-1]

    def __str__(self) -> str:
        out = self.base
        if self.tag:
            out += f":{self.tag}"
        if self.digest:
            out += f"@{self.digest}"
        return out


@dataclass(frozen=True, slots=True)
class ImageUse:
    """One image an object pulls, where it is written, and which operand it is (when known).

    ``path`` points at the ``image`` field of a container, or at the operand block of a ClusterPolicy /
    NVIDIADriver (which holds ``repository``, ``image`` and ``version``).  ``component`` is the Helm values
    path of the operand (``driver.manager``); ``suffixed`` says the operator appends ``-<os>`` to its tag.
    """

    ref: ImageRef
    obj_ref: str
    path: DocPath
    component: str | None = None
    suffixed: bool = False

    @property
    def display(self) -> str:
        """The reference as text."""
        return str(self.ref)


def operand_ref(block: Mapping[str, Any]) -> ImageRef | None:
    """The image an operand block (``repository``/``image``/``version``) pulls; None when it names no image."""
    image = block.get("image")
    if not isinstance(image, str) or not image:
        return None
    repository = block.get("repository")
    version = block.get("version")
    base = f"{repository.rstrip('/')}/{image}" if isinstance(repository, str) and repository else image
    parsed = ImageRef.parse(base)
    if isinstance(version, str | int | float) and str(version):
        text = str(version)
        if text.startswith("sha256:"):
            return ImageRef(parsed.base, parsed.tag, text)
        return ImageRef(parsed.base, text, parsed.digest)
    return parsed


def clusterpolicy_images(obj: Mapping[str, Any], obj_ref: str) -> Iterator[ImageUse]:
    """Images of the operands a ClusterPolicy runs.

    Operand blocks with ``enabled: false``, sandbox operands while ``sandboxWorkloads`` is off, and the
    driver image when ``driver.useNvidiaDriverCRD`` hands the driver to NVIDIADriver resources are skipped.
    """
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return
    sandbox = spec.get("sandboxWorkloads")
    sandbox_on = isinstance(sandbox, Mapping) and sandbox.get("enabled") is True
    driver = spec.get("driver")
    driver_crd = isinstance(driver, Mapping) and driver.get("useNvidiaDriverCRD") is True
    for path, block in _operand_blocks(spec, ()):
        component = ".".join(str(p) for p in path)
        if not sandbox_on and str(path[0]) in SANDBOX_OPERANDS:
            continue
        if driver_crd and component == "driver":
            continue  # NVIDIADriver resources choose the driver image
        ref = operand_ref(block)
        if ref is not None:
            yield ImageUse(ref, obj_ref, ("spec", *path), component, component in DRIVER_LIKE)


def nvidiadriver_images(obj: Mapping[str, Any], obj_ref: str) -> Iterator[ImageUse]:
    """Images an NVIDIADriver pulls: the driver itself and its manager / GDS / GDRCopy blocks."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return
    for key, component in _NVIDIADRIVER_BLOCKS.items():
        block = spec.get(key) if key else spec
        if not isinstance(block, Mapping) or block.get("enabled") is False:
            continue
        ref = operand_ref(block)
        if ref is not None:
            path: DocPath = ("spec", key) if key else ("spec",)
            yield ImageUse(ref, obj_ref, path, component, component in DRIVER_LIKE)


def pod_images(obj: Mapping[str, Any], obj_ref: str) -> Iterator[ImageUse]:
    """Images of the containers of a Pod or a workload's pod template (Deployment, DaemonSet, Job, CronJob …)."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    prefix: DocPath
    if not isinstance(kind, str):  # a hand-edited object: the schema check reports its kind
        return
    if kind == "Pod":
        pod, prefix = spec, ("spec",)
    elif kind in _TEMPLATED:
        pod, prefix = get_path(spec, "template", "spec"), ("spec", "template", "spec")
    elif kind == "CronJob":
        pod, prefix = get_path(spec, "jobTemplate", "spec", "template", "spec"), (
            "spec", "jobTemplate", "spec", "template", "spec")
    else:
        return
    if not isinstance(pod, Mapping):
        return
    for field in _CONTAINER_LISTS:
        containers = pod.get(field)
        if not isinstance(containers, list):
            continue
        for index, container in enumerate(containers):
            if isinstance(container, Mapping) and isinstance(container.get("image"), str):
                yield ImageUse(ImageRef.parse(container["image"]), obj_ref, (*prefix, field, index, "image"))


def object_images(obj: Mapping[str, Any]) -> list[ImageUse]:
    """Every image ``obj`` pulls, whatever its kind (none for kinds that hold no images)."""
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    obj_ref = f"{kind or '?'}/{name or '?'}"
    api_version = str(obj.get("apiVersion", ""))
    if kind == "ClusterPolicy" and api_version.startswith("nvidia.com/"):
        return list(clusterpolicy_images(obj, obj_ref))
    if kind == "NVIDIADriver" and api_version.startswith("nvidia.com/"):
        return list(nvidiadriver_images(obj, obj_ref))
    return list(pod_images(obj, obj_ref))


def _operand_blocks(node: Mapping[str, Any], path: DocPath) -> Iterator[tuple[DocPath, Mapping[str, Any]]]:
    for key, value in node.items():
        if not isinstance(value, Mapping) or value.get("enabled") is False:
            continue
        here = (*path, str(key))
        if isinstance(value.get("image"), str) and ("repository" in value or "version" in value):
            yield here, value
        yield from _operand_blocks(value, here)


def get_path(node: Any, *keys: str) -> Any:
    """The value at ``keys`` inside nested mappings, or None where the path breaks."""
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node
