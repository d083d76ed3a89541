"""Several GitOps folders built in one kubectl run give each folder exactly what building it alone gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuspec.tools import KustomizeCommand
from gpuspec.verify.kustomize import KustomizeResult, kustomize_build
from gpuspec.verify.kustomize_many import NO_RESTRICTIONS, build_together
from gpuspec.verify.manifests import SHARED_CHUNK_BYTES, parse_manifests


def _folder(directory: Path, name: str, *, annotated: bool = False, nested: bool = False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    annotations = "  annotations:\n    team: gpu\n" if annotated else ""
    (directory / "app.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{annotations}data:\n  a: \"1\"\n")
    (directory / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: flux-system\n"
        f"namePrefix: {name}-\nresources:\n  - app.yaml\n"
        + ("configMapGenerator:\n  - name: values\n    literals: [x=1]\n" if nested else ""))
    return directory


def _objects(results: dict[Path, KustomizeResult]) -> dict[Path, list[dict[str, Any]]]:
    return {k: sorted((m.obj for m in v.manifests), key=repr) for k, v in results.items()}


def test_joint_build_equals_separate_builds(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    one = _folder(tmp_path / "gitops" / "one", "one", annotated=True)
    two = _folder(tmp_path / "gitops" / "two", "two")
    inner = _folder(tmp_path / "gitops" / "two" / "release", "inner", nested=True)
    folders = [one, two, inner]
    joint = build_together(folders, kustomize_cmd)
    assert joint is not None and list(joint) == folders
    alone = {f: kustomize_build(f, kustomize=kustomize_cmd, extra_args=NO_RESTRICTIONS) for f in folders}
    assert _objects(joint) == _objects(alone)
    assert joint[one].manifests[0].obj["metadata"]["annotations"] == {"team": "gpu"}
    assert "annotations" not in joint[two].manifests[0].obj["metadata"]
    assert len(joint[inner].manifests) == 2  # the generated ConfigMap belongs to the folder that generates it


def test_joint_build_that_fails_asks_for_separate_builds(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    a = _folder(tmp_path / "a", "same")
    b = _folder(tmp_path / "b", "same")  # the same object twice: kustomize refuses the joint build
    assert build_together([a, b], kustomize_cmd) is None
    assert build_together([a], kustomize_cmd) is None


def test_large_documents_are_parsed_once() -> None:
    big = "kind: CustomResourceDefinition\nspec:\n" + "".join(
        f"  field{i}: value{i}\n" for i in range(SHARED_CHUNK_BYTES // 16))
    small = "kind: ConfigMap\nmetadata:\n  name: x\n"
    first = parse_manifests(f"---\n{big}---\n{small}")
    second = parse_manifests(f"---\n{big}---\n{small}")
    assert first[0].obj is second[0].obj and first[0].obj == second[0].obj
    assert first[1].obj is not second[1].obj and first[1].obj == second[1].obj
