"""Resolve line, column and spec path of findings, reading only the files that have findings."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import yaml

from gpuspec.findings import DocPath, Finding
from gpuspec.loader.yamlread import YamlProblem, compose, read_text


def _name_of(node: yaml.Node) -> str | None:
    """The scalar value of a mapping node's `name` key, if it has one."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "name" and isinstance(value, yaml.ScalarNode):
                return str(value.value)
    return None


def _metadata_name(root: yaml.Node) -> str | None:
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "metadata":
                return _name_of(value)
    return None


def spec_prefix(file: str, root: yaml.Node | None) -> str:
    """The spec-path prefix of a file: ``clusters[<name>]`` for cluster files, ``policies[<pack>]`` for policy
    packs, nothing for generated files under rendered/ (their path is the key path), else ``fleet``."""
    path = Path(file)
    if "rendered" in path.parts:
        return ""
    if path.parent.name == "clusters":
        name = (_metadata_name(root) if root is not None else None) or path.stem
        return f"clusters[{name}]"
    if path.parent.name == "policies" or path.parent.parent.name == "policies":
        return f"policies[{path.stem}]"
    return "fleet"


def _walk(root: yaml.Node, path: DocPath, at_key: bool) -> tuple[yaml.Node, str]:
    """Follow ``path`` as far as the document allows; return the node reached and its spec-path suffix."""
    node = root
    suffix = ""
    for index, part in enumerate(path):
        last = index == len(path) - 1
        if isinstance(node, yaml.MappingNode):
            found = None
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                    found = (key, value)
                    break
            if found is None:
                return node, suffix
            suffix += f".{part}"
            node = found[0] if (last and at_key) else found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            item = node.value[part]
            suffix += f"[{_name_of(item) or part}]"
            node = item
        else:
            return node, suffix
    return node, suffix


def locate_in_document(file: str, root: yaml.Node | None, finding: Finding) -> Finding:
    """Fill in line, column and spec path of one finding from the composed document of its file."""
    prefix = spec_prefix(file, root)
    if root is None:
        return finding.located(finding.line or 1, finding.column or 1, prefix)
    node, suffix = _walk(root, finding.path, finding.at_key)
    mark = node.start_mark
    line, column = (finding.line, finding.column) if finding.line else (mark.line + 1, mark.column + 1)
    return finding.located(line or 1, column or 1, (prefix + suffix).lstrip(".") or prefix)


def locate_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Return the findings with line, column and spec path filled in, reading each affected file once."""
    by_file: dict[str | None, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.file].append(finding)
    located: list[Finding] = []
    for file, group in by_file.items():
        if file is None:
            located.extend(group)
            continue
        root: yaml.Node | None
        try:
            root = compose(read_text(Path(file), file), file)
        except (YamlProblem, OSError):
            root = None
        located.extend(locate_in_document(file, root, f) for f in group)
    return sorted(located, key=Finding.sort_key)
