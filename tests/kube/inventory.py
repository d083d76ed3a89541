"""The string fields of everything gpuspec renders for the example fleet and the render tests' fixture fleets."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuspec.kube.consumers import field_key, string_fields
from gpuspec.render.filetree import YamlFile
from tests.render.fleets import cluster, compile_dir, coverage_clusters, example_settings, pool, write_fleet

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "render" / "golden"


@dataclass(frozen=True)
class Field:
    """One string value of one rendered document."""

    key: str
    value: str
    api_version: str
    kind: str
    where: str


def doc_name(doc: dict[str, Any], file: str) -> str:
    """The inventory's name of a document: its kind for Kubernetes objects (``kustomization.yaml`` for kustomize's
    own file), else the file's name."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if isinstance(api_version, str) and isinstance(kind, str):
        return "kustomization.yaml" if api_version.startswith("kustomize.config.k8s.io") else kind
    return Path(file).name


def fields_of(doc: Any, file: str) -> Iterator[Field]:
    """The string fields of one document of ``file``."""
    if not isinstance(doc, dict):
        return
    name = doc_name(doc, file)
    for path, value in string_fields(doc):
        yield Field(field_key(name, path), value, str(doc.get("apiVersion", "")), str(doc.get("kind", "")), file)


def _openshift(name: str, **extra: Any) -> dict[str, Any]:
    return cluster(
        name,
        kubernetes={"version": "1.32", "distribution": "openshift", "openshiftVersion": "4.19", "runtime": "cri-o"},
        operator={"version": "v26.7.0", "namespace": "nvidia-gpu-operator"},
        pools=[pool("a100", product="A100-SXM4-80GB", os={"distribution": "rhcos", "version": "4.19"},
                    driver={"source": "operator", "branch": "580"})], **extra)


def fixture_clusters() -> list[dict[str, Any]]:
    """Clusters beyond the golden ones: OpenShift (online and mirrored, both GitOps tools), autoscaled pools."""
    # Overrides a cluster may set on values the chart's consumers parse (GS136 checks them as those consumers do).
    overrides = [{"path": "dcgmExporter.serviceMonitor.interval", "value": "30s", "reason": "test"},
                 {"path": "dcgmExporter.serviceMonitor.scrapeTimeout", "value": "20s", "reason": "test"},
                 {"path": "operator.imagePullPolicy", "value": "Always", "reason": "test"}]
    auto = cluster("auto", overrides=overrides, pools=[
        pool("ca", autoscaling={"autoscaler": "cluster-autoscaler", "min": 1, "max": 4, "cloud": "aws"}),
        pool("karp", "A100-SXM4-80GB", mig={"strategy": "mixed", "layout": "all-1g.10gb"},
             autoscaling={"autoscaler": "karpenter", "min": 1, "max": 4, "cloud": "aws", "nodeOverlay": True}),
        pool("az", "A100-SXM4-80GB", mig={"strategy": "mixed", "layout": "all-1g.10gb"},
             taints=[{"key": "acme.example/gpu", "value": "a100", "effect": "NoSchedule"}],
             autoscaling={"autoscaler": "cluster-autoscaler", "min": 1, "max": 4, "cloud": "azure"}),
    ])
    return [_openshift("ocp"), _openshift("ocp-flux", gitops={"tool": "flux"}),
            _openshift("ocp-airgap", mirror="dc-north"), auto]


def plan_fields(tmp: Path, clusters: list[dict[str, Any]]) -> Iterator[Field]:
    """The fields of what ``clusters`` (with the example fleet.yaml) render to."""
    settings = example_settings()
    for mirror in settings.get("mirrors", []):
        mirror.setdefault("catalogSources", {"certified-operators": "certified-operators-mirror",
                                             "redhat-operators": "redhat-operators-mirror"})
    plan = compile_dir(write_fleet(tmp, clusters, settings=settings))
    for path, (_, spec) in sorted(plan.files().items()):
        if isinstance(spec, YamlFile):
            for doc in spec.documents:
                yield from fields_of(doc, path)


def tree_fields(root: Path) -> Iterator[Field]:
    """The fields of every YAML file below ``root`` (a rendered tree on disk)."""
    for file in sorted(root.rglob("*.yaml")):
        for doc in yaml.safe_load_all(file.read_text(encoding="utf-8")):
            yield from fields_of(doc, str(file.relative_to(REPO)))


def all_fields(tmp: Path) -> list[Field]:
    """Every string field of the example fleet's rendered/, the golden trees and the extra fixture clusters."""
    out = list(tree_fields(REPO / "rendered"))
    out += tree_fields(GOLDEN)
    out += plan_fields(tmp / "extra", fixture_clusters())
    out += plan_fields(tmp / "coverage", coverage_clusters("v26.7.0"))
    return out
