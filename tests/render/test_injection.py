"""Spec values with YAML/template syntax never change the structure of the output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.loader.fleetload import load_fleet

from .fleets import GOLDEN_SETTINGS, cluster, render_dir, write_fleet

NASTY = [
    "a: b",
    "# not a comment",
    "line one\nline two: x\n- item",
    "{{ .Values.evil }}",
    "x\n---\nkind: Secret",
    "'quoted' \"double\" & *alias !!tag %percent @at `tick` |pipe >fold",
    "trailing space \n",
]


def _all_docs(out: dict[str, bytes]) -> dict[str, list[Any]]:
    return {p: list(yaml.safe_load_all(b)) for p, b in out.items() if not p.endswith(".txt")}


@pytest.mark.parametrize("value", NASTY)
def test_value_stays_one_scalar(value: str, tmp_path: Path) -> None:
    settings = dict(GOLDEN_SETTINGS)
    settings["git"] = {**settings["git"], "repoURL": f"https://git.example.com/{value}"}
    doc = cluster(
        "c",
        priorityClasses=[{"name": "p", "value": 10, "description": value}],
        mirror="dc-north",
        gitops={"tool": "flux"},
    )
    mirrors = [dict(settings["mirrors"][0])]
    mirrors[0]["proxy"] = {"https": value}
    settings["mirrors"] = mirrors
    out = render_dir(write_fleet(tmp_path, [doc], settings=settings))
    docs = _all_docs(out)
    classes = docs["clusters/c/priorityclasses.yaml"]
    assert len(classes) == 1 and classes[0]["description"] == value
    release = docs["gitops/flux/c/release/helmrelease.yaml"]
    assert len(release) == 1 and release[0]["kind"] == "HelmRelease"
    values = docs["clusters/c/gpu-operator.values.yaml"]
    assert len(values) == 1
    env = {e["name"]: e["value"] for e in values[0]["driver"]["env"]}
    assert env["HTTPS_PROXY"] == value
    assert all(d is None or isinstance(d, dict) for ds in docs.values() for d in ds)
    # the same structure (keys) as with a harmless value
    safe = render_dir(write_fleet(tmp_path / "safe", [doc], settings={**settings, "mirrors": [
        {**mirrors[0], "proxy": {"https": "plain"}}]}))
    assert sorted(out) == sorted(safe)
    for path in out:
        if path.endswith(".txt"):
            continue
        assert [_shape(d) for d in docs[path]] == [_shape(d) for d in yaml.safe_load_all(safe[path])], path


def _shape(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return type(node).__name__


def test_mirror_prefix_with_line_break_cannot_reach_images_txt(tmp_path: Path) -> None:
    settings = dict(GOLDEN_SETTINGS)
    mirror = dict(settings["mirrors"][0])
    mirror["registries"] = {"nvcr.io": "harbor.example/nvcr\nevil.example/x", "registry.k8s.io": "h/k8s"}
    settings["mirrors"] = [mirror]
    # Refused when the spec is read (a mirror prefix is a registry host and path), before render could use it.
    loaded = load_fleet(write_fleet(tmp_path, [cluster("c", mirror="dc-north")], settings=settings))
    assert loaded.fleet is None
    assert [(f.rule_id, f.path[:3]) for f in loaded.findings] == [("GS104", ("mirrors", 0, "registries"))]
