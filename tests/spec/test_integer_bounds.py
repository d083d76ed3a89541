"""Every integer of the fleet spec has an upper bound, so no number a user (or a hostile pull request) writes
can make arithmetic on it fail or render a value Kubernetes refuses (found by the fuzz job: a 3,000-digit
drain timeout overflowed the duration estimate)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing
from collections.abc import Iterator
from pathlib import Path

import annotated_types
import pytest
from pydantic import BaseModel

import gpuspec.model

REPO = Path(__file__).resolve().parents[2]


def _spec_models() -> list[type[BaseModel]]:
    out: list[type[BaseModel]] = []
    for info in pkgutil.iter_modules(gpuspec.model.__path__):
        module = importlib.import_module(f"gpuspec.model.{info.name}")
        out += [cls for cls in vars(module).values() if inspect.isclass(cls) and issubclass(cls, BaseModel)
                and cls.__module__ == module.__name__]
    return out


def _unbounded_ints(annotation: object, metadata: list[object]) -> Iterator[str]:
    """The integer types inside ``annotation`` that no ``le``/``lt`` constraint bounds."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        inner: list[object] = []
        for item in extra:
            inner += list(getattr(item, "metadata", None) or [item])
        yield from _unbounded_ints(base, inner)
        return
    if annotation is int:
        if not any(isinstance(m, annotated_types.Le | annotated_types.Lt) for m in metadata):
            yield "int"
        return
    for arg in typing.get_args(annotation):
        # a constraint on a union (int | None) applies to its int
        yield from _unbounded_ints(arg, metadata if typing.get_origin(annotation) in (typing.Union,) or
                                   type(annotation).__name__ == "UnionType" else [])


def test_every_integer_field_of_the_spec_has_an_upper_bound() -> None:
    missing = [f"{model.__name__}.{name}" for model in _spec_models() for name, field in model.model_fields.items()
               if any(_unbounded_ints(field.annotation, list(field.metadata)))]
    assert not missing, missing


@pytest.mark.parametrize("number", ["0x" + "f" * 3000, "0x" + "f" * 4000, "0o" + "7" * 6000, "9" * 400,
                                    '"' + "9" * 400 + '"', "9223372036854775808"])
def test_a_huge_number_is_a_schema_error_at_its_line(tmp_path: Path, number: str) -> None:
    import shutil

    from gpuspec.pipeline.validate import validate_fleet

    shutil.copytree(REPO / "fleet", tmp_path / "fleet")
    east = tmp_path / "fleet" / "clusters" / "train-east.yaml"
    text = east.read_text()
    assert "    timeoutSeconds: 900\n" in text
    east.write_text(text.replace("    timeoutSeconds: 900\n", f"    timeoutSeconds: {number}\n", 1))
    result = validate_fleet(tmp_path / "fleet")
    assert not result.usable
    assert [(f.rule_id, f.path[-1]) for f in result.findings] == [("GS104", "timeoutSeconds")]
