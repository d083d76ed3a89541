"""The checks verify runs on one cluster's helm output and overlay; each returns GS9xx findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuspec.catalogue import verify as ids
from gpuspec.catalogue import verify_apiserver as api_ids
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import DocPath, Finding
from gpuspec.kube.crdrules import FAILED, evaluate_rules
from gpuspec.kube.objects import LABEL, NAME, RESERVED, SELECTOR, check_object, kubelet_may_set
from gpuspec.matrix import component_query, query
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.resolve import effective_driver
from gpuspec.model.settings import Mirror
from gpuspec.verify.manifests import Manifest, load_yaml
from gpuspec.verify.object_images import ImageRef, ImageUse, get_path, object_images
from gpuspec.verify.rendered import RenderedFile
from gpuspec.verify.schemas import INVALID, NO_SCHEMA, CrdSet, SchemaError, json_path, validate_object
from gpuspec.verify.values_keys import ChartValues, unknown_values_keys

_MAX_OBJECTS_LISTED = 3
_MAX_ERROR_LINES = 8


@dataclass(frozen=True)
class Origin:
    """Where an object or value comes from: a rendered file (document ``doc_index``, object at ``prefix``).

    ``file`` None means a file that was not parsed (only its display path is known).  ``values_map``
    marks helm-templated objects: their problems point into the values file, at the values path the
    object's path maps to (ClusterPolicy ``spec.X`` ↔ values ``X``) when the values set it.
    """

    display: str
    file: RenderedFile | None = None
    doc_index: int = 0
    prefix: DocPath = ()
    values_map: bool = False
    note: str = ""


def make_finding(check: Entry, message: str, origin: Origin, path: DocPath = (), *,
                 hint: str | None = None, at_key: bool = False) -> Finding:
    """A finding of ``check`` at ``path`` inside the object of ``origin`` (line/column resolved for rendered files)."""
    full = (*origin.prefix, *path)
    line = column = None
    if origin.file is not None:
        line, column = origin.file.position(origin.doc_index, full, at_key=at_key)
    return check.finding(message, origin.display, full, hint, at_key=at_key, line=line, column=column)


def spec_finding(check: Entry, message: str, cluster: Cluster, path: DocPath = (), *,
                 hint: str | None = None) -> Finding:
    """A finding of ``check`` in the cluster's spec file."""
    return check.finding(message, cluster.source_file, path, hint)


def operator_path(cluster: Cluster) -> DocPath:
    """Document path of the cluster's operator release choice (its pin, else its channel)."""
    return ("operator", "version") if cluster.operator.version else ("operator", "channel")


def first_lines(text: str, limit: int = _MAX_ERROR_LINES) -> str:
    """The first ``limit`` lines of a tool message (the rest elided)."""
    lines = text.strip().splitlines()
    return "\n".join(lines[:limit]) + (f"\n… ({len(lines) - limit} more lines)" if len(lines) > limit else "")


def values_origin(values: RenderedFile | None, display: str, values_data: Mapping[str, Any],
                  path: DocPath) -> tuple[Origin, DocPath]:
    """The values file origin and the longest prefix of ``path`` that the values actually set."""
    found: list[str | int] = []
    node: Any = values_data
    for part in path:
        if isinstance(node, Mapping) and part in node:
            found.append(part)
            node = node[part]
        else:
            break
    return Origin(display, values, 0, ()), tuple(found)


# ------------------------------------------------------------------------------------- values keys


def check_values_keys(values: Mapping[str, Any], chart_values: ChartValues, origin: Origin,
                      chart_label: str) -> list[Finding]:
    """GS903: values keys the chart's values.yaml does not know."""
    findings = []
    for unknown in unknown_values_keys(values, chart_values, extra_known=component_query.template_only_values()):
        hint = f"did you mean {unknown.suggestion!r}?" if unknown.suggestion else None
        findings.append(make_finding(
            ids.UNKNOWN_VALUES_KEY, f"values key {unknown.dotted} is not a key of chart {chart_label}; "
            "helm ignores it", origin, unknown.path, hint=hint, at_key=True))
    return findings


# ------------------------------------------------------------------------------------- images


@dataclass
class LocatedImage:
    """An image use plus where a finding about it should point."""

    use: ImageUse
    origin: Origin
    repo_path: DocPath
    version_path: DocPath
    pull_secrets: frozenset[str] = frozenset()


@dataclass
class ImageExpectations:
    """What versions a cluster's images must have: per values component, per image name, and for drivers."""

    release_known: bool
    components: dict[str, set[str]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)
    name_components: dict[str, list[str]] = field(default_factory=dict)
    drivers: set[str] = field(default_factory=set)

    def allowed(self, use: ImageUse) -> set[str] | None:
        """Tags ``use`` may have; None when gpuspec has no pin for it."""
        if use.component == "driver":
            return self.drivers or None
        if use.component is not None:
            return self.components.get(use.component)
        if use.ref.name in self.names:
            return self.names[use.ref.name]
        return None


def image_expectations(fleet: Fleet, cluster: Cluster, release_version: str | None) -> ImageExpectations:
    """The version pins of a release (support matrix) and the driver versions the cluster's pools choose."""
    rel = query.release(release_version) if release_version else None
    images = component_query.component_images(release_version, include_nfd=True) if release_version else None
    if rel is None or images is None:
        return ImageExpectations(release_known=False)
    out = ImageExpectations(release_known=True)
    for path, image in images.items():
        if not image.image or image.version == "":
            continue
        tag = image.version if image.version else rel.tag
        out.components[path] = {tag}
        if not image.os_tag_suffix:
            out.names.setdefault(image.image, set()).add(tag)
            out.name_components.setdefault(image.image, []).append(path)
    for pool in cluster.pools:
        eff = effective_driver(fleet, cluster, pool)
        if eff.source is DriverSource.HOST:
            continue
        branch = eff.branch or rel.drivers.chart_default.split(".", 1)[0]
        if eff.source is DriverSource.PRECOMPILED:
            out.drivers.add(branch)
        elif eff.version:
            out.drivers.add(eff.version)
        elif eff.branch is None:
            out.drivers.add(rel.drivers.chart_default)
        else:
            listed = {d.version for d in rel.drivers.versions if d.branch == branch}
            if rel.drivers.chart_default.split(".", 1)[0] == branch:
                listed.add(rel.drivers.chart_default)
            out.drivers.update(listed)
    return out


def helm_images(manifests: Sequence[Manifest], expectations: ImageExpectations, values: RenderedFile | None,
                values_display: str, values_data: Mapping[str, Any]) -> list[LocatedImage]:
    """Images in helm's output, each pointing at the values key that sets it (as far as the values set it)."""
    located = []
    for manifest in manifests:
        for use in object_images(manifest.obj):
            component = use.component
            if component is None:
                candidates = expectations.name_components.get(use.ref.name, [])
                component = next((c for c in candidates if _has_path(values_data, c.split("."))),
                                 candidates[0] if candidates else None)
            base: DocPath = tuple(component.split(".")) if component else ()
            repo_key, version_key = ("image", "image") if component == "node-feature-discovery" else (
                "repository", "version")
            origin, repo_path = values_origin(values, values_display, values_data, (*base, repo_key))
            _, version_path = values_origin(values, values_display, values_data, (*base, version_key))
            located.append(LocatedImage(use, origin, repo_path, version_path, pull_secrets_of(manifest.obj, use)))
    return located


def _secret_names(value: Any) -> set[str]:
    names: set[str] = set()
    for item in value if isinstance(value, list) else []:
        if isinstance(item, str):
            names.add(item)
        elif isinstance(item, Mapping) and isinstance(item.get("name"), str):
            names.add(item["name"])
    return names


def pull_secrets_of(obj: Mapping[str, Any], use: ImageUse) -> frozenset[str]:
    """The pull secrets in effect for one image use: ``imagePullSecrets`` of every block on its path (the pod
    spec of a container, the operand block of a ClusterPolicy / NVIDIADriver and the block it belongs to)."""
    names: set[str] = set()
    node: Any = obj
    for key in ("", *use.path):
        if key:
            if isinstance(node, Mapping):
                node = node.get(key)
            elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
                node = node[key]
            else:
                break
        if isinstance(node, Mapping):
            names |= _secret_names(node.get("imagePullSecrets"))
    return frozenset(names)


def check_pull_secrets(images: Sequence[LocatedImage], mirror: Mirror) -> list[Finding]:
    """GS915: images from an air-gapped cluster's mirror pulled by something without any of its pull secrets."""
    wanted = set(mirror.pull_secrets)
    if not wanted:
        return []
    prefixes = sorted({p.rstrip("/") for p in mirror.registries.values()})
    grouped = _group(
        img for img in images
        if any(img.use.ref.base.startswith(p + "/") for p in prefixes) and not (img.pull_secrets & wanted)
    )
    return [
        make_finding(
            ids.MIRRORED_IMAGE_WITHOUT_SECRET,
            f"{_users(users)} pulls {ref} from mirror {mirror.name} without any of its pull secrets "
            f"({', '.join(sorted(wanted))})",
            origin, path, hint="set imagePullSecrets for this operand (gpuspec render does) and re-render",
        )
        for (ref, origin, path), users in grouped.items()
    ]


def overlay_images(objects: Iterable[tuple[dict[str, Any], Origin]]) -> list[LocatedImage]:
    """Images the overlay's objects (NVIDIADriver, workloads) pull, pointing into the rendered files."""
    located = []
    for obj, origin in objects:
        for use in object_images(obj):
            block = use.component is not None
            repo_path = (*use.path, "repository") if block else use.path
            version_path = (*use.path, "version") if block else use.path
            located.append(LocatedImage(use, origin, repo_path, version_path, pull_secrets_of(obj, use)))
    return located


def check_mirror(images: Sequence[LocatedImage], mirror: Mirror) -> list[Finding]:
    """GS904: images of an air-gapped cluster that do not start with one of its mirror's prefixes."""
    prefixes = sorted({p.rstrip("/") for p in mirror.registries.values()})
    grouped = _group(img for img in images if not any(img.use.ref.base.startswith(p + "/") for p in prefixes))
    findings = []
    for (ref, origin, path), users in grouped.items():
        findings.append(make_finding(
            ids.IMAGE_OUTSIDE_MIRROR,
            f"{_users(users)} pulls {ref}, which is outside mirror {mirror.name} ({', '.join(prefixes)})",
            origin, path, hint="rewrite the repository to the mirror (fleet.yaml mirrors[].registries) and re-render"))
    return findings


def check_versions(images: Sequence[LocatedImage], expectations: ImageExpectations, release: str) -> list[Finding]:
    """GS905: operand images whose tag is not the release's pin (drivers: not a version the pools choose)."""
    wrong: list[tuple[LocatedImage, set[str]]] = []
    for img in images:
        allowed = expectations.allowed(img.use)
        if allowed is None or img.use.ref.digest:
            continue
        if img.use.ref.tag not in allowed:
            wrong.append((img, allowed))
    findings = []
    grouped: dict[tuple[str, str, DocPath, str], list[str]] = {}
    origins: dict[tuple[str, str, DocPath, str], Origin] = {}
    for img, allowed in wrong:
        what = img.use.component or img.use.ref.name
        want = " or ".join(sorted(allowed))
        key = (f"{img.use.ref}", img.origin.display, img.version_path, f"{what}|{want}")
        grouped.setdefault(key, []).append(img.use.obj_ref)
        origins[key] = img.origin
    for key, users in grouped.items():
        ref, _, path, what_want = key
        what, want = what_want.split("|", 1)
        kind = "driver version the cluster's pools use" if what == "driver" else f"pin of GPU Operator {release}"
        findings.append(make_finding(
            ids.IMAGE_VERSION_NOT_PINNED,
            f"{_users(users)} pulls {ref}: {what} must be {want} (the {kind})",
            origins[key], path, hint="re-render with `gpuspec render`; do not edit image versions by hand"))
    return findings


def check_images_listed(images: Sequence[LocatedImage], listed: Sequence[str], origin: Origin) -> list[Finding]:
    """GS913: pulled images missing from images.txt (driver-like tags match with any ``-<os>`` suffix)."""
    exact = set(listed)
    parsed = [ImageRef.parse(entry) for entry in listed]
    missing: dict[str, list[str]] = {}
    for img in images:
        ref = img.use.ref
        if str(ref) in exact:
            continue
        if img.use.suffixed and any(p.base == ref.base and p.tag and ref.tag and
                                    (p.tag == ref.tag or p.tag.startswith(ref.tag + "-")) for p in parsed):
            continue
        if ref.digest and any(p.base == ref.base and p.digest == ref.digest for p in parsed):
            continue
        missing.setdefault(str(ref), []).append(img.use.obj_ref)
    return [make_finding(ids.IMAGE_NOT_LISTED, f"{_users(users)} pulls {ref}, which images.txt does not list",
                         origin, hint="re-render with `gpuspec render` so the air-gap image list is complete")
            for ref, users in sorted(missing.items())]


# ------------------------------------------------------------------------------------- configs


@dataclass(frozen=True)
class ConfigMapInfo:
    """A ConfigMap some part of the cluster's output creates."""

    name: str
    namespace: str | None
    data: Mapping[str, Any]
    where: str


def configmaps(objects: Iterable[Mapping[str, Any]], where: str) -> list[ConfigMapInfo]:
    """The ConfigMaps among ``objects``."""
    out = []
    for obj in objects:
        if obj.get("kind") != "ConfigMap" or obj.get("apiVersion") != "v1":
            continue
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        assert isinstance(metadata, Mapping)
        data = obj.get("data") if isinstance(obj.get("data"), Mapping) else {}
        assert isinstance(data, Mapping)
        out.append(ConfigMapInfo(str(metadata.get("name", "")), metadata.get("namespace"), data, where))
    return out


def check_configs(values: Mapping[str, Any], chart_values: ChartValues | None, maps: Sequence[ConfigMapInfo],
                  namespace: str, origin: Origin) -> list[Finding]:
    """GS906: MIG and device-plugin config names in values without a ConfigMap (or without their default key)."""
    findings = []
    for component in ("migManager", "devicePlugin"):
        config = get_path(values, component, "config")
        if not isinstance(config, Mapping):
            continue
        name = config.get("name")
        if not isinstance(name, str) or not name:
            continue
        chart_default = get_path(chart_values.defaults, component, "config", "name") if chart_values else None
        if name == chart_default:
            continue  # the operator's own default config (e.g. default-mig-parted-config)
        default = config.get("default")
        data: Mapping[str, Any] | None = None
        if config.get("create") is True and isinstance(config.get("data"), Mapping) and config["data"]:
            data = config["data"]
        else:
            same_name = [m for m in maps if m.name == name]
            here = [m for m in same_name if m.namespace in (None, namespace)]
            if not here:
                elsewhere = f" (a ConfigMap {name} exists in namespace {same_name[0].namespace})" if same_name else ""
                findings.append(make_finding(
                    ids.CONFIG_NOT_FOUND,
                    f"{component}.config.name is {name!r}, but no ConfigMap {name} is created in namespace "
                    f"{namespace} by the overlay or the chart{elsewhere}",
                    origin, (component, "config", "name"),
                    hint="add the ConfigMap to the overlay (gpuspec render does) or fix the name"))
                continue
            data = here[0].data
        if isinstance(default, str) and default and not _default_in(component, default, data):
            findings.append(make_finding(
                ids.CONFIG_NOT_FOUND,
                f"{component}.config.default is {default!r}, but ConfigMap {name} has no such "
                f"{'mig-configs entry' if component == 'migManager' else 'key'}",
                origin, (component, "config", "default")))
    return findings


def _default_in(component: str, default: str, data: Mapping[str, Any]) -> bool:
    if component == "devicePlugin":
        return default in data
    for text in data.values():
        try:
            parsed = load_yaml(text) if isinstance(text, str) else None
        except yaml.YAMLError:
            return True  # a config that does not parse cannot be checked here
        configs = parsed.get("mig-configs") if isinstance(parsed, Mapping) else None
        if isinstance(configs, Mapping) and default in configs:
            return True
    return not data


# ------------------------------------------------------------------------------------- schemas


def check_schema(obj: Mapping[str, Any], origin: Origin, crds: CrdSet, kube_version: str,
                 values_data: Mapping[str, Any] | None = None,
                 validate: Callable[[Mapping[str, Any], str], list[SchemaError]] | None = None) -> list[Finding]:
    """GS908/GS909/GS910: an object against its CRD or the built-in Kubernetes schema of ``kube_version``.

    ``validate`` replaces :func:`~gpuspec.verify.schemas.validate_object` (e.g. a memoised one).
    """
    findings = []
    errors = (validate(obj, kube_version) if validate is not None
              else validate_object(obj, crds=crds, kube_version=kube_version))
    for error in errors:
        if error.code == NO_SCHEMA:
            check = ids.NO_SCHEMA
        elif error.code == INVALID and not crds.knows(error.api_version, error.kind):
            check = ids.BUILTIN_SCHEMA_INVALID
        else:
            check = ids.CRD_SCHEMA_INVALID
        where = f"{error.ref()}{origin.note}"
        message = f"{where} {error.path}: {error.message} [{error.schema}]" if error.path != "$" else (
            f"{where}: {error.message} [{error.schema}]")
        path: DocPath = error.doc_path
        if origin.values_map:
            path = ()
            if error.kind == "ClusterPolicy" and error.doc_path[:1] == ("spec",) and values_data is not None:
                _, path = values_origin(None, "", values_data, error.doc_path[1:])
        hint = ("declare its release in fleet.yaml `platform:` and run `gpuspec tools install`, or point --crds at "
                "the CRDs of this kind") if check is ids.NO_SCHEMA else None
        findings.append(make_finding(check, message, origin, path, hint=hint))
    return findings


# ------------------------------------------------------------------------------------- helpers


def _group(images: Iterable[LocatedImage]) -> dict[tuple[str, Origin, DocPath], list[str]]:
    grouped: dict[tuple[str, Origin, DocPath], list[str]] = {}
    for img in images:
        grouped.setdefault((str(img.use.ref), img.origin, img.repo_path), []).append(img.use.obj_ref)
    return grouped


def _users(users: Sequence[str]) -> str:
    unique = list(dict.fromkeys(users))
    shown = ", ".join(unique[:_MAX_OBJECTS_LISTED])
    more = len(unique) - _MAX_OBJECTS_LISTED
    return shown + (f" (+{more} more)" if more > 0 else "")


def _has_path(node: Any, keys: Sequence[str]) -> bool:
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return True


# ------------------------------------------------------------------------------------- API server

_API_ENTRIES: dict[str, Entry] = {
    NAME: api_ids.NAME_REFUSED,
    LABEL: api_ids.LABEL_REFUSED,
    SELECTOR: api_ids.SELECTOR_REFUSED,
    RESERVED: api_ids.RESERVED_REFUSED,
}


def check_apiserver(obj: Mapping[str, Any], origin: Origin, crds: CrdSet) -> list[Finding]:
    """GS940–GS945: what the API server's create validation refuses in ``obj`` (names, labels, selectors, reserved
    names and values, the CEL rules of its CRD), checked offline."""
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    where = f"{kind or '?'}/{name or '?'}{origin.note}"
    findings = []
    for problem in check_object(obj):
        path = () if origin.values_map else problem.path
        findings.append(make_finding(_API_ENTRIES[problem.code], f"{where} {json_path(problem.path)}: "
                                     f"{problem.message} [{problem.source}]", origin, path,
                                     hint=_API_HINTS[problem.code]))
    api_version = obj.get("apiVersion")
    schema = crds.schema_for(api_version, kind) if isinstance(api_version, str) and isinstance(kind, str) else None
    if schema is not None:
        for outcome in evaluate_rules(obj, schema):
            path = () if origin.values_map else outcome.path
            if outcome.status == FAILED:
                findings.append(make_finding(
                    api_ids.CEL_RULE_FAILS, f"{where} {json_path(outcome.path)}: {outcome.message} (CRD rule "
                    f"{outcome.rule!r})", origin, path, hint="change the value so the CRD's rule holds"))
            else:
                findings.append(make_finding(
                    api_ids.CEL_RULE_NOT_VERIFIED, f"{where} {json_path(outcome.path)}: CRD rule {outcome.rule!r} "
                    f"not verified offline ({outcome.message}); the API server evaluates it on apply", origin, path))
    return findings


_API_HINTS = {
    NAME: "use lower-case letters, digits and '-' (and '.' where the kind allows it), within the length limit",
    LABEL: "shorten the value to 63 characters or fewer of [-A-Za-z0-9_.], starting and ending alphanumeric",
    SELECTOR: "fix the selector so the API server accepts it (and it matches the pod template's labels)",
    RESERVED: "choose a name and value of your own (no system- prefix, value at most 1000000000)",
}


def check_node_labels(cluster: Cluster) -> list[Finding]:
    """GS946: pool nodeSelector labels (node-labels.yaml lists them) that the kubelet may not set on its own Node."""
    findings = []
    for index, pool in enumerate(cluster.pools):
        for key in pool.node_selector:
            if kubelet_may_set(key):
                continue
            findings.append(spec_finding(
                api_ids.NODE_LABEL_NOT_KUBELET,
                f"cluster {cluster.name}, pool {pool.name}: node label {key} is in a kubernetes.io/k8s.io namespace "
                "the kubelet may not set on its own Node (its --node-labels refuses it, NodeRestriction too)",
                cluster, ("pools", index, "nodeSelector", key),
                hint="label the nodes through the API as an administrator (kubectl label node ...), or select the "
                "pool by a label of your own domain"))
    return findings
