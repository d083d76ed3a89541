"""Decide whether kustomizations can share one ``kubectl kustomize`` run with default load restrictions.

A cluster's overlay and its acceptance folder are two kustomizations built with kustomize's default
load restrictions, as Argo CD builds them.  Built as resources of one generated root, each is still
loaded by its own loader (rooted at its own folder, with the same restrictions), but kustomize does a
few things only at the top of a build: hash suffixes of generated ConfigMaps/Secrets, fixing back
references to renamed objects (across *all* accumulated objects), variables, ``sortOptions`` and
``buildMetadata``.  A *plain* tree uses none of them: every kustomization it reaches has only
``apiVersion``, ``kind`` (Kustomization), ``metadata`` and ``resources`` naming local files or folders.
For plain trees the top of the build only collects and sorts objects, so each folder's objects in a
joint build are exactly those of its own build, in the same order.

GitOps folders (built without load restrictions) may also generate ConfigMaps/Secrets
(:data:`GENERATOR_KEYS`, as the Flux release folders do): the top of the joint build then only adds the
same content hash to the generated names and fixes references to them, which changes another folder only
if that folder names a generated object; :func:`crossed_references` checks the joint output for that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from gpuspec.verify.manifests import Manifest, load_yaml_all

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: The only keys a plain kustomization may have.
PLAIN_KEYS = frozenset({"apiVersion", "kind", "metadata", "resources"})
#: Keys of a kustomization that may also generate ConfigMaps/Secrets (as the Flux release folders do): the
#: only objects it renames are the generated ones (hash suffix), and :func:`crossed_references` finds
#: any reference to them that the top of a joint build could have rewritten in another folder.
GENERATOR_KEYS = PLAIN_KEYS | {"configMapGenerator", "secretGenerator", "generatorOptions", "configurations"}
#: Bound on the kustomizations one tree may reach (a generated overlay reaches one).
MAX_KUSTOMIZATIONS = 64


def plain_files(folder: Path, allowed: frozenset[str] = PLAIN_KEYS) -> set[Path] | None:
    """Every resource file the kustomization tree rooted at ``folder`` lists (resolved paths), or None when
    a kustomization in it has a key outside ``allowed`` (default: the tree is not plain, see the module
    docstring), reaches a remote source, or cannot be read."""
    files: set[Path] = set()
    seen: set[Path] = set()
    todo = [folder.resolve()]
    while todo:
        directory = todo.pop()
        if directory in seen:
            continue
        seen.add(directory)
        if len(seen) > MAX_KUSTOMIZATIONS:
            return None
        data = _kustomization(directory, allowed)
        if data is None:
            return None
        resources = data.get("resources")
        for entry in resources if isinstance(resources, list) else []:
            if not isinstance(entry, str) or "://" in entry or entry.startswith(("github.com/", "git@")):
                return None
            try:
                target = (directory / entry).resolve()
                is_dir, is_file = target.is_dir(), target.is_file()
            except (OSError, RuntimeError):  # a link loop (RuntimeError before 3.13), a name too long: kubectl says
                return None
            if is_dir:
                todo.append(target)
            elif is_file:
                files.add(target)
            else:
                return None
    return files


def owners(folders: Sequence[Path]) -> Callable[[Path], int | None]:
    """A lookup: index of the deepest of ``folders`` (resolved paths; the first of equal ones) that contains
    a path, None when none does."""
    index: dict[Path, int] = {}
    for number, folder in enumerate(folders):
        index.setdefault(folder, number)

    def owner(path: Path) -> int | None:
        for candidate in (path, *path.parents):
            found = index.get(candidate)
            if found is not None:
                return found
        return None
    return owner


def can_build_together(folders: Sequence[Path], allowed: frozenset[str] = PLAIN_KEYS) -> bool:
    """True when every folder's tree has only ``allowed`` keys and every file it lists lies in that folder
    rather than in another of ``folders`` (by :func:`owners`), so an object's source file names its
    folder."""
    resolved = [f.resolve() for f in folders]
    owner = owners(resolved)
    for index, folder in enumerate(resolved):
        files = plain_files(folder, allowed)
        if files is None or any(owner(path) != index for path in files):
            return False
    return True


def crossed_references(parts: Mapping[int, Sequence[Manifest]], generated: Mapping[int, set[str]]) -> bool:
    """True when an object of one folder holds, anywhere, the name of an object another folder generated.

    At the top of a joint build kustomize fixes references to generated (hash-suffixed) objects across all
    objects, so a folder that names another folder's generated ConfigMap would read ``name-<hash>`` where
    its own build leaves ``name``; such a folder then names the generated object's final name, which this
    finds (it may also find an unchanged name that merely looks the same: then folders are built alone).
    """
    for owner, manifests in parts.items():
        foreign = set().union(*(names for other, names in generated.items() if other != owner))
        if foreign and any(value in foreign for m in manifests for value in _strings(m.obj)):
            return True
    return False


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _kustomization(directory: Path, allowed: frozenset[str]) -> dict[str, object] | None:
    """The directory's one kustomization when its keys are all ``allowed``, else None."""
    found = [directory / name for name in KUSTOMIZATION_NAMES if (directory / name).is_file()]
    if len(found) != 1:
        return None
    try:
        documents = [d for d in load_yaml_all(found[0].read_text(encoding="utf-8")) if d is not None]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        return None
    data: dict[str, object] = documents[0]
    if not set(data) <= allowed or data.get("kind", "Kustomization") != "Kustomization":
        return None
    resources = data.get("resources")
    if resources is not None and not isinstance(resources, list):
        return None
    return data

