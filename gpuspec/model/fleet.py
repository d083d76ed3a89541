"""The whole fleet: settings plus clusters, with lookups by name and file."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, PrivateAttr

from gpuspec.model.cluster import Cluster
from gpuspec.model.settings import Channel, FleetSettings, Mirror


class Fleet(BaseModel):
    """The whole fleet: settings plus clusters, in file-name order."""

    model_config = ConfigDict(frozen=False, defer_build=True)

    settings: FleetSettings
    clusters: list[Cluster]
    settings_file: str
    root: str

    _index: tuple[int, int, dict[str, int], dict[str, int]] | None = PrivateAttr(default=None)
    _content_keys: dict[str, bytes] = PrivateAttr(default_factory=dict)

    @property
    def content_keys(self) -> dict[str, bytes]:
        """Display path → digest of the file's text, for the files the loader read (empty when unknown)."""
        return self._content_keys

    def _positions(self) -> tuple[dict[str, int], dict[str, int]]:
        """Cluster name → position and source file → position (first wins), rebuilt when the list is replaced
        or changes length."""
        clusters = self.clusters
        index = self._index
        if index is None or index[0] != id(clusters) or index[1] != len(clusters):
            by_name: dict[str, int] = {}
            by_file: dict[str, int] = {}
            for position, cluster in enumerate(clusters):
                by_name.setdefault(cluster.name, position)
                by_file.setdefault(cluster.source_file, position)
            index = (id(clusters), len(clusters), by_name, by_file)
            self._index = index
        return index[2], index[3]

    def cluster(self, name: str) -> Cluster | None:
        """The cluster called ``name``, if any (a dictionary lookup, not a scan)."""
        position = self._positions()[0].get(name)
        if position is not None and self.clusters[position].name != name:
            self._index = None  # the list was edited in place: rebuild once
            position = self._positions()[0].get(name)
        return self.clusters[position] if position is not None else None

    def cluster_from_file(self, source_file: str) -> Cluster | None:
        """The cluster read from ``source_file`` (its display path), if any."""
        position = self._positions()[1].get(source_file)
        if position is not None and self.clusters[position].source_file != source_file:
            self._index = None
            position = self._positions()[1].get(source_file)
        return self.clusters[position] if position is not None else None

    def mirror(self, name: str | None) -> Mirror | None:
        """The mirror called ``name``, if any."""
        return next((m for m in self.settings.mirrors if m.name == name), None) if name else None

    def channel(self, name: str | None) -> Channel | None:
        """The channel called ``name``, if any."""
        return next((c for c in self.settings.channels if c.name == name), None) if name else None
