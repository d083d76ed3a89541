"""`gpuspec matrix [VERSION]`: what a GPU Operator release supports and pins, from the packaged support matrix."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import click

from gpuspec.errors import GpuspecError
from gpuspec.matrix import component_query, mig_query
from gpuspec.matrix import query as q
from gpuspec.matrix.data_models import Release
from gpuspec.matrix.load import load_matrix
from gpuspec.matrix.runtime import release_cells, rendered_env

OS_TAG_PLACEHOLDER = "<os-tag>"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [headers, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def lines_overview(as_of: dt.date) -> list[dict[str, Any]]:
    """Return one summary record per release line: patches, release date, status on ``as_of``, Kubernetes range."""
    out = []
    for ln in q.release_lines():
        plat = next(p for p in load_matrix().platforms.lines if p.line == ln.line)
        out.append(
            {
                "line": ln.line,
                "released": ln.released.isoformat(),
                "status": q.line_status(ln.line, as_of),
                "patches": [f"v{p}" for p in ln.patches],
                "latest": f"v{ln.patches[-1]}",
                "kubernetes": f"{plat.kubernetes_summary.min}-{plat.kubernetes_summary.max}",
            }
        )
    return out


def release_report(rel: Release, as_of: dt.date) -> dict[str, Any]:
    """Return everything the matrix knows about one patch release as plain data (what ``--format json`` prints)."""
    plat = next(p for p in load_matrix().platforms.lines if p.line == rel.line)
    components = {}
    for path, img in rel.components.items():
        ref = component_query.image_ref(img, rel.version, os_tag=OS_TAG_PLACEHOLDER)
        components[path] = {
            "image": ref,
            "repository": img.repository,
            "name": img.image,
            "version": img.version,
            "version_source": "values.yaml" if img.version is not None else "chart appVersion (release tag)",
            "enabled_default": img.enabled_default,
            "os_tag_suffix": img.os_tag_suffix,
            **({"note": img.note} if img.note else {}),
        }
        if img.version is None and img.image is None:
            components[path]["version_source"] = None
    kube: dict[str, Any] = {}
    ranges = q.kubernetes_ranges(rel.version) or {}
    for dist, cells in ranges.items():
        kube[dist] = cells
    overrides = [
        {"limits": ov.model_dump(exclude={"versions", "source"}, exclude_none=True), "source": ov.source}
        for ov in plat.patch_overrides
        if rel.version in ov.versions
    ]
    return {
        "version": rel.tag,
        "line": rel.line,
        "tag_date": rel.tag_date.isoformat(),
        "status": q.line_status(rel.line, as_of),
        "status_as_of": as_of.isoformat(),
        "helm_chart_version": rel.chart.helm_chart_version,
        "components": components,
        "node_feature_discovery": {
            "chart_version": rel.nfd.chart_version,
            "chart_repository": rel.nfd.chart_repository,
            "image": component_query.image_ref(rel.nfd.image, rel.version),
        },
        "drivers": {
            "chart_default": rel.drivers.chart_default,
            "docs_default": rel.drivers.docs_default,
            "docs_recommended": rel.drivers.docs_recommended,
            "branches": rel.drivers.branches,
            "versions": [d.version for d in rel.drivers.versions],
        },
        "kubernetes": kube,
        "kubernetes_patch_limits": overrides,
        "operating_systems": [text for _, _, text in q.operating_systems(rel.version) or []],
        "container_runtimes": {
            "containerd_versions": plat.container_runtimes.containerd_versions.text,
            "by_os": [
                {"os": r.os.text, "containerd": r.containerd, "cri-o": r.cri_o} for r in plat.container_runtimes.by_os
            ],
        },
        "runtime_settings": [
            {"distribution": c.distribution, "runtime": c.runtime, "kubernetes_from": c.kubernetes_from,
             "status": c.status, "toolkit_env": {e.name: e.value for e in rendered_env(c)}, "source": c.source}
            for c in release_cells(rel.version)
        ],
        "nvidiadriver_crd": component_query.nvidiadriver_crd_status(rel.version),
        "mig_named_layouts": len(mig_query.mig_layouts(rel.version)),
        "notes": rel.notes,
    }


def _yn(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "unknown"}[value]


def _render_release(rep: dict[str, Any]) -> str:
    out = [
        f"GPU Operator {rep['version']}  (line {rep['line']}, tagged {rep['tag_date']}, "
        f"{rep['status']} as of {rep['status_as_of']}; Helm chart version {rep['helm_chart_version']})",
        "",
        "Components (driver-like images get -<os-tag>, e.g. ubuntu22.04):",
    ]
    rows = []
    for path, c in rep["components"].items():
        enabled = "" if c["enabled_default"] is None else ("on" if c["enabled_default"] else "off")
        rows.append(
            [path, enabled, c["image"] or f"(not pinned by the chart{': ' + c['note'] if 'note' in c else ''})"]
        )
    nfd = rep["node_feature_discovery"]
    rows.append(["node-feature-discovery", "", f"{nfd['image']}  (chart {nfd['chart_version']})"])
    out.append(_table(["values path", "default", "image"], rows))
    d = rep["drivers"]
    out += [
        "",
        f"Driver: chart default {d['chart_default']}; docs default {d['docs_default'] or '-'}, "
        f"recommended {d['docs_recommended'] or '-'}",
        f"Driver branches: {', '.join(d['branches'])}",
        f"Driver versions listed: {', '.join(d['versions'])}",
        "",
        "Kubernetes (per distribution, as the docs tables list them):",
        _table(["distribution", "versions"], [[k, "; ".join(v)] for k, v in rep["kubernetes"].items()]),
    ]
    for ov in rep["kubernetes_patch_limits"]:
        out.append(f"  patch limit for {rep['version']}: {ov['limits']} ({ov['source']})")
    rt = rep["container_runtimes"]
    out += [
        "",
        f"Operating systems: {'; '.join(rep['operating_systems'])}",
        "",
        f"Container runtimes (containerd {rt['containerd_versions']}):",
        _table(
            ["os", "containerd", "cri-o"],
            [[r["os"], _yn(r["containerd"]), _yn(r["cri-o"])] for r in rt["by_os"]],
        ),
        "",
        "Container runtime settings gpuspec renders (toolkit.env; other distribution x runtime pairs: cannot verify):",
        _table(
            ["distribution", "runtime", "kubernetes", "toolkit.env"],
            [[c["distribution"], c["runtime"], f">= {c['kubernetes_from']}" if c["kubernetes_from"] else "any",
              "cannot verify (not documented)" if c["status"] == "unknown" else
              ", ".join(f"{k}={v}" for k, v in c["toolkit_env"].items()) or "- (operator defaults)"]
             for c in rep["runtime_settings"]],
        ),
        "",
        f"NVIDIADriver CRD: {rep['nvidiadriver_crd']}",
        f"Named MIG layouts in the static config: {rep['mig_named_layouts']}",
    ]
    if rep["notes"]:
        out += ["", "Notes:"] + [f"  - {n}" for n in rep["notes"]]
    return "\n".join(out)


def _render_lines(lines: list[dict[str, Any]], as_of: dt.date) -> str:
    rows = [[ln["line"], ln["released"], ln["status"], ln["latest"], ln["kubernetes"], str(len(ln["patches"]))]
            for ln in lines]  # fmt: skip
    head = f"GPU Operator release lines (status as of {as_of.isoformat()}; data date {q.data_date().isoformat()})"
    return head + "\n" + _table(["line", "released", "status", "latest", "kubernetes", "patches"], rows)


@click.command("matrix")
@click.argument("version", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--as-of",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="Date for life-cycle status (default: the data date of the support matrix).",
)
def matrix_command(version: str | None, fmt: str, as_of: dt.datetime | None) -> None:
    """Show what a GPU Operator release supports and pins; without VERSION, list release lines and status."""
    when = as_of.date() if as_of else q.data_date()
    if version is None:
        lines = lines_overview(when)
        text = json.dumps({"as_of": when.isoformat(), "lines": lines}, indent=2) if fmt == "json" else None
        click.echo(text if text is not None else _render_lines(lines, when))
        return
    rel = q.release(version)
    if rel is None:
        nearest = q.nearest_release(version)
        hint = f"nearest known release: {nearest.tag}" if nearest else "versions look like v25.10.1"
        raise GpuspecError(f"unknown GPU Operator release {version!r}", hint=hint)
    rep = release_report(rel, when)
    click.echo(json.dumps(rep, indent=2) if fmt == "json" else _render_release(rep))
