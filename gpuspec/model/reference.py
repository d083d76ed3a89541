"""The spec reference in Markdown, generated from the models so the docs cannot drift from the code."""

from __future__ import annotations

import types
import typing
from enum import Enum
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from gpuspec.model.cluster import Cluster
from gpuspec.model.settings import FleetSettings


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        return " or ".join(dict.fromkeys(names))
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[0])} → {_type_name(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return ""
    if field.default is PydanticUndefined or field.default is None:
        return ""
    value = field.default.value if isinstance(field.default, Enum) else field.default
    return f"`{value}`"


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """Every model reachable from ``root``, in first-seen order."""
    seen: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in seen:
                seen.append(annotation)
                for field in annotation.model_fields.values():
                    visit(field.annotation)
            return
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(root)
    return seen


def spec_reference() -> str:
    """Markdown tables of every key of fleet.yaml and cluster files."""
    out: list[str] = []
    done: set[type[BaseModel]] = set()
    for title, root in (("fleet/fleet.yaml", FleetSettings), ("fleet/clusters/NAME.yaml", Cluster)):
        out.append(f"#### `{title}`\n")
        for model in _models(root):
            if model in done:
                continue
            done.add(model)
            doc = (model.__doc__ or "").strip().splitlines()[0]
            out.append(f"##### {model.__name__}\n\n{doc}\n")
            out.append("| key | type | default | meaning |\n| --- | --- | --- | --- |")
            for name, field in model.model_fields.items():
                key = field.alias or name
                description = (field.description or "").replace("|", "\\|").replace("\n", " ")
                out.append(f"| `{key}` | {_type_name(field.annotation)} | {_default(field)} | {description} |")
            out.append("")
    return "\n".join(out).rstrip() + "\n"
