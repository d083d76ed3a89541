"""Operator settings of a running cluster in the spec's terms, for `gpuspec import`: the fields of the fleet's mirror
that carry driver settings, ``operator.configMaps``, and cluster ``overrides`` for what no spec field expresses."""

from __future__ import annotations

from collections.abc import Sequence

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gpuspec.audit.draft_base import TODO, cmap, from_cluster
from gpuspec.audit.mirror_draft import MIRROR_SETTINGS
from gpuspec.audit.roundtrip import Carried
from gpuspec.audit.running import RunningState
from gpuspec.model.cluster_specs import DEVICE_PLUGIN_CONFIGMAP, DEVICE_PLUGIN_DEFAULT_KEY, MIG_CONFIGMAP


def mirror_settings(state: RunningState) -> dict[str, str | None]:
    """The mirror fields (``packageRepoConfigMap``, ``caConfigMap``) of the driver settings the cluster runs."""
    out: dict[str, str | None] = {}
    for key, path in MIRROR_SETTINGS.items():
        read = state.settings.get(path)
        out[key] = read.value if read is not None and isinstance(read.value, str) and read.value else None
    return out


def config_maps(state: RunningState, sharing: bool, custom_mig: bool) -> CommentedMap:
    """``operator.configMaps``: the device-plugin and MIG ConfigMap names the cluster runs, where they are not
    gpuspec's own (a sharing pool, a custom MIG layout)."""
    out = CommentedMap()
    name = state.settings.get("devicePlugin.config.name")
    if sharing and name is not None and isinstance(name.value, str) and name.value:
        if name.value != DEVICE_PLUGIN_CONFIGMAP:
            out["devicePlugin"] = name.value
            from_cluster(out, "devicePlugin", name.origin)
        default = state.settings.get("devicePlugin.config.default")
        value = default.value if default is not None and isinstance(default.value, str) else ""
        if value != DEVICE_PLUGIN_DEFAULT_KEY:
            out["devicePluginDefault"] = value
            from_cluster(out, "devicePluginDefault", default.origin if default is not None else
                  "no devicePlugin.config.default: nodes without a config label take none")
    mig = state.settings.get("migManager.config.name")
    if custom_mig and mig is not None and isinstance(mig.value, str) and mig.value and mig.value != MIG_CONFIGMAP:
        out["mig"] = mig.value
        from_cluster(out, "mig", mig.origin)
    return out


def add_overrides(doc: CommentedMap, carried: Sequence[Carried]) -> None:
    """Append to the draft's cluster ``overrides`` the running settings no spec field expresses (``carried``, from
    :func:`gpuspec.audit.roundtrip.carriable`), each with its reason still to be written."""
    if not carried:
        return
    overrides = doc.get("overrides")
    if not isinstance(overrides, CommentedSeq):
        overrides = doc["overrides"] = CommentedSeq()
    for setting in carried:
        entry = cmap(("path", setting.path), ("value", setting.value),
                     ("reason", f"{TODO}: the cluster runs it so ({setting.origin}); say why"))
        from_cluster(entry, "value", setting.origin)
        overrides.append(entry)
