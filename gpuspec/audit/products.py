"""Map GPU Feature Discovery product strings (`nvidia.com/gpu.product`) to gpuspec product ids."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

_PREFIXES = ("NVIDIA-", "TESLA-")


@dataclass(frozen=True, slots=True)
class ProductMatch:
    """What a GFD product string means: the spec product id, ids it may also be written as, and how sure we are."""

    gfd: str
    product_id: str
    also: tuple[str, ...] = ()
    verified: bool = False
    note: str | None = None

    def accepts(self, spec_product: str) -> bool:
        """True when ``spec_product`` (as written in a pool) names this GPU."""
        wanted = spec_product.upper()
        return wanted == self.product_id.upper() or wanted in (a.upper() for a in self.also)


def base_product(value: str) -> str:
    """The GFD product string without the `-MIG-<profile>` (single strategy) and `-SHARED` (sharing) suffixes."""
    text = value.strip()
    if text.upper().endswith("-SHARED"):
        text = text[: -len("-SHARED")]
    index = text.upper().find("-MIG-")
    if index > 0:
        text = text[:index]
    return text


def _key(value: str) -> str:
    text = base_product(value).upper()
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


@lru_cache(maxsize=1)
def _table() -> dict[str, ProductMatch]:
    data: dict[str, Any] = yaml.safe_load(
        resources.files("gpuspec.audit").joinpath("data/gfd_products.yaml").read_text(encoding="utf-8")
    )
    table: dict[str, ProductMatch] = {}
    for gfd, entry in data["products"].items():
        table[_key(str(gfd))] = ProductMatch(
            gfd=str(gfd),
            product_id=str(entry["id"]),
            also=tuple(str(a) for a in entry.get("also", ())),
            verified=bool(entry.get("verified", False)),
            note=entry.get("note"),
        )
    for match in list(table.values()):  # the spec id itself, as old drivers print it without a prefix
        table.setdefault(_key(match.product_id), match)
    return table


def lookup_product(gfd_value: str) -> ProductMatch | None:
    """The spec product behind a GFD `nvidia.com/gpu.product` value, or None when the string is not in the map."""
    return _table().get(_key(gfd_value))
