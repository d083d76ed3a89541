"""Build several independent kustomizations with one ``kubectl kustomize`` run.

Starting kubectl costs as much as rendering a chart, and verify builds one kustomization per GitOps
folder.  Those folders are built with ``--load-restrictor LoadRestrictionsNone`` anyway, so a temporary
root that lists them all as resources builds the same objects in one run: each folder is still its own
kustomization with its own transformers.  ``buildMetadata: [originAnnotations]`` tags every object with
the file it came from, which says which folder it belongs to; the tag is removed again.  When the joint
build fails (e.g. two folders define the same object) the caller builds each folder alone, so errors are
reported exactly as before.

A cluster's overlay and acceptance folder, built with kustomize's default load restrictions, share one
run the same way when both are *plain* (:mod:`gpuspec.verify.kustomize_plain`): then kustomize's
top-level steps (hash suffixes, back references across all objects, sort options) cannot make the
joint build differ from the separate ones.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from gpuspec.tools.discover import KustomizeCommand
from gpuspec.verify.kustomize import KustomizeResult, kustomize_build
from gpuspec.verify.kustomize_plain import (
    GENERATOR_KEYS,
    PLAIN_KEYS,
    can_build_together,
    crossed_references,
    owners,
)
from gpuspec.verify.manifests import Manifest, load_yaml

ORIGIN = "config.kubernetes.io/origin"
NO_RESTRICTIONS = ("--load-restrictor", "LoadRestrictionsNone")
#: Joint builds of at most this many folders (one cluster's) run as short runs (gpuspec.tools.goenv).
SHORT_RUN = 4


def _strip_origin(obj: dict[str, Any]) -> tuple[dict[str, Any], str | None, bool]:
    """The object without its origin annotation (a copy; parsed objects may be shared), the source path
    the annotation named (None when absent), and whether a generator made the object."""
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if not isinstance(metadata, dict) or not isinstance(annotations, dict) or ORIGIN not in annotations:
        return obj, None, False
    rest = {k: v for k, v in annotations.items() if k != ORIGIN}
    new_metadata = {k: v for k, v in metadata.items() if k != "annotations"}
    if rest:
        new_metadata["annotations"] = rest
    text = annotations[ORIGIN]
    stripped = {**obj, "metadata": new_metadata}
    try:
        origin = load_yaml(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        return stripped, None, False
    if not isinstance(origin, dict):
        return stripped, None, False
    found = origin.get("path") or origin.get("configuredIn")
    return stripped, found if isinstance(found, str) else None, not origin.get("path")


def build_together(folders: Sequence[Path], kustomize: KustomizeCommand,
                   extra_args: Sequence[str] = NO_RESTRICTIONS) -> dict[Path, KustomizeResult] | None:
    """Each folder's build result from one joint build, or None when the joint build failed or an object
    cannot be traced back to exactly one folder (then build them one by one).

    Only folders that :func:`can_build_together` accepts are built together: plain ones, and with
    :data:`NO_RESTRICTIONS` (GitOps folders) also ones that generate ConfigMaps/Secrets, as long as no other
    folder's objects name a generated object (:func:`crossed_references`).
    """
    if len(folders) < 2:
        return None
    allowed = GENERATOR_KEYS if tuple(extra_args) == NO_RESTRICTIONS else PLAIN_KEYS
    if not can_build_together(folders, allowed):
        return None
    resolved = [f.resolve() for f in folders]
    with tempfile.TemporaryDirectory(prefix="gpuspec-kustomize-") as tmp:
        root = Path(tmp).resolve()
        lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization",
                 "buildMetadata: [originAnnotations]", "resources:"]
        lines += [f"- {json.dumps(os.path.relpath(f, root))}" for f in resolved]
        (root / "kustomization.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        joint = kustomize_build(root, kustomize=kustomize, extra_args=extra_args, short_run=len(folders) <= SHORT_RUN)
    if not joint.ok:
        return None
    parts: dict[int, list[Manifest]] = {i: [] for i in range(len(resolved))}
    generated: dict[int, set[str]] = {i: set() for i in range(len(resolved))}
    owner_of = owners(resolved)
    for manifest in joint.manifests:
        obj, source, made = _strip_origin(manifest.obj)
        if source is None:
            return None
        # The deepest folder claims the file, so a folder nested in another claims its own files.
        owner = owner_of(Path(os.path.normpath(root / source)))
        if owner is None:
            return None
        parts[owner].append(Manifest(obj, manifest.source))
        if made and manifest.name:
            generated[owner].add(manifest.name)
    if crossed_references(parts, generated):
        return None
    return {
        folder: KustomizeResult(ok=True, manifests=tuple(parts[i]), stdout="", stderr="", error="",
                                duration=joint.duration, argv=(*kustomize.argv, *extra_args, str(folder)))
        for i, folder in enumerate(folders)
    }
