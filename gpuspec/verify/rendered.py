"""Read the rendered output verify checks: per-cluster values, overlay, images.txt, and the GitOps objects.

The contract with ``gpuspec render`` is the directory layout only::

    <rendered>/clusters/<cluster>/gpu-operator.values.yaml   Helm values of the GPU Operator chart
    <rendered>/clusters/<cluster>/kustomization.yaml         the overlay (and the resources it lists)
    <rendered>/clusters/<cluster>/images.txt                 every image the cluster pulls
    <rendered>/clusters/<cluster>/acceptance/kustomization.yaml   the acceptance Jobs (optional)
    <rendered>/clusters/<cluster>/prerequisites/kustomization.yaml   what must exist before the chart (optional)
    <rendered>/gitops/**.yaml                                Argo CD / Flux objects
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpuspec.findings import DocPath
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.verify.manifests import load_yaml_all

VALUES_FILE = "gpu-operator.values.yaml"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
IMAGES_FILE = "images.txt"
ACCEPTANCE_DIR = "acceptance"
PREREQUISITES_DIR = "prerequisites"
#: Folder of the objects that need optional CRDs (the PrometheusRule), synced on their own.
MONITORING_DIR = "monitoring"
#: OpenShift: the folder of the OLM objects (applied before the overlay).
OLM_DIR = "olm"
_YAML_SUFFIXES = (".yaml", ".yml")
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: The largest rendered file verify reads (the render writer's own bound).
MAX_RENDERED_FILE_BYTES = 64 * 1024 * 1024


def read_rendered_text(path: Path) -> str:
    """The text of a rendered file, read as every file read by name is (:func:`read_bounded`: a regular file,
    never a link out of the repository or into .git, a FIFO or a device, at most
    :data:`MAX_RENDERED_FILE_BYTES`); UnsafeFile, OSError or UnicodeDecodeError when it cannot be read."""
    return read_bounded(path, MAX_RENDERED_FILE_BYTES, expected="a rendered file").decode("utf-8")


class RenderedFileError(ValueError):
    """A rendered file that cannot be read or is not valid YAML."""


@dataclass(eq=False)
class RenderedFile:
    """One rendered YAML file: its parsed documents and, on demand, the positions of paths inside them.

    ``documents`` keeps one entry per YAML document, empty documents as None, so an index names the
    same document for :meth:`position`.
    """

    path: Path
    display: str
    documents: list[Any]
    _nodes: list[yaml.Node | None] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def read(cls, path: Path, display: str) -> RenderedFile:
        """Read and parse every document of ``path``; raise RenderedFileError when it is unreadable or invalid."""
        try:
            text = read_rendered_text(path)
        except UnsafeFile as refused:
            raise RenderedFileError(f"{display} {refused.message}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RenderedFileError(f"{display}: cannot be read: {exc}") from exc
        try:
            documents = load_yaml_all(text)
        except yaml.YAMLError as exc:
            raise RenderedFileError(f"{display}: invalid YAML: {exc}") from exc
        return cls(path=path, display=display, documents=documents)

    def position(self, doc_index: int, path: DocPath, *, at_key: bool = False) -> tuple[int, int]:
        """1-based line and column of ``path`` inside document ``doc_index`` (as far as the path exists).

        ``at_key`` points at the mapping key of the last step instead of its value.
        """
        with self._lock:
            if self._nodes is None:
                try:
                    text = read_rendered_text(self.path)
                    self._nodes = list(yaml.compose_all(text, Loader=_BaseLoader))
                except (OSError, UnsafeFile, UnicodeDecodeError, yaml.YAMLError):
                    self._nodes = []
            nodes = self._nodes
        root = nodes[doc_index] if 0 <= doc_index < len(nodes) else None
        if root is None:
            return 1, 1
        node = _walk(root, path, at_key)
        return node.start_mark.line + 1, node.start_mark.column + 1


@dataclass
class ClusterOutput:
    """What ``gpuspec render`` wrote for one cluster; a missing file is None."""

    name: str
    directory: Path
    display_dir: str
    values: RenderedFile | None
    kustomization: RenderedFile | None
    images: list[str] | None
    resources: list[RenderedFile]
    problems: list[str]
    #: The acceptance folder's kustomization (None when the cluster has no acceptance checks).
    acceptance: RenderedFile | None = None
    #: The prerequisites folder's kustomization (None when the cluster needs none).
    prerequisites: RenderedFile | None = None
    #: The monitoring folder's kustomization (None when the cluster renders no alerts).
    monitoring: RenderedFile | None = None
    #: OpenShift: the OLM folder's kustomization (None elsewhere).
    olm: RenderedFile | None = None

    @property
    def values_display(self) -> str:
        """Display path of the values file (whether or not it exists)."""
        return f"{self.display_dir}/{VALUES_FILE}"

    @property
    def images_display(self) -> str:
        """Display path of images.txt."""
        return f"{self.display_dir}/{IMAGES_FILE}"

    def values_data(self) -> dict[str, Any]:
        """The parsed Helm values (empty when the file is missing or not a mapping)."""
        docs = [d for d in self.values.documents if d is not None] if self.values is not None else []
        return docs[0] if docs and isinstance(docs[0], dict) else {}


def _sub_kustomization(directory: Path, display_dir: str, folder: str, problems: list[str]) -> RenderedFile | None:
    """The kustomization of sub-folder ``folder`` of a cluster's output (acceptance, prerequisites, ...), if any."""
    sub = directory / folder
    found = next((sub / n for n in KUSTOMIZATION_FILES if (sub / n).is_file()), None)
    return _read(found, f"{display_dir}/{folder}/{found.name}", problems) if found is not None else None


def read_cluster_output(rendered_dir: Path, display_root: str, name: str) -> ClusterOutput:
    """Read ``<rendered>/clusters/<name>/``; unreadable or missing parts are listed in ``problems``."""
    directory = rendered_dir / "clusters" / name
    display_dir = f"{display_root}/clusters/{name}"
    problems: list[str] = []
    output = ClusterOutput(name=name, directory=directory, display_dir=display_dir, values=None,
                           kustomization=None, images=None, resources=[], problems=problems)
    if not directory.is_dir():
        problems.append(f"{display_dir}/ does not exist")
        return output
    values_path = directory / VALUES_FILE
    if values_path.is_file():
        output.values = _read(values_path, f"{display_dir}/{VALUES_FILE}", problems)
        docs = [d for d in output.values.documents if d is not None] if output.values is not None else []
        if output.values is not None and (len(docs) > 1 or (docs and not isinstance(docs[0], dict))):
            problems.append(f"{display_dir}/{VALUES_FILE} is not a single YAML mapping")
    else:
        problems.append(f"{display_dir}/{VALUES_FILE} does not exist")
    kustomization = next((directory / n for n in KUSTOMIZATION_FILES if (directory / n).is_file()), None)
    if kustomization is not None:
        output.kustomization = _read(kustomization, f"{display_dir}/{kustomization.name}", problems)
    else:
        problems.append(f"{display_dir}/kustomization.yaml does not exist")
    images_path = directory / IMAGES_FILE
    if images_path.is_file():
        try:
            output.images = parse_images_txt(read_rendered_text(images_path))
        except UnsafeFile as refused:
            problems.append(f"{display_dir}/{IMAGES_FILE} {refused.message}")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{display_dir}/{IMAGES_FILE}: cannot be read: {exc}")
    else:
        problems.append(f"{display_dir}/{IMAGES_FILE} does not exist")
    output.acceptance = _sub_kustomization(directory, display_dir, ACCEPTANCE_DIR, problems)
    output.prerequisites = _sub_kustomization(directory, display_dir, PREREQUISITES_DIR, problems)
    output.monitoring = _sub_kustomization(directory, display_dir, MONITORING_DIR, problems)
    output.olm = _sub_kustomization(directory, display_dir, OLM_DIR, problems)
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.suffix in _YAML_SUFFIXES and not (
                path.name in KUSTOMIZATION_FILES or (path.parent == directory and path.name == VALUES_FILE)):
            rel = path.relative_to(directory).as_posix()
            read = _read(path, f"{display_dir}/{rel}", problems)
            if read is not None:
                output.resources.append(read)
    return output


def read_gitops_files(rendered_dir: Path, display_root: str) -> tuple[list[RenderedFile], list[str]]:
    """Every YAML file under ``<rendered>/gitops`` (sorted) and the problems reading them."""
    problems: list[str] = []
    files: list[RenderedFile] = []
    root = rendered_dir / "gitops"
    if not root.is_dir():
        return files, problems
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in _YAML_SUFFIXES:
            rel = path.relative_to(rendered_dir).as_posix()
            read = _read(path, f"{display_root}/{rel}", problems)
            if read is not None:
                files.append(read)
    return files, problems


def parse_images_txt(text: str) -> list[str]:
    """Image references of an images.txt: one per line; blank lines and ``#`` comments are skipped."""
    images: list[str] = []
    for line in text.splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            images.append(entry.split()[0])
    return images


def _read(path: Path, display: str, problems: list[str]) -> RenderedFile | None:
    try:
        return RenderedFile.read(path, display)
    except RenderedFileError as exc:
        problems.append(str(exc))
        return None


def _walk(root: yaml.Node, path: DocPath, at_key: bool) -> yaml.Node:
    node = root
    for index, part in enumerate(path):
        if isinstance(node, yaml.MappingNode):
            found = next(((key, value) for key, value in node.value
                          if isinstance(key, yaml.ScalarNode) and key.value == str(part)), None)
            if found is None:
                return node
            node = found[0] if at_key and index == len(path) - 1 else found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node
