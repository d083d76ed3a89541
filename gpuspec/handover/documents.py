"""Render the handover documents: one Markdown file per cluster plus a fleet index, as output bytes.

Each document opens with the same HTML comment (:data:`HEADER`), so ``gpuspec render`` recognises it as its own
file; it names no digest, so a document changes exactly when its text does.
"""

from __future__ import annotations

import hashlib
import json
import marshal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from gpuspec import usercache
from gpuspec.errors import GpuspecError
from gpuspec.findings import Severity
from gpuspec.handover.facts import UPDATE_RULES, RuleSetting, cluster_facts
from gpuspec.model.fleet import Fleet
from gpuspec.render.context import ClusterContext
from gpuspec.render.filetree import ClusterPlan
from gpuspec.render.serialize import MARKDOWN_HEADER_MARK
from gpuspec.templating import environment
from gpuspec.templating.escape import Md

#: Folder of the documents inside the output folder.
HANDOVER_DIR = "handover"
#: The fleet index (GitHub shows a folder's README.md below its file list).
INDEX_FILE = f"{HANDOVER_DIR}/README.md"
CLUSTER_TEMPLATE = "handover/cluster.md.j2"
INDEX_TEMPLATE = "handover/index.md.j2"


def document_path(cluster: str) -> str:
    """Output path of a cluster's handover document."""
    return f"{HANDOVER_DIR}/{cluster}.md"


#: The comment that opens every document: no digest, version or time.
HEADER = Md(f"{MARKDOWN_HEADER_MARK} from fleet/ and policies/. Do not edit: change fleet/ "
            "(or policies/, fleet/templates/) and run `gpuspec render`. -->")


@dataclass(frozen=True)
class HandoverSettings:
    """What every cluster's document shares: the fleet folder (template overrides), their digests, rule settings."""

    fleet_dir: Path | None
    templates: Mapping[str, str] = field(default_factory=dict)
    rules: Mapping[str, RuleSetting] = field(default_factory=dict)
    rendered_root: str = "rendered"

    def digest(self, base: str) -> str:
        """``base`` (an input digest) combined with the template overrides."""
        if not self.templates:
            return base
        digest = hashlib.sha256(base.encode())
        for name, sha in sorted(self.templates.items()):
            digest.update(f"{name}\0{sha}\n".encode())
        return digest.hexdigest()


def rule_settings(fleet: Fleet, policies_dir: Path | None) -> dict[str, RuleSetting]:
    """How the fleet's policy packs set the update-policy rules (catalogue defaults when the packs do not load)."""
    out = {e.id: RuleSetting(True, e.severity.value, e.defaults()) for e in UPDATE_RULES}
    if policies_dir is None or not policies_dir.is_dir():
        return out
    from gpuspec.policy.load import load_policy

    try:
        policy = load_policy(policies_dir, list(fleet.settings.policy.packs) or ["default"])
    except GpuspecError:  # a missing pack: validate and lint report it; the documents show the defaults
        return out
    if not policy.usable:
        return out
    for entry in UPDATE_RULES:
        config = policy.rules.get(entry.id)
        if config is not None:
            out[entry.id] = RuleSetting(config.enabled, Severity(config.severity).value, dict(config.params))
    return out


def cluster_document(ctx: ClusterContext, plan: ClusterPlan,
                     settings: HandoverSettings) -> tuple[bytes, dict[str, Any]]:
    """The bytes of one cluster's document and the facts it was made from."""
    facts = cluster_facts(ctx, plan, settings.rules, settings.rendered_root)
    text = environment.render(CLUSTER_TEMPLATE, {**facts, "header": HEADER},
                              settings.fleet_dir)
    return _finish(text), facts


#: How many user-cache entries the handover documents of one fleet folder and output root are spread over.
DOCUMENT_SHARDS = usercache.SHARDS


def document_shard(cluster: str) -> int:
    """The number of the cache entry (see :class:`DocumentCache`) that holds the document of ``cluster``."""
    return usercache.shard_of(cluster, DOCUMENT_SHARDS)


class DocumentCache:
    """Handover documents rendered before, with their index summaries, in :data:`DOCUMENT_SHARDS` user-cache
    entries per fleet folder and output root, a cluster's entry chosen by its name (:func:`document_shard`).
    A document is a pure function of its input digest and gpuspec's code, which names the entry.

    A few entries instead of a file per document: a cold render creates at most 64 cache files, not one per
    cluster; and not one for the fleet: whoever renders a shard's clusters opens, fills and stores that shard
    alone, so no process ever holds the documents of the whole fleet.
    Open a shard, :meth:`get` and :meth:`put` its documents, then :meth:`save`.
    """

    def __init__(self, settings: HandoverSettings, shard: int) -> None:
        """Open entry number ``shard`` of ``settings``' fleet folder and output root (empty when absent or
        caching is off)."""
        self._memo = usercache.Memo("handover", settings.rendered_root,
                                    str(settings.fleet_dir.resolve()) if settings.fleet_dir else "", f"shard-{shard}")
        self._bytes = 0

    def get(self, name: str, digest: str) -> tuple[bytes, dict[str, Any]] | None:
        """The document and summary of cluster ``name`` rendered from inputs ``digest``, if stored."""
        found, hit = self._memo.get((name, digest))
        if found and isinstance(hit, tuple) and len(hit) == 2 and isinstance(hit[0], bytes) \
                and isinstance(hit[1], dict):
            return hit[0], hit[1]
        return None

    def put(self, name: str, digest: str, document: bytes, brief: dict[str, Any]) -> None:
        """Remember the document and summary of cluster ``name`` for inputs ``digest`` (one it got from
        :meth:`get` too, to count its size)."""
        self._memo.put((name, digest), (document, brief))
        self._bytes += len(document)

    def save(self) -> None:
        """Store the documents of this run (only those: documents of removed clusters or old inputs go).

        Documents too large together for one cache entry are not stored: encoding them would only hold
        another copy of them in memory before the entry is refused.
        """
        if self._bytes < usercache.entry_limit("handover"):
            self._memo.save()


def cached_cluster_document(context: Callable[[], ClusterContext], plan: ClusterPlan, settings: HandoverSettings,
                            cache: DocumentCache | None = None) -> tuple[bytes, dict[str, Any]]:
    """:func:`cluster_document` bytes and the index :func:`summary` (plain data), from ``cache`` (the cluster's
    shard) when the same gpuspec rendered the same inputs before; the caller puts the documents it keeps."""
    digest = settings.digest(plan.digest)
    hit = cache.get(plan.name, digest) if cache is not None else None
    if hit is not None:
        return hit
    document, facts = cluster_document(context(), plan, settings)
    brief = json.loads(json.dumps(summary(facts)))  # plain data (enum values become strings), as the cache stores
    return document, brief


def pack_summary(brief: dict[str, Any]) -> bytes:
    """A cluster's index summary (plain data) as a few hundred bytes, to hold for many clusters at once."""
    return marshal.dumps(brief, 4)


def unpack_summary(packed: bytes) -> dict[str, Any]:
    """The summary :func:`pack_summary` packed."""
    brief = marshal.loads(packed)
    assert isinstance(brief, dict)
    return brief


def summary(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a cluster's facts the fleet index shows."""
    c = facts["cluster"]
    return {
        "name": c["name"], "description": c["description"], "document": f"{c['name']}.md",
        "fleet_wave": facts["update"]["fleet_wave"], "kubernetes": c["kubernetes"], "operator": c["operator"],
        "gitops": c["gitops"]["tool"], "mirror": c["mirror"]["name"] if c["mirror"] else "",
        "totals": c["totals"], "products": sorted({p["product"] for p in facts["pools"]}),
        "owners": [{"role": r["role"], "team": r["team"]["name"]} for r in facts["owners"]["roles"]
                   if r["owned"] and r["role"] != "observability"],
    }


class _Unpacked(Sequence[dict[str, Any]]):
    """Packed summaries, each unpacked when the template reaches it: a fleet's index never holds every cluster's
    summary as a dict at once."""

    def __init__(self, packed: Sequence[bytes]) -> None:
        self._packed = packed

    def __len__(self) -> int:
        return len(self._packed)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> _Unpacked: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | _Unpacked:
        if isinstance(index, slice):
            return _Unpacked(self._packed[index])
        return unpack_summary(self._packed[index])


def _wave_order(packed: bytes) -> tuple[Any, Any]:
    brief = unpack_summary(packed)
    return brief["fleet_wave"], brief["name"]


def index_document(fleet: Fleet, summaries: Sequence[bytes], settings: HandoverSettings) -> bytes:
    """The fleet index: every cluster (``summaries``: packed, see :func:`pack_summary`) with its document, in
    fleet-wave order.  It shows the summaries and nothing else, so an edit that leaves every summary as it was
    leaves the index byte for byte as it was."""
    clusters = _Unpacked(sorted(summaries, key=_wave_order))
    data = {"header": HEADER, "fleet": {
        "name": fleet.settings.metadata.name, "description": fleet.settings.metadata.description or "",
    }, "clusters": clusters}
    return _finish(environment.render(INDEX_TEMPLATE, data, settings.fleet_dir))


def _finish(text: str) -> bytes:
    """LF line ends, no trailing spaces on lines, exactly one newline at the end."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue
        out.append(line)
    return ("\n".join(out).strip("\n") + "\n").encode("utf-8")
