"""The NVIDIADriver objects the rendered revision of a cluster applies, one per pool that has its own driver."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuspec.acceptance.expected import load_documents, mapping

#: File name pattern of a pool's NVIDIADriver in the cluster's rendered folder.
PREFIX, SUFFIX = "nvidiadriver-", ".yaml"


@dataclass(frozen=True)
class RenderedDriver:
    """One rendered NVIDIADriver: its name, the pool whose file holds it, the version and node selector it sets."""

    name: str
    pool: str
    version: str | None
    node_selector: dict[str, str]


def rendered_drivers(rendered_dir: Path, cluster: str) -> list[RenderedDriver]:
    """The NVIDIADrivers in ``rendered_dir/clusters/<cluster>/nvidiadriver-<pool>.yaml``, by pool."""
    folder = rendered_dir / "clusters" / cluster
    found: list[RenderedDriver] = []
    for path in sorted(folder.glob(f"{PREFIX}*{SUFFIX}")):
        display = f"{rendered_dir.as_posix().rstrip('/')}/clusters/{cluster}/{path.name}"
        pool = path.name[len(PREFIX):-len(SUFFIX)]
        for doc in load_documents(path, display)[1]:
            if not isinstance(doc, dict) or doc.get("kind") != "NVIDIADriver":
                continue
            meta, spec = mapping(doc.get("metadata")), mapping(doc.get("spec"))
            selector = mapping(spec.get("nodeSelector"))
            version = spec.get("version")
            found.append(RenderedDriver(str(meta.get("name", pool)), pool,
                                        None if version is None else str(version),
                                        {str(k): str(v) for k, v in selector.items()}))
    return found
