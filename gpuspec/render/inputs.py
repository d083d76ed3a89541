"""Hash the input files a cluster's output depends on (fleet.yaml, its cluster file, policies/)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from gpuspec.errors import GpuspecError
from gpuspec.loader.files import FLEET_FILE, cluster_files
from gpuspec.loader.safefile import UnsafeFile, read_bounded

#: Largest input file hashed (fleet files are refused past 1 MiB anyway; policies and templates are small).
MAX_INPUT_BYTES = 16 * 1024 * 1024


class UnusableInput(GpuspecError, ValueError):
    """An input file render depends on is refused (a clean exit-2 error; a ValueError for the render stamp)."""


def file_digest(path: Path) -> str:
    """sha256 of a regular input file inside its repository; UnusableInput for a FIFO, device, outside link or
    oversized file (never read, so hashing cannot hang or leak)."""
    try:
        return hashlib.sha256(read_bounded(path, MAX_INPUT_BYTES)).hexdigest()
    except UnsafeFile as refused:
        raise UnusableInput(f"{path} {refused.message}",
                            hint="policy packs and fleet files must be regular files inside the repository") from None
    except OSError as exc:
        raise UnusableInput(f"{path} cannot be read: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class InputDigests:
    """sha256 of each input file, keyed by a machine-independent name (``fleet.yaml``, ``clusters/x.yaml``…)."""

    shared: dict[str, str] = field(default_factory=dict)
    clusters: dict[str, str] = field(default_factory=dict)

    def for_cluster(self, source_file: str) -> str:
        """One sha256 over fleet.yaml, policies/ and the cluster's own file (by its file name)."""
        key = cluster_input(Path(source_file))
        items = sorted(self.shared.items())
        if key in self.clusters:
            items.append((key, self.clusters[key]))
        digest = hashlib.sha256()
        for name, sha in items:
            digest.update(f"{name}\0{sha}\n".encode())
        return digest.hexdigest()

    def for_fleet(self) -> str:
        """One sha256 over every input file (for output that depends on the whole fleet)."""
        digest = hashlib.sha256()
        for name, sha in sorted({**self.shared, **self.clusters}.items()):
            digest.update(f"{name}\0{sha}\n".encode())
        return digest.hexdigest()


def read_shared_digests(fleet_dir: Path, policies_dir: Path | None) -> dict[str, str]:
    """Hash fleet.yaml and every file below ``policies_dir`` (when it exists): the inputs every cluster shares."""
    shared = {FLEET_FILE: file_digest(fleet_dir / FLEET_FILE)}
    if policies_dir is not None and policies_dir.is_dir():
        for path in sorted(p for p in policies_dir.rglob("*") if p.is_file()):
            shared[f"policies/{path.relative_to(policies_dir).as_posix()}"] = file_digest(path)
    return shared


def cluster_input(path: Path) -> str:
    """The name :class:`InputDigests` gives the cluster file ``path``."""
    return f"clusters/{path.name}"


def read_input_digests(fleet_dir: Path, policies_dir: Path | None) -> InputDigests:
    """Hash fleet.yaml, every cluster file and every file below ``policies_dir`` (when it exists)."""
    clusters = {cluster_input(p): file_digest(p) for p in cluster_files(fleet_dir)}
    return InputDigests(read_shared_digests(fleet_dir, policies_dir), clusters)
