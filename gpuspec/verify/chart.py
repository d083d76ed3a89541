"""A GPU Operator chart given to verify: its version, default values and CRDs (directory or .tgz)."""

from __future__ import annotations

import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuspec.errors import GpuspecError
from gpuspec.verify.helm import chart_metadata
from gpuspec.verify.manifests import load_yaml_all
from gpuspec.verify.schemas import CrdSet, load_crd_documents
from gpuspec.verify.values_keys import ChartValues

_CRD_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class ChartInfo:
    """A local chart with what verify reads from it once: version, values.yaml and CRD documents."""

    path: Path
    name: str
    version: str
    app_version: str
    values: ChartValues
    crds: tuple[dict[str, Any], ...]

    @classmethod
    def load(cls, path: Path) -> ChartInfo:
        """Read a chart directory or .tgz; raise GpuspecError when it is not a readable Helm chart."""
        if not path.exists():
            raise GpuspecError(f"chart not found: {path}", hint="--chart takes a chart directory or a .tgz")
        metadata = chart_metadata(path)
        return cls(
            path=path,
            name=str(metadata.get("name", "")),
            version=str(metadata.get("version", "")),
            app_version=str(metadata.get("appVersion", "")),
            values=ChartValues.from_chart(path),
            crds=tuple(chart_crd_documents(path)),
        )

    def matches(self, release: str) -> bool:
        """True when the chart's version is ``release`` (a leading ``v`` on either side is ignored)."""
        return _strip_v(self.version) == _strip_v(release)


def chart_crd_documents(chart: Path) -> list[dict[str, Any]]:
    """The CRDs a chart ships in ``crds/`` and in its subcharts' ``charts/*/crds/`` (directory or .tgz)."""
    if chart.is_dir():
        dirs = [chart / "crds", *sorted(p / "crds" for p in (chart / "charts").glob("*") if p.is_dir())]
        return load_crd_documents([d for d in dirs if d.is_dir()])
    crds: list[dict[str, Any]] = []
    try:
        with tarfile.open(chart, mode="r:*") as tar:
            members = sorted((m for m in tar.getmembers() if m.isfile() and _is_crd_member(m.name)),
                             key=lambda m: m.name)
            for member in members:
                extracted = tar.extractfile(member)
                if extracted is None:
                    continue
                for doc in load_yaml_all(extracted.read().decode("utf-8")):
                    if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                        crds.append(doc)
    except (tarfile.TarError, OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise GpuspecError(f"cannot read CRDs of chart archive {chart}: {exc}") from exc
    return crds


def crd_set(chart: ChartInfo | None, extra: Sequence[dict[str, Any]]) -> CrdSet:
    """CRDs from ``extra`` (``--crds``) and then the chart's own, which win for the same group and kind."""
    return CrdSet([*extra, *(chart.crds if chart is not None else ())])


def _is_crd_member(name: str) -> bool:
    parts = name.split("/")
    if not name.endswith(_CRD_SUFFIXES):
        return False
    # <chart>/crds/x.yaml or <chart>/charts/<sub>/crds/x.yaml
    return (len(parts) == 3 and parts[1] == "crds") or (
        len(parts) == 5 and parts[1] == "charts" and parts[3] == "crds")


def _strip_v(version: str) -> str:
    return version[1:] if version.startswith("v") else version
