"""Splitting helm/kustomize output into objects."""

from __future__ import annotations

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
