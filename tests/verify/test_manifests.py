"""Splitting helm/kustomize output into objects."""

from __future__ import annotations

import random

import pytest

from gpuspec.verify.manifests import ManifestParseError, parse_manifests


def test_sources_documents_and_lists() -> None:
    text = """---
# Source: chart/crds/crd.yaml
# a comment-only document: its Source applies to the next one
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
# Source: chart/templates/b.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: ns}
data: {when: 2024-01-01, on: "on"}
---
---
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Namespace, metadata: {name: c}}
"""
    manifests = parse_manifests(text)
    assert [(m.ref(), m.source) for m in manifests] == [
        ("ConfigMap/a", "chart/crds/crd.yaml"),
        ("ConfigMap/b", "chart/templates/b.yaml"),
        ("Namespace/c", "chart/templates/b.yaml"),
    ]
    assert manifests[1].namespace == "ns" and manifests[0].namespace is None
    assert manifests[1].obj["data"]["when"] == "2024-01-01"  # timestamps stay strings, like Kubernetes


def test_invalid_yaml_and_non_mapping() -> None:
    with pytest.raises(ManifestParseError, match="invalid YAML"):
        parse_manifests("# Source: chart/templates/x.yaml\nkind: [unclosed\n")
    with pytest.raises(ManifestParseError, match="expected a mapping"):
        parse_manifests("---\n- a\n- b\n")


def test_empty_output() -> None:
    assert parse_manifests("") == []
    assert parse_manifests("---\n---\n") == []


def test_document_split_and_source_lines_match_the_regexes() -> None:
    from gpuspec.verify import manifests

    pieces = ["---", "--- # note", "----", "---x", " ---", "--- \t", "a: 1", "# Source: t.yaml", "# Source: ",
              "#  Source: no", "x # Source: no", "# Source: s.yaml  ", "", "\t", "...", "--- |", "-- -"]
    rng = random.Random(17)
    for _ in range(3000):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        if rng.random() < 0.3:
            text += "\n"
        assert manifests.split_documents(text) == manifests._SEPARATOR.split(text), text
        found = manifests._SOURCE.search(text)
        assert manifests._source_of(text) == (found.group(1) if found else None), text
