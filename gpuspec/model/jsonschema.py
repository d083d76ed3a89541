"""JSON Schema (draft 2020-12) of the spec files, generated from the models."""

from __future__ import annotations

from typing import Any

from gpuspec.model.cluster import Cluster
from gpuspec.model.settings import FleetSettings

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def spec_schema(kind: str = "all") -> dict[str, Any]:
    """The JSON Schema of cluster files (``cluster``), fleet.yaml (``fleet``) or either (``all``)."""
    if kind == "cluster":
        schema = Cluster.model_json_schema(by_alias=True, mode="validation")
    elif kind == "fleet":
        schema = FleetSettings.model_json_schema(by_alias=True, mode="validation")
    else:
        cluster = Cluster.model_json_schema(by_alias=True, mode="validation", ref_template="#/$defs/{model}")
        fleet = FleetSettings.model_json_schema(by_alias=True, mode="validation", ref_template="#/$defs/{model}")
        defs = {**cluster.pop("$defs", {}), **fleet.pop("$defs", {})}
        defs["Cluster"] = cluster
        defs["FleetSettings"] = fleet
        schema = {
            "title": "gpuspec fleet spec file",
            "description": "fleet/fleet.yaml (kind Fleet) or fleet/clusters/<name>.yaml (kind Cluster).",
            "oneOf": [{"$ref": "#/$defs/Cluster"}, {"$ref": "#/$defs/FleetSettings"}],
            "$defs": defs,
        }
    schema["$schema"] = DIALECT
    schema["$id"] = f"https://gpuspec.io/schema/v1alpha1/{kind}.json"
    return schema
