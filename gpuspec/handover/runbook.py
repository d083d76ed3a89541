"""The runbook parts of a cluster's handover document, as plain data: rollback criteria and the two rollbacks, the
shift-handover checklist, the disaster-recovery order and each autoscaled pool's readiness gate.

Every command is built from the cluster's compiled render plan (object names, label selectors, namespaces) and the
labels GFD and the upgrade controller set; nothing here is Markdown.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from gpuspec.audit.facts import (
    DRIVER_FULL,
    GPU_COUNT,
    GPU_PRODUCT,
    MIG_CONFIG,
    MIG_STATE,
    UPGRADE_FAILED,
    UPGRADE_STATE,
)
from gpuspec.audit.migrate import drain_command
from gpuspec.handover import operands
from gpuspec.matrix import query
from gpuspec.matrix.govready import government_ready
from gpuspec.model.cluster_specs import DrainSpec
from gpuspec.render.autoscaling import AUTOSCALING_FILE
from gpuspec.render.context import ClusterContext
from gpuspec.render.filetree import ClusterPlan, YamlFile
from gpuspec.render.openshift import is_openshift
from gpuspec.render.operand_images import component_enabled

#: Alert-name prefix of the rendered operator-health alerts (hardware alerts are no rollback signal by themselves).
OPERATOR_ALERT_PREFIX = "GPUOperator"
#: The upgrade controller's state once a node's driver upgrade finished.
UPGRADE_DONE = "upgrade-done"
#: Kinds restored in the second step of a recovery, in this order.
FOUNDATION_KINDS = ("Namespace", "PriorityClass", "ResourceQuota", "LimitRange")
#: What no backup of a running cluster should bring back: the operator rebuilds it from the ClusterPolicy.
DO_NOT_RESTORE = (
    "operand Pods, DaemonSets, ControllerRevisions and the operator's ReplicaSets in the operator namespace "
    "(the operator recreates them from the ClusterPolicy; restored ones carry stale image and node state)",
    "the status of the ClusterPolicy and NVIDIADrivers (recomputed on reconcile)",
    "node labels GFD, NFD and the upgrade controller write (nvidia.com/..., feature.node.kubernetes.io/..., "
    f"{UPGRADE_STATE}): they describe the old hardware state and are rewritten",
    "driver files, kernel modules, container-runtime drop-ins and CDI specs from node backups: the driver and "
    "toolkit DaemonSets install them again",
)


def _cmd(*argv: str) -> str:
    return shlex.join(argv)


def _docs(plan: ClusterPlan, path: str) -> tuple[Any, ...]:
    spec = plan.files.get(path)
    return spec.documents if isinstance(spec, YamlFile) else ()


def _threshold(per_node: int | None, nodes: int, percent: int) -> int | None:
    return None if per_node is None else math.ceil(per_node * nodes * percent / 100)


class Runbook:
    """Builds the runbook sections of one cluster's document from its context, plan and the document's facts."""

    def __init__(self, ctx: ClusterContext, plan: ClusterPlan, root: str, facts: Mapping[str, Any]) -> None:
        """Keep what every section reads: the context, the plan, the output root and the facts built so far."""
        self.ctx, self.plan, self.root, self.facts = ctx, plan, root, facts
        self.cluster = ctx.cluster
        self.ns = ctx.namespace
        self.base = f"clusters/{ctx.name}"

    # ------------------------------------------------------------------ rollback criteria

    def _alert_names(self) -> list[str]:
        return [a["alert"] for a in self.facts["alerts"]["rules"] if a["alert"].startswith(OPERATOR_ALERT_PREFIX)]

    def _signals(self, pools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        percent = self.cluster.rollout.rollback_below_percent
        jobs = {j["pool"]: j for j in self.facts["acceptance"]["jobs"]}
        out = []
        for p in pools:
            checks: list[dict[str, Any]] = []
            job = jobs.get(p["name"])
            if job:
                checks.append({"signal": f"acceptance Job {job['name']} failed or did not complete",
                               "commands": [_cmd("kubectl", "-n", job["namespace"], "get", "job", job["name"], "-o",
                                                 "jsonpath={.status.conditions[*].type}")],
                               "expect": "Complete"})
            checks.append({"signal": f"a node of the pool is {UPGRADE_FAILED}",
                           "commands": [_cmd("kubectl", "get", "nodes", "-l",
                                             f"{p['selector']},{UPGRADE_STATE}={UPGRADE_FAILED}")],
                           "expect": "No resources found"})
            spec = self.cluster.pool(p["name"])
            auto = spec.autoscaling if spec is not None else None
            # An autoscaled pool may legitimately run at its minimum: the floor is the minimum's resources.
            nodes, basis = (auto.min, "the autoscaler's minimum, ") if auto is not None else (p["nodes"], "")
            for r in p["resources"]:
                limit = _threshold(r["per_node"], nodes, percent)
                if limit is None:
                    continue
                column = r["name"].replace(".", "\\.")
                checks.append({
                    "signal": f"fewer than {limit} {r['name']} advertised ({percent}% of {basis}"
                              f"{nodes} x {r['per_node']})",
                    "commands": [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-o",
                                      f"custom-columns=NODE:.metadata.name,ALLOCATABLE:.status.allocatable.{column}")],
                    "expect": f"the ALLOCATABLE column adds up to at least {limit}",
                })
            out.append({"pool": p["name"], "checks": checks})
        return out

    def rollback_criteria(self, pools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Per update step, the signals that mean "roll back now", and the two rollbacks with their commands."""
        update = self.facts["update"]
        by_name = {p["name"]: p for p in pools}
        signals = {s["pool"]: s for s in self._signals(pools)}
        steps = [{"step": s["step"], "pools": s["pools"],
                  "signals": [signals[n] for n in s["pools"] if n in signals and n in by_name]}
                 for s in update["order"]]
        alerts = self._alert_names()
        alert_query = (f'ALERTS{{alertstate="firing",alertname=~"{"|".join(alerts)}"}}' if alerts else "")
        return {
            "percent": self.cluster.rollout.rollback_below_percent,
            "steps": steps,
            "alerts": alerts,
            "alert_query": alert_query,
            "control_plane": self._control_plane(),
            "drivers": self._driver_rollbacks(pools),
            "keep_images": self.facts["rollback"]["keep_images"],
            "mirror": self.facts["rollback"]["mirror"],
        }

    def _control_plane(self) -> dict[str, Any]:
        gitops = self.facts["cluster"]["gitops"]
        tool = self.cluster.gitops.tool
        revert = [_cmd("git", "revert", "--no-edit", "<change-commit>"), _cmd("gpuspec", "render"),
                  _cmd("git", "commit", "-am", "Roll back <change>"), _cmd("git", "push")]
        if is_openshift(self.ctx):
            olm = next((d for path in sorted(self.plan.files) if path.startswith(f"{self.base}/olm/")
                        for d in _docs(self.plan, path) if isinstance(d, dict) and d.get("kind") == "Subscription"
                        and d["metadata"].get("namespace") == self.ns), None)
            sub = olm["metadata"]["name"] if olm else "gpu-operator-certified"
            csv = olm["spec"].get("startingCSV", "") if olm else ""
            return {"kind": "olm", "commands": [
                *revert,
                _cmd("kubectl", "-n", self.ns, "get", "subscriptions.operators.coreos.com,"
                     "clusterserviceversions.operators.coreos.com"),
                _cmd("kubectl", "-n", self.ns, "delete", "clusterserviceversions.operators.coreos.com", "<new-csv>"),
                _cmd("kubectl", "-n", self.ns, "delete", "subscriptions.operators.coreos.com", sub),
                _cmd("kubectl", "-n", self.ns, "get", "installplans.operators.coreos.com"),
            ], "csv": csv, "subscription": sub}
        sync: list[str]
        if tool == "argocd":
            apps = [o["name"] for o in gitops["objects"] if o["kind"] == "Application"]
            sync = [_cmd("kubectl", "-n", gitops["controller_namespace"], "get", "applications.argoproj.io", *apps)]
            history: list[str] = []
        else:
            release = next((d for path in sorted(self.plan.files) for d in _docs(self.plan, path)
                            if path.startswith(f"gitops/flux/{self.cluster.name}/") and isinstance(d, dict)
                            and d.get("kind") == "HelmRelease"), None)
            name = release["spec"].get("releaseName", "") if release else ""
            storage = release["spec"].get("storageNamespace", self.ns) if release else self.ns
            sync = [_cmd("kubectl", "-n", gitops["controller_namespace"], "get",
                         "helmreleases.helm.toolkit.fluxcd.io", "-l", f"gpuspec.io/cluster={self.cluster.name}")]
            history = [_cmd("helm", "-n", storage, "history", name)] if name else []
        return {"kind": "helm", "tool": tool, "commands": revert + sync + history, "csv": "", "subscription": ""}

    def _driver_rollbacks(self, pools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        drain = drain_command("<node>", self.cluster.rollout.drain or DrainSpec())
        selector = "app=nvidia-driver-daemonset" if self.ctx.driver_mode == "clusterpolicy" \
            else "app.kubernetes.io/component=nvidia-driver"
        out = []
        for p in pools:
            driver = p["driver"]
            if driver["source"] == "host" or not p["managed"]:
                out.append({"pool": p["name"], "host": True, "image": "", "version": "", "commands": []})
                continue
            out.append({"pool": p["name"], "host": False, "image": driver["image"], "version": driver["version"],
                        "object": f"{driver['kind']} {driver['object']}" if driver["kind"] else "",
                        "commands": [
                            _cmd("kubectl", "get", "nodes", "-l", p["selector"], "-L",
                                 f"{UPGRADE_STATE},{DRIVER_FULL}"),
                            _cmd("kubectl", "cordon", "<node>"), drain,
                            _cmd("kubectl", "-n", self.ns, "delete", "pod", "-l", selector,
                                 "--field-selector", "spec.nodeName=<node>"),
                            _cmd("kubectl", "get", "node", "<node>", "-L", DRIVER_FULL),
                            _cmd("kubectl", "uncordon", "<node>"),
                        ]})
        return out

    # ------------------------------------------------------------------ shift handover

    def shift_checklist(self, pools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The short checks after any work in the cluster, each with its command and what it must show."""
        checks: list[dict[str, Any]] = []
        for p in pools:
            columns = (f"custom-columns=NODE:.metadata.name,"
                       f"READY:.status.conditions[?(@.type==\"Ready\")].status,"
                       f"PRODUCT:.metadata.labels.{GPU_PRODUCT.replace('.', chr(92) + '.')},"
                       f"GPUS:.metadata.labels.{GPU_COUNT.replace('.', chr(92) + '.')}")
            spec = self.cluster.pool(p["name"])
            auto = spec.autoscaling if spec is not None else None
            size = (f"{auto.min} to {auto.max} node(s) (autoscaled; planned {p['nodes']})" if auto is not None
                    else f"{p['nodes']} node(s)")
            checks.append({"check": f"Pool {p['name']}: {size} Ready with {p['gpus_per_node']} GPU(s) each, "
                                    f"each advertising {p['resources_text']} ({p['gpus']} GPU(s) planned)",
                           "commands": [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-o", columns)]})
            version = p["driver"]["version"]
            if p["driver"]["source"] != "host" and p["managed"]:
                checks.append({"check": f"Pool {p['name']}: driver {version or p['driver']['branch']} on every node",
                               "commands": [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-L", DRIVER_FULL)]})
            if p["mig"]["layout"]:
                checks.append({"check": f"Pool {p['name']}: MIG config {p['mig']['layout']}, state success",
                               "commands": [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-L",
                                                 f"{MIG_CONFIG},{MIG_STATE}")]})
        checks.append({"check": f"Operands healthy: ClusterPolicy {operands.CLUSTER_POLICY} ready, every DaemonSet in "
                                f"{self.ns} fully available",
                       "commands": [_cmd("kubectl", "get", "clusterpolicies.nvidia.com", operands.CLUSTER_POLICY,
                                         "-o", "jsonpath={.status.state}"),
                                    _cmd("kubectl", "-n", self.ns, "get", "daemonsets")]})
        managed = [p for p in pools if p["driver"]["source"] != "host" and p["managed"]]
        if managed:
            checks.append({"check": f"No pending driver upgrade: every node {UPGRADE_DONE} (or unlabelled)",
                           "commands": [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-L", UPGRADE_STATE)
                                        for p in managed]})
        alerts = self._alert_names()
        checks.append({"check": "No GPU alert firing",
                       "commands": [], "promql": 'ALERTS{alertstate="firing",alertname=~"GPU.*"}' if alerts else ""})
        gitops = self.facts["cluster"]["gitops"]
        if self.cluster.gitops.tool == "argocd":
            apps = [o["name"] for o in gitops["objects"] if o["kind"] == "Application"]
            sync = _cmd("kubectl", "-n", gitops["controller_namespace"], "get", "applications.argoproj.io", *apps)
        else:
            sync = _cmd("kubectl", "-n", gitops["controller_namespace"], "get",
                        "helmreleases.helm.toolkit.fluxcd.io,kustomizations.kustomize.toolkit.fluxcd.io",
                        "-l", f"gpuspec.io/cluster={self.cluster.name}")
        checks.append({"check": "GitOps synced: no change waiting, none applied by hand", "commands": [sync]})
        for c in checks:
            c.setdefault("promql", "")
        return checks

    # ------------------------------------------------------------------ disaster recovery

    def disaster_recovery(self) -> dict[str, Any]:
        """The restore order of the cluster, from its rendered objects."""
        overview = self.facts["cluster"]
        steps: list[dict[str, Any]] = []
        chart = overview["operator"]
        crds = ["clusterpolicies.nvidia.com", "nvidiadrivers.nvidia.com"]
        if is_openshift(self.ctx):
            olm_files = sorted(p for p in self.plan.files if p.startswith(f"{self.base}/olm/")
                               and not p.endswith("kustomization.yaml"))
            steps.append({"what": "The operator and its CRDs: OLM installs both from the pinned Subscription",
                          "objects": [f"{d['kind']} {d['metadata']['name']}" for p in olm_files
                                      for d in _docs(self.plan, p) if isinstance(d, dict) and "kind" in d],
                          "commands": [_cmd("kubectl", "apply", "-k", f"{self.root}/{self.base}/olm"),
                                       _cmd("kubectl", "get", "crd", *crds)]})
        else:
            repo = chart["chart_repository"]
            show = (["helm", "show", "crds", f"{repo.rstrip('/')}/gpu-operator"] if repo.startswith("oci://")
                    else ["helm", "show", "crds", "gpu-operator", "--repo", repo])
            steps.append({"what": f"The GPU Operator CRDs of chart {chart['chart_version']}, first, so the "
                                  "ClusterPolicy and NVIDIADriver objects the sync applies are accepted (Helm "
                                  "installs chart CRDs on first install only and never upgrades them)",
                          "objects": [f"CustomResourceDefinition {c}" for c in crds],
                          "commands": [shlex.join([*show, "--version", chart["chart_version"]])
                                       + " | kubectl apply --server-side -f -",
                                       _cmd("kubectl", "get", "crd", *crds)]})
        found: dict[str, list[str]] = {}
        for path in sorted(self.plan.files):
            if not path.startswith(self.base + "/") or path.startswith(
                    (f"{self.base}/acceptance/", f"{self.base}/monitoring/", f"{self.base}/olm/")):
                continue  # the GitOps objects bring these back in step 3 (OLM: step 1)
            kinds = [d for d in _docs(self.plan, path) if isinstance(d, dict) and d.get("kind") in FOUNDATION_KINDS]
            if kinds:
                found[path] = [f"{d['kind']} {d['metadata']['name']}" for d in kinds]
        objects = sorted({o for objs in found.values() for o in objs},
                         key=lambda o: (FOUNDATION_KINDS.index(o.split(" ")[0]), o))
        secrets = list(overview["mirror"]["pull_secrets"]) if overview["mirror"] else []
        steps.append({"what": "Namespaces, PriorityClasses and quotas (before any workload is admitted)"
                              + (f"; then the pull secrets {', '.join(secrets)} from your secret store (never in git)"
                                 if secrets else ""),
                      "objects": objects,
                      "commands": [_cmd("kubectl", "apply", "-f", f"{self.root}/{p}") for p in found]})
        tool = self.cluster.gitops.tool
        gitops_dir = f"{self.root}/gitops/{tool}/{self.cluster.name}"
        steps.append({"what": f"The GitOps objects ({'Argo CD' if tool == 'argocd' else 'Flux'}): they bring back "
                              "the chart, the overlay, acceptance and monitoring from git",
                      "objects": [f"{o['kind']} {o['name']}" for o in overview["gitops"]["objects"]],
                      "commands": [_cmd("kubectl", "apply", "-k" if tool == "flux" else "-f", gitops_dir)]})
        steps.append({"what": "Let reconciliation rebuild the operands, then run the acceptance checklist",
                      "objects": [f"ClusterPolicy {operands.CLUSTER_POLICY}"]
                      + [f"NVIDIADriver {n}" for n in self.facts["chain"]["nvidiadrivers"]],
                      "commands": [_cmd("kubectl", "wait", "--for=jsonpath={.status.state}=ready",
                                        f"clusterpolicies.nvidia.com/{operands.CLUSTER_POLICY}", "--timeout=30m"),
                                   _cmd("kubectl", "-n", self.ns, "get", "pods", "-o", "wide")]})
        return {"steps": steps, "do_not_restore": list(DO_NOT_RESTORE)}

    # ------------------------------------------------------------------ autoscaling

    def autoscaling(self, pools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Each autoscaled pool's autoscaler, bounds and readiness gate, from ``autoscaling.yaml``."""
        path = f"{self.base}/{AUTOSCALING_FILE}"
        docs = _docs(self.plan, path)
        if not docs:
            return {"file": "", "pools": [], "flags": []}
        doc = docs[0]
        selectors = {p["name"]: p["selector"] for p in pools}
        out = []
        for name, entry in doc["pools"].items():
            out.append({
                "pool": name, "autoscaler": entry["autoscaler"], "min": entry["min"], "max": entry["max"],
                "gate": entry["readinessGate"],
                "tags": [f"{asg['prefix']}{k}={v}" for k, v in asg["tags"].items()]
                if (asg := entry.get("autoScalingGroupTags")) else [],
                "commands": [_cmd("kubectl", "get", "nodes", "-l", selectors.get(name, ""), "-o",
                                  "custom-columns=NODE:.metadata.name,CREATED:.metadata.creationTimestamp,"
                                  "GPU:.status.allocatable.nvidia\\.com/gpu,TAINTS:.spec.taints[*].key")],
            })
        return {"file": f"{self.root}/{path}", "pools": out, "flags": list(doc.get("clusterAutoscalerFlags") or [])}

    # ------------------------------------------------------------------ compliance

    def compliance(self) -> dict[str, Any]:
        """The government-ready set of the release, the enabled operands against it and the source gaps."""
        if self.cluster.compliance is None:
            return {"set": "", "status": "", "rows": [], "gap": "", "images_gap": ""}
        line = query.line_of(self.ctx.facts.version) or ""
        gov = government_ready(line) if line else None
        rows = []
        for path in sorted(p for p in self.ctx.facts.images if component_enabled(self.ctx, p)):
            listed = bool(gov and gov.status == "documented" and gov.covers(path))
            rows.append({"operand": path, "listed": "yes" if listed else
                         ("cannot verify" if gov is None or gov.status == "cannot-verify" else "no"),
                         "image": (gov.image(path) or "") if gov else ""})
        return {"set": self.cluster.compliance, "status": gov.status if gov else "cannot-verify",
                "rows": rows, "gap": gov.gap if gov else "", "images_gap": gov.images_gap if gov else "",
                "line": line, "source": gov.source if gov else ""}

    def build(self, pools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Every runbook section of the document."""
        return {
            "compliance": self.compliance(),
            "rollback_criteria": self.rollback_criteria(pools),
            "shift_checklist": self.shift_checklist(pools),
            "disaster_recovery": self.disaster_recovery(),
            "autoscaling": self.autoscaling(pools),
        }
