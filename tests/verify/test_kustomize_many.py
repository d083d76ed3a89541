"""Several GitOps folders built in one kubectl run give each folder exactly what building it alone gives."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from gpuspec.tools import KustomizeCommand
from gpuspec.verify.kustomize import KustomizeResult, kustomize_build
from gpuspec.verify.kustomize_many import NO_RESTRICTIONS, build_together
from gpuspec.verify.kustomize_plain import can_build_together, plain_files
from gpuspec.verify.manifests import SHARED_CHUNK_BYTES, parse_manifests


def _folder(directory: Path, name: str, *, annotated: bool = False, nested: bool = False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    annotations = "  annotations:\n    team: gpu\n" if annotated else ""
    (directory / "app.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{annotations}data:\n  a: \"1\"\n")
    (directory / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - app.yaml\n"
        + (f"configMapGenerator:\n  - name: {name}-values\n    namespace: flux-system\n    literals: [x=1]\n"
           if nested else ""))
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


def test_gitops_folders_that_rename_or_name_generated_objects_are_built_alone(
        tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    one = _folder(tmp_path / "one", "one")
    prefixed = _folder(tmp_path / "two", "two")
    text = (prefixed / "kustomization.yaml").read_text()
    (prefixed / "kustomization.yaml").write_text(text + "namePrefix: p-\n")
    assert build_together([one, prefixed], kustomize_cmd) is None  # a prefix renames: references may move
    # Folder b's Pod names the ConfigMap folder a generates: built together it would read cfg-<hash>.
    generator = _plain(tmp_path / "a", extra="configMapGenerator:\n  - name: cfg\n    literals: [x=1]\n")
    user = _plain(tmp_path / "b", "pod.yaml")
    (user / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [{name: c, image: busybox}]\n"
        "  volumes: [{name: v, configMap: {name: cfg}}]\n")
    assert build_together([generator, user], kustomize_cmd) is None
    alone = kustomize_build(user, kustomize=kustomize_cmd, extra_args=NO_RESTRICTIONS)
    assert alone.manifests[0].obj["spec"]["volumes"][0]["configMap"]["name"] == "cfg"
    other = _folder(tmp_path / "c", "c")
    assert build_together([generator, other], kustomize_cmd) is not None  # nobody names the generated map


def test_joint_build_that_fails_asks_for_separate_builds(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    a = _folder(tmp_path / "a", "same")
    b = _folder(tmp_path / "b", "same")  # the same object twice: kustomize refuses the joint build
    assert build_together([a, b], kustomize_cmd) is None
    assert build_together([a], kustomize_cmd) is None


def test_repeated_documents_are_parsed_once() -> None:
    big = "kind: CustomResourceDefinition\nspec:\n" + "".join(
        f"  field{i}: value{i}\n" for i in range(SHARED_CHUNK_BYTES // 16))
    small = f"kind: ConfigMap\nmetadata:\n  name: x-{uuid.uuid4().hex}\n"  # new to this process
    first = parse_manifests(f"---\n{big}---\n{small}")
    second = parse_manifests(f"---\n{big}---\n{small}")
    third = parse_manifests(f"---\n{big}---\n{small}")
    assert first[0].obj is second[0].obj and first[0].obj == second[0].obj
    # a small document is remembered once it comes a second time
    assert first[1].obj is not second[1].obj and first[1].obj == second[1].obj
    assert third[1].obj is second[1].obj


def _plain(directory: Path, *resources: str, extra: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    listed = "".join(f"  - {r}\n" for r in resources)
    (directory / "kustomization.yaml").write_text(
        f"# generated\n---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n{extra}"
        f"resources:\n{listed}")
    return directory


def _objects_file(path: Path, *docs: tuple[str, str]) -> None:
    path.write_text("".join(f"---\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n" for kind, name in docs))


def test_overlay_and_acceptance_build_together_as_alone(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    overlay = _plain(tmp_path / "c1", "ns.yaml")
    _objects_file(overlay / "ns.yaml", ("Namespace", "gpu-operator"), ("ConfigMap", "b"), ("ServiceAccount", "a"))
    acceptance = _plain(overlay / "acceptance", "jobs.yaml")
    _objects_file(acceptance / "jobs.yaml", ("ConfigMap", "c"), ("Namespace", "gpu-acceptance"))
    joint = build_together([overlay, acceptance], kustomize_cmd, ())
    assert joint is not None
    for folder in (overlay, acceptance):
        alone = kustomize_build(folder, kustomize=kustomize_cmd)
        assert [m.obj for m in joint[folder].manifests] == [m.obj for m in alone.manifests]  # same order too
    assert [m.name for m in joint[acceptance].manifests] == ["gpu-acceptance", "c"]


def test_overlays_that_are_not_plain_are_built_alone(tmp_path: Path, kustomize_cmd: KustomizeCommand) -> None:
    # A generated ConfigMap gets its hash suffix at the top of a build, and references to it are fixed
    # across every object of the build: built together, the other folder's Pod would name cfg-<hash>.
    generator = _plain(tmp_path / "a", extra="configMapGenerator:\n  - name: cfg\n    literals: [x=1]\n")
    user = _plain(tmp_path / "b", "pod.yaml")
    (user / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [{name: c, image: busybox}]\n"
        "  volumes: [{name: v, configMap: {name: cfg}}]\n")
    alone = kustomize_build(user, kustomize=kustomize_cmd)
    assert alone.manifests[0].obj["spec"]["volumes"][0]["configMap"]["name"] == "cfg"
    assert build_together([generator, user], kustomize_cmd, ()) is None


def test_plain_trees_and_file_owners(tmp_path: Path) -> None:
    base = _plain(tmp_path / "base", "cm.yaml")
    _objects_file(base / "cm.yaml", ("ConfigMap", "x"))
    overlay = _plain(tmp_path / "overlay", "../base", "own.yaml")
    _objects_file(overlay / "own.yaml", ("ConfigMap", "y"))
    assert plain_files(overlay) == {(base / "cm.yaml").resolve(), (overlay / "own.yaml").resolve()}
    assert can_build_together([base, overlay]) is False  # overlay lists a file of base
    assert can_build_together([base, _plain(tmp_path / "other", "../base/cm.yaml")]) is False
    inner = _plain(overlay / "acceptance", "job.yaml")
    _objects_file(inner / "job.yaml", ("ConfigMap", "z"))
    solo = _plain(tmp_path / "solo", "s.yaml")
    _objects_file(solo / "s.yaml", ("ConfigMap", "s"))
    assert can_build_together([solo, inner])
    _plain(overlay, "own.yaml", "acceptance/job.yaml")  # the overlay lists a file of its acceptance folder
    assert can_build_together([overlay, inner]) is False
    for extra in ("sortOptions:\n  order: fifo\n", "buildMetadata: [originAnnotations]\n", "namePrefix: x-\n",
                  "kind: Component\n"):
        assert plain_files(_plain(tmp_path / "odd", "job.yaml", extra=extra)) is None, extra
    assert plain_files(_plain(tmp_path / "remote", "https://github.com/x/y")) is None
    assert plain_files(_plain(tmp_path / "missing", "nothing.yaml")) is None
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "kustomization.yml").write_text("resources: []\n")
    assert plain_files(_plain(tmp_path / "two")) is None  # two kustomization files: kustomize refuses them


def test_owner_is_the_deepest_folder_holding_the_path() -> None:
    from gpuspec.verify.kustomize_plain import owners

    owner = owners([Path("/r/c1"), Path("/r/c1/acceptance"), Path("/r/c2"), Path("/r/c1")])
    assert owner(Path("/r/c1/rbac.yaml")) == 0
    assert owner(Path("/r/c1/acceptance/jobs.yaml")) == 1
    assert owner(Path("/r/c1/acceptance")) == 1
    assert owner(Path("/r/c2/x/y.yaml")) == 2
    assert owner(Path("/r/c10/rbac.yaml")) is None  # a name prefix is not a parent folder
    assert owner(Path("/elsewhere.yaml")) is None
