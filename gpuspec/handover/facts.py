"""Gather what a cluster's handover document says, as plain data: every value comes from the spec, the support
matrix, the plan's impact and rollback notes, the finding catalogue or the cluster's rendered objects (pure).

The result is a dict of strings, numbers, lists and dicts: templates (shipped or overridden) format it and
escape every value; nothing here is Markdown.
"""

from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuspec.audit.expect import expected_resources
from gpuspec.audit.facts import (
    GPU_COUNT,
    GPU_PRODUCT,
    GPU_REPLICAS,
    MIG_CONFIG,
    MIG_STATE,
    SHARING_STRATEGY,
    UPGRADE_STATE,
)
from gpuspec.catalogue import changeset, rollout
from gpuspec.catalogue.entry import Entry
from gpuspec.handover import operands
from gpuspec.handover.ownership import alert_scope, alertmanager_route, ownership_facts, receiver_of
from gpuspec.handover.runbook import Runbook
from gpuspec.loader.files import repository_path
from gpuspec.matrix import query
from gpuspec.matrix.acceptance import sample_image
from gpuspec.matrix.chartintent import chart_intent, written_value
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy, SharingMode
from gpuspec.render.acceptance import dcgm_image
from gpuspec.render.acceptance_plan import acceptance_upstream_images, needs_dcgm_image
from gpuspec.render.alerts import CLUSTER_LABEL, DCGM_JOB, POOL_LABEL, TEAM_LABEL
from gpuspec.render.context import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    ClusterContext,
)
from gpuspec.render.filetree import ClusterPlan, YamlFile
from gpuspec.render.gitops import chart_repository
from gpuspec.render.operand_images import component_enabled
from gpuspec.render.poolresources import gpu_quota_resources
from gpuspec.rollout.diff import mig_text
from gpuspec.rollout.driver_facts import driver_image
from gpuspec.rollout.durations import context_scopes, estimate_duration, operator_driver
from gpuspec.rollout.impact import driver_rollback, mig_rollback, operator_rollback, reload_procedure
from gpuspec.rollout.records import Disruption

#: The finding ids whose settings enforce the update policy: rollout lint rules, then change-set rules.
UPDATE_RULES: tuple[Entry, ...] = (*rollout.ENTRIES, *changeset.ENTRIES)


@dataclass(frozen=True, slots=True)
class RuleSetting:
    """How the fleet's policy packs configure one rule (from ``policies/``; catalogue defaults otherwise)."""

    enabled: bool
    severity: str
    params: Mapping[str, Any]


def _docs(plan: ClusterPlan, path: str) -> tuple[Any, ...]:
    spec = plan.files.get(path)
    return spec.documents if isinstance(spec, YamlFile) else ()


def _doc(plan: ClusterPlan, path: str) -> Any:
    docs = _docs(plan, path)
    return docs[0] if docs else None


@functools.lru_cache(maxsize=8192)
def _cmd(*argv: str) -> str:
    """A shell command line with every argument quoted for a POSIX shell."""
    return shlex.join(argv)


def _selector(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _taint(key: str, value: str, effect: str) -> str:
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def _ref_parts(reference: str) -> tuple[str, str]:
    """``(repository/name, tag)`` of an image reference."""
    base, _, tag = reference.rpartition(":")
    return (base, tag) if "/" not in tag else (reference, "")


def _compact(value: Any) -> str:
    """A rendered value on one line (JSON, keys sorted), as a deviations table shows it."""
    return json.dumps(value, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)


def _scalar(value: Any) -> Any:
    """A rendered value as the YAML file shows it (booleans as true/false)."""
    return ("true" if value else "false") if isinstance(value, bool) else value


def _scalars(mapping: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if mapping is None else {k: _scalar(v) for k, v in mapping.items()}


class _Builder:
    def __init__(self, ctx: ClusterContext, plan: ClusterPlan, fleet_rules: Mapping[str, RuleSetting],
                 rendered_root: str) -> None:
        self.ctx, self.plan, self.rules, self.root = ctx, plan, fleet_rules, rendered_root
        self.cluster: Cluster = ctx.cluster
        self.fleet: Fleet = ctx.fleet
        self.ns = ctx.namespace
        self.base = f"clusters/{ctx.name}"
        self.values: dict[str, Any] = _doc(plan, f"{self.base}/gpu-operator.values.yaml") or {}
        labels = _doc(plan, f"{self.base}/node-labels.yaml") or {"pools": {}}
        self.node_labels: dict[str, dict[str, str]] = {
            name: dict(entry["labels"]) for name, entry in labels["pools"].items()
        }
        # Sections several others read, built once per document.
        self._drivers: dict[str, dict[str, Any]] = {}
        self._gitops: dict[str, Any] | None = None
        self._alerts: dict[str, Any] | None = None
        self._chain: dict[str, Any] | None = None

    # ------------------------------------------------------------------ overview

    def _toolkit_env(self) -> list[str]:
        """``NAME=value`` of every toolkit environment variable the rendered values set (runtime settings)."""
        env = self.values.get("toolkit", {}).get("env") or []
        return [f"{e.get('name')}={e.get('value')}" for e in env if isinstance(e, Mapping)]

    def overview(self) -> dict[str, Any]:
        c, facts = self.cluster, self.ctx.facts
        line = query.line_of(facts.version)
        status = query.line_status(line) if line else "unknown"
        pools = c.pools
        return {
            "name": c.name,
            "description": c.metadata.description or "",
            "labels": [{"key": k, "value": v} for k, v in sorted(c.metadata.labels.items())],
            "source": repository_path(c.source_file),
            "rendered": f"{self.root}/{self.base}",
            "kubernetes": {"version": c.kubernetes.version, "distribution": c.kubernetes.distribution,
                           "runtime": c.kubernetes.runtime, "toolkit_env": self._toolkit_env()},
            "operator": {
                "release": facts.tag, "chart_version": facts.chart_version, "channel": c.operator.channel or "",
                "namespace": self.ns, "chart_repository": chart_repository(self.ctx), "line": line or "",
                "line_status": status,
            },
            "mirror": self.mirror(),
            "gitops": self.gitops(),
            "totals": {"pools": len(pools), "nodes": sum(p.nodes for p in pools),
                       "gpus": sum(p.nodes * p.gpu.count for p in pools)},
        }

    def mirror(self) -> dict[str, Any] | None:
        m = self.ctx.mirror
        if m is None:
            return None
        return {
            "name": m.name,
            "registries": [{"upstream": k, "mirror": v} for k, v in sorted(m.registries.items())],
            "chart": m.chart.repository,
            "pull_secrets": list(m.pull_secrets),
            "package_repo_config_map": m.package_repo_config_map or "",
            "ca_config_map": m.ca_config_map or "",
        }

    def gitops(self) -> dict[str, Any]:
        if self._gitops is None:
            self._gitops = self._gitops_objects()
        return self._gitops

    def _gitops_objects(self) -> dict[str, Any]:
        objects: list[dict[str, str]] = []
        for path, spec in sorted(self.plan.files.items()):
            if not path.startswith("gitops/") or not isinstance(spec, YamlFile):
                continue
            for doc in spec.documents:
                if not isinstance(doc, dict) or "kind" not in doc or (doc["kind"] == "Kustomization" and \
                        doc.get("apiVersion", "").startswith("kustomize.config")):
                    continue
                meta = doc.get("metadata", {})
                objects.append({"kind": doc["kind"], "name": meta.get("name", ""),
                                "namespace": meta.get("namespace", ""), "file": f"{self.root}/{path}"})
        tool = self.cluster.gitops.tool
        return {"tool": tool, "objects": objects,
                "controller_namespace": objects[0]["namespace"] if objects else ""}

    # ------------------------------------------------------------------ placement

    def driver_of(self, pool: Pool) -> dict[str, Any]:
        """The pool's resolved driver and the object that installs it (as the render plan has it)."""
        known = self._drivers.get(pool.name)
        if known is None:
            known = self._drivers[pool.name] = self._driver_of(pool)
        return known

    def _driver_of(self, pool: Pool) -> dict[str, Any]:
        found = next((d for d in self.ctx.drivers if d.pool.name == pool.name), None)
        if found is None:
            return {"source": DriverSource.HOST.value, "branch": "", "version": "", "kernel_module_type": "",
                    "kind": "", "object": "", "image": ""}
        if self.ctx.driver_mode != "nvidiadriver":
            kind, name = "ClusterPolicy", operands.CLUSTER_POLICY
        else:
            own = _doc(self.plan, f"{self.base}/nvidiadriver-{pool.name}.yaml")
            kind, name = "NVIDIADriver", own["metadata"]["name"] if isinstance(own, dict) else "default"
        return {"source": found.source.value, "branch": found.branch, "version": found.version,
                "kernel_module_type": found.kernel_module_type, "kind": kind, "object": name,
                "image": driver_image(self.fleet, self.cluster, pool) or ""}

    def role(self, pool: Pool) -> str:
        canary = self.cluster.rollout.canary_pool == pool.name
        role = f"canary, pool wave {pool.wave}" if canary else f"pool wave {pool.wave}"
        return role if pool.managed else role + ", unmanaged (the operator deploys nothing on its nodes)"

    def pools(self) -> list[dict[str, Any]]:
        out = []
        for index, pool in enumerate(sorted(self.cluster.pools, key=lambda p: (p.wave, p.name)), start=1):
            product = query.gpu_product(pool.gpu.product)
            mig_layout = self.ctx.mig_layouts.get(pool.name, "")
            sharing = pool.sharing
            resources = expected_resources(pool)
            out.append({
                "id": f"pool{index}",
                "name": pool.name,
                "role": self.role(pool),
                "canary": self.cluster.rollout.canary_pool == pool.name,
                "managed": pool.managed,
                "wave": pool.wave,
                "nodes": pool.nodes,
                "product": pool.gpu.product,
                "architecture": getattr(product, "architecture", "") or "",
                "gpus_per_node": pool.gpu.count,
                "gpus": pool.nodes * pool.gpu.count,
                "os": f"{pool.os.distribution} {pool.os.version}",
                "kernel": pool.os.kernel or "",
                "driver": self.driver_of(pool),
                "mig": {"strategy": pool.mig.strategy.value, "layout": mig_layout,
                        "text": mig_text(pool.mig), "configmap": self.ctx.mig_configmap if pool.mig.custom else ""},
                "sharing": {"mode": sharing.mode.value,
                            "replicas": sharing.replicas if sharing.mode is not SharingMode.NONE else 1,
                            "justification": sharing.justification or "",
                            "config": (sharing.config_name or pool.name)
                            if sharing.mode is not SharingMode.NONE else ""},
                "taints": [_taint(t.key, t.value, t.effect) for t in pool.taints],
                "selector": _selector(pool.node_selector),
                "labels": [f"{k}={v}" for k, v in sorted(self.node_labels.get(pool.name, {}).items())],
                "resources": [{"name": n, "per_node": c} for n, c in sorted(resources.counts.items())],
                "resources_text": resources.describe(),
                "tenants": [t.name for t in self.cluster.tenants if pool.name in t.pools],
            })
        return out

    def tenants(self) -> list[dict[str, Any]]:
        out = []
        for index, tenant in enumerate(self.cluster.tenants, start=1):
            quota: list[dict[str, Any]] = []
            if tenant.gpu_quota is not None:
                pools = [p for name in tenant.pools if (p := self.cluster.pool(name)) is not None]
                quota += [{"resource": f"requests.{r}", "limit": tenant.gpu_quota} for r in gpu_quota_resources(pools)]
            quota += [{"resource": f"requests.nvidia.com/{r}", "limit": n} for r, n in sorted(tenant.mig_quota.items())]
            docs = _docs(self.plan, f"{self.base}/tenant-{tenant.name}.yaml")
            objects = [f"{d['kind']} {d['metadata']['name']}" for d in docs
                       if isinstance(d, dict) and d.get("kind") != "Namespace"]
            quota_text = ", ".join(f"{q['limit']} {str(q['resource']).removeprefix('requests.')}" for q in quota)
            granted = ", ".join(f"{q['limit']} {str(q['resource']).removeprefix('requests.')}" for q in quota
                                if str(q["limit"]) not in ("0", "0.0"))
            out.append({"id": f"tenant{index}", "quota_text": quota_text or "no quota",
                        "granted_text": granted or ("no GPUs" if quota else "no quota"), "name": tenant.name,
                        "namespaces": list(tenant.namespaces), "pools": list(tenant.pools),
                        "quota": quota, "priority_class": tenant.priority_class or "",
                        "objects": sorted(set(objects))})
        return out

    def quotas(self) -> list[tuple[str, str]]:
        """(namespace, ResourceQuota name) of every rendered tenant quota."""
        return [(d["metadata"]["namespace"], d["metadata"]["name"])
                for t in self.cluster.tenants for d in _docs(self.plan, f"{self.base}/tenant-{t.name}.yaml")
                if isinstance(d, dict) and d.get("kind") == "ResourceQuota"]

    def priority_classes(self) -> list[dict[str, Any]]:
        return [{"name": pc.name, "value": pc.value, "preemption": pc.preemption_policy,
                 "description": pc.description or ""} for pc in self.cluster.priority_classes]

    # ------------------------------------------------------------------ component chain and images

    def nvidiadriver_names(self) -> list[str]:
        """The NVIDIADrivers of the cluster: the chart's ``default`` (v26.7.0+) and those of pools with their own."""
        if self.ctx.driver_mode != "nvidiadriver":
            return []
        own = [d.pool.name for d in self.ctx.pool_drivers]
        return ["default", *own] if self.ctx.default_driver is not None else own

    def _default_nvidiadriver(self) -> dict[str, Any] | None:
        default = self.ctx.default_driver
        if default is None:
            return None
        pools = [d.pool.name for d in self.ctx.drivers if d.key == default.key]
        return {"version": default.spec_version, "pools": pools}

    def chain(self) -> dict[str, Any]:
        if self._chain is None:
            self._chain = self._component_chain()
        return self._chain

    def _component_chain(self) -> dict[str, Any]:
        values = self.values
        enabled = [o for o in operands.OPERANDS
                   if isinstance(values.get(o.values_path), dict) and values[o.values_path].get("enabled", True)]
        mode = self.ctx.driver_mode
        return {
            "cluster_policy": operands.CLUSTER_POLICY,
            "operator_deployment": operands.OPERATOR_DEPLOYMENT,
            "driver_mode": mode,
            "driver_daemonset": operands.DRIVER_DAEMONSET if mode == "clusterpolicy"
            else f"{operands.NVIDIADRIVER_DAEMONSET_PREFIX}*" if mode == "nvidiadriver" else "",
            "nvidiadrivers": self.nvidiadriver_names(),
            "default_nvidiadriver": self._default_nvidiadriver(),
            "operands": [{"values_path": o.values_path, "daemonset": o.daemonset, "role": o.role} for o in enabled],
            "cdi": bool(values.get("cdi", {}).get("enabled")),
            "nfd": bool(values.get("nfd", {}).get("enabled")),
            "mig_strategy": values.get("mig", {}).get("strategy", ""),
            "device_plugin_config": self.ctx.device_plugin_configmap if self.ctx.sharing_pools else "",
            "device_plugin_label": DEVICE_PLUGIN_CONFIG_LABEL,
            "mig_config": self.ctx.mig_configmap if self.ctx.custom_mig else "",
            "mig_label": MIG_CONFIG,
            "gfd_labels": [GPU_PRODUCT, GPU_COUNT, GPU_REPLICAS, SHARING_STRATEGY, MIG_STATE],
            "upgrade_label": UPGRADE_STATE,
            "service_monitor": bool(values.get("dcgmExporter", {}).get("serviceMonitor", {}).get("enabled")),
        }

    def images(self) -> list[dict[str, str]]:
        by_base: dict[str, list[str]] = {}
        for path, image in self.ctx.facts.images.items():
            if image.repository and image.image and component_enabled(self.ctx, path):
                by_base.setdefault(f"{image.repository.rstrip('/')}/{image.image}", []).append(path)
        rows = []
        mirror = self.ctx.mirror
        checks = acceptance_upstream_images(self.cluster) | {sample_image()}
        if needs_dcgm_image(self.cluster):
            checks.add(dcgm_image(self.ctx) or "")
        for upstream, pulled in sorted(self.plan.images.items()):
            base, tag = _ref_parts(upstream)
            rows.append({
                "component": ", ".join(sorted(by_base.get(
                    base, ["acceptance checks" if upstream in checks else "?"]))),
                "tag": tag,
                "upstream": upstream,
                "pulled": pulled,
                "source": f"mirror {mirror.name}" if mirror is not None and pulled != upstream else "public registry",
            })
        return rows

    # ------------------------------------------------------------------ deviations and acceptance Jobs

    def deviations(self) -> list[dict[str, Any]]:
        """The deliberate deviations the render plan records (``deviations.yaml``), with their reasons."""
        record = _doc(self.plan, f"{self.base}/deviations.yaml")
        if not isinstance(record, dict):
            return []
        out = []
        for d in record.get("deviations") or []:
            known = bool(d.get("defaultKnown", True))
            out.append({
                "target": d.get("target") or "", "pool": d.get("pool") or "", "path": d.get("path") or "",
                "value": _compact(d.get("value")),
                "default": _compact(d.get("chartDefault")) if known else "",
                "default_known": known,
                "reason": d.get("reason") or "", "owner": d.get("owner") or "", "ticket": d.get("ticket") or "",
                "source": (d.get("source") or {}).get("path", ""),
            })
        return out

    def accepted(self) -> list[dict[str, Any]]:
        """Everything this cluster accepts: the findings policy exceptions accept, every other rule of its live
        exceptions and its inline suppressions -- rule, where, what, reason, owner, until when, written where."""
        out = []
        for a in self.plan.accepted:
            by = a.get("acceptedBy") or {}
            source = (f"{by['file']}:{by['line']}" if "line" in by else f"{by['file']} ({by['path']})") if by else ""
            out.append({
                "rule": a.get("rule") or "", "message": a.get("message") or "", "path": a.get("path") or "",
                "scope": a.get("scope") or "", "suppression": a.get("kind") == "suppression",
                "reason": a.get("reason") or "", "owner": a.get("owner") or "", "expires": a.get("expires") or "",
                "source": source,
            })
        return out

    def acceptance_jobs(self) -> list[dict[str, Any]]:
        """The rendered acceptance Jobs: per pool, what each container requests and how the GitOps tool runs it."""
        jobs = []
        prefix = f"{self.base}/acceptance/"
        for path in sorted(p for p in self.plan.files if p.startswith(prefix)):
            for doc in _docs(self.plan, path):
                if not isinstance(doc, dict) or doc.get("kind") != "Job":
                    continue
                meta = doc["metadata"]
                pod = doc["spec"]["template"]["spec"]
                containers = [*pod.get("initContainers", []), *pod.get("containers", [])]
                requests = [f"{n}: {v}" for c in containers
                            for n, v in sorted((c.get("resources", {}).get("limits") or {}).items()) if "/" in n]
                hook = (meta.get("annotations") or {}).get("argocd.argoproj.io/hook", "")
                jobs.append({
                    "pool": (meta.get("labels") or {}).get("gpuspec.io/pool", ""), "name": meta["name"],
                    "check": (meta.get("labels") or {}).get("gpuspec.io/check", ""),
                    "pods": doc["spec"].get("parallelism", 1),
                    "namespace": meta.get("namespace", ""), "requests": requests,
                    "image": containers[0]["image"] if containers else "",
                    "runs": f"Argo CD {hook} hook" if hook else "Flux Kustomization after the overlay",
                    "file": f"{self.root}/{path}",
                })
        return jobs

    # ------------------------------------------------------------------ RBAC

    def rbac(self) -> list[dict[str, Any]]:
        out = []
        docs = _docs(self.plan, f"{self.base}/rbac.yaml")
        bindings: dict[tuple[str, str], list[Any]] = {}
        for d in docs:
            if "roleRef" in d:
                bindings.setdefault((d["roleRef"]["kind"], d["roleRef"]["name"]), []).append(d)
        for doc in docs:
            if doc["kind"] not in ("Role", "ClusterRole"):
                continue
            bound = bindings.get((doc["kind"], doc["metadata"]["name"]), [])
            subjects = list(dict.fromkeys(f"{s['kind']} {s['name']}" for b in bound for s in b.get("subjects", [])))
            scope = f"namespace {doc['metadata']['namespace']}" if "namespace" in doc["metadata"] else "cluster-wide"
            namespaces = [b["metadata"]["namespace"] for b in bound if b["kind"] == "RoleBinding"]
            if doc["kind"] == "ClusterRole" and namespaces and all(b["kind"] == "RoleBinding" for b in bound):
                scope = "namespaces " + ", ".join(namespaces)
            out.append({
                "kind": doc["kind"], "name": doc["metadata"]["name"],
                "scope": scope,
                "subjects": subjects,
                "rules": [{"groups": [g or "core" for g in r["apiGroups"]], "resources": list(r["resources"]),
                           "verbs": list(r["verbs"])} for r in doc["rules"]],
            })
        return out

    # ------------------------------------------------------------------ update policy and rollback

    def update(self) -> dict[str, Any]:
        r = self.cluster.rollout
        policy = self.values.get("driver", {}).get("upgradePolicy", {})
        canary = self.cluster.pool(r.canary_pool) if r.canary_pool else None
        waves: dict[int, list[str]] = {}
        for pool in self.cluster.pools:
            if pool is not canary:
                waves.setdefault(pool.wave, []).append(pool.name)
        order = ([{"step": "canary", "pools": [canary.name]}] if canary else []) + [
            {"step": f"pool wave {w}", "pools": sorted(names)} for w, names in sorted(waves.items())]
        rules = []
        for entry in UPDATE_RULES:
            setting = self.rules.get(entry.id)
            params = dict(setting.params) if setting else entry.defaults()
            rules.append({
                "id": entry.id, "title": entry.title, "rationale": entry.rationale,
                "severity": setting.severity if setting else entry.severity.value,
                "enabled": setting.enabled if setting else True,
                "params": [{"name": k, "value": json.dumps(v)} for k, v in sorted(params.items())],
                "stage": "lint --base (change set)" if entry in changeset.ENTRIES else "lint",
            })
        return {
            "fleet_wave": r.wave,
            "canary_pool": r.canary_pool or "",
            "order": order,
            "auto_upgrade": _scalar(policy.get("autoUpgrade", r.auto_upgrade)),
            "max_parallel_upgrades": policy.get("maxParallelUpgrades", r.max_parallel_upgrades),
            **self._max_unavailable(policy.get("maxUnavailable", r.max_unavailable)),
            "wait_for_completion": {
                "selector": str(policy.get("waitForCompletion", {}).get("podSelector") or ""),
                "timeout_seconds": policy.get("waitForCompletion", {}).get("timeoutSeconds", 0),
            },
            "drain": _scalars(policy.get("drain")),
            "pod_deletion": _scalars(policy.get("gpuPodDeletion")),
            "values_key": "driver.upgradePolicy",
            "reload": [{"pool": p.name, "text": reload_procedure(self.cluster, p)} for p in self.cluster.pools
                       if p.driver.source is not DriverSource.HOST],
            "rules": rules,
            "durations": self._durations(),
            "window": r.window.describe() if r.window else "",
            "per_node": {"driver_reload": r.per_node_seconds.driver_reload,
                         "operand_restart": r.per_node_seconds.operand_restart,
                         "mig_repartition": r.per_node_seconds.mig_repartition},
        }

    def _durations(self) -> list[dict[str, str]]:
        """Worst-case duration of a driver reload per pool (and of a MIG repartition on MIG pools), and of a
        driver reload of every pool at once."""
        out: list[dict[str, str]] = []
        scopes = context_scopes(self.cluster, self.ctx)
        for pool in self.cluster.pools:
            kinds = [Disruption.DRIVER_RELOAD] if operator_driver(pool) else []
            if pool.mig.strategy is not MigStrategy.NONE:
                kinds.append(Disruption.MIG_REPARTITION)
            for kind in kinds:
                estimate = estimate_duration(self.cluster, pool, kind, scopes=scopes)
                out.append({"what": f"{kind.value} of pool {pool.name}", "pool": pool.name, "kind": kind.value,
                            "text": estimate.text, "explanation": estimate.explanation})
        if sum(1 for p in self.cluster.pools if operator_driver(p)) > 1:
            estimate = estimate_duration(self.cluster, None, Disruption.DRIVER_RELOAD, scopes=scopes)
            out.append({"what": "driver-reload of every pool", "pool": "", "kind": Disruption.DRIVER_RELOAD.value,
                        "text": estimate.text, "explanation": estimate.explanation})
        return out

    def _max_unavailable(self, value: Any) -> dict[str, str]:
        """maxUnavailable as the chart writes it into the ClusterPolicy, and a note when that differs."""
        intent = chart_intent(self.ctx.facts.tag)
        if intent is None:
            return {"max_unavailable": str(value), "max_unavailable_note": ""}
        written, template = written_value(intent, "driver.upgradePolicy.maxUnavailable", value)
        note = (f"the values say {value}; {template} at {intent.release} writes {written} (GS508)"
                if str(written) != str(value) else "")
        return {"max_unavailable": str(written), "max_unavailable_note": note}

    def rollback(self) -> dict[str, Any]:
        facts = self.ctx.facts
        pools = []
        for pool in self.cluster.pools:
            driver = self.driver_of(pool)
            before = driver["version"] or f"preinstalled ({pool.os.distribution} {pool.os.version} image)"
            if driver["source"] != DriverSource.HOST.value:
                before = f"{driver['version']} ({driver['source']})"
            entry = {"pool": pool.name, "driver": before,
                     "driver_note": driver_rollback(driver["image"] or None, before, self.fleet, self.cluster, pool),
                     "mig": "", "mig_note": ""}
            if pool.mig.strategy is not MigStrategy.NONE:
                entry["mig"] = mig_text(pool.mig)
                entry["mig_note"] = mig_rollback(mig_text(pool.mig))
            pools.append(entry)
        return {
            "operator": facts.tag,
            "chart_version": facts.chart_version,
            "operator_note": operator_rollback(facts.tag, "newer", self.cluster),
            "pools": pools,
            "keep_images": sorted(set(self.plan.images.values())),
            "mirror": self.ctx.mirror.name if self.ctx.mirror else "",
        }

    # ------------------------------------------------------------------ alerts

    def alerts(self) -> dict[str, Any]:
        if self._alerts is None:
            self._alerts = self._alert_rules()
        return self._alerts

    def _alert_rules(self) -> dict[str, Any]:
        doc = _doc(self.plan, f"{self.base}/monitoring/alerts.yaml")
        if doc is None:
            return {"name": "", "rules": []}
        rules = [
            {"alert": r["alert"], "expr": r["expr"], "for": r["for"], "severity": r["labels"]["severity"],
             "summary": r["annotations"]["summary"], "description": r["annotations"]["description"],
             "team": r["labels"].get(TEAM_LABEL, ""), "pool": r["labels"].get(POOL_LABEL, ""),
             "receiver": receiver_of(self.ctx, r["labels"].get(TEAM_LABEL, "")),
             "scope": alert_scope(self.ctx, r["alert"], r["labels"].get(POOL_LABEL, ""))}
            for group in doc["spec"]["groups"] for r in group["rules"]
        ]
        return {"name": doc["metadata"]["name"], "namespace": doc["metadata"]["namespace"], "rules": rules,
                "dcgm_job": DCGM_JOB, "route": alertmanager_route(self.ctx, rules),
                "routing_labels": [CLUSTER_LABEL, TEAM_LABEL, POOL_LABEL, "severity"]}

    # ------------------------------------------------------------------ failures and acceptance

    def failures(self, pools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        ns = self.ns
        chain = self.chain()
        tenant_ns = self.cluster.tenants[0].namespaces[0] if self.cluster.tenants else "<namespace>"
        driver_ds = chain["driver_daemonset"]
        driver_pods = (["-l", f"app={operands.DRIVER_DAEMONSET}"] if self.ctx.driver_mode == "clusterpolicy"
                       else ["-l", "app.kubernetes.io/component=nvidia-driver"])
        out: list[dict[str, Any]] = [
            {"title": "A job does not see the GPU (pod Pending, or no device in the container)",
             "steps": [
                 ("Why the pod is not scheduled (quota, taints, resources)",
                  [_cmd("kubectl", "-n", tenant_ns, "describe", "pod", "<pod>")]),
                 ("What the pool's nodes advertise",
                  [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-o",
                        "custom-columns=NODE:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu,"
                        "PRODUCT:.metadata.labels.nvidia\\.com/gpu\\.product") for p in pools]),
                 ("The device plugin on that node",
                  [_cmd("kubectl", "-n", ns, "get", "pods", "-l", "app=nvidia-device-plugin-daemonset", "-o", "wide"),
                   _cmd("kubectl", "-n", ns, "logs", "-l", "app=nvidia-device-plugin-daemonset", "--tail=50")]),
                 ("Tenant quota", [_cmd("kubectl", "-n", ns_name, "describe", "resourcequota", quota)
                                   for ns_name, quota in self.quotas()]),
             ]},
            {"title": "A GPU node is not ready (driver not loaded, validation stuck, upgrade failed)",
             "steps": [
                 ("Node state, driver upgrade state and operand deploy labels",
                  [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-L",
                        f"{UPGRADE_STATE},nvidia.com/gpu.deploy.driver") for p in pools]),
                 ("Driver pods" + (f" (DaemonSet {driver_ds})" if driver_ds else ""),
                  [_cmd("kubectl", "-n", ns, "get", "pods", *driver_pods, "-o", "wide")] if driver_ds else []),
                 ("Operator and validator",
                  [_cmd("kubectl", "get", "clusterpolicies.nvidia.com", operands.CLUSTER_POLICY,
                        "-o", "jsonpath={.status.state}"),
                   *([_cmd("kubectl", "get", "nvidiadrivers.nvidia.com")] if self.ctx.driver_mode == "nvidiadriver"
                     else []),
                   _cmd("kubectl", "-n", ns, "logs", f"deployment/{operands.OPERATOR_DEPLOYMENT}", "--tail=100"),
                   _cmd("kubectl", "-n", ns, "get", "pods", "-l", "app=nvidia-operator-validator", "-o", "wide")]),
             ]},
            {"title": "Metrics do not match (no DCGM series, alerts silent, counts differ from the spec)",
             "steps": [
                 ("Exporter pods, Service and ServiceMonitor",
                  [_cmd("kubectl", "-n", ns, "get", "pods,services,servicemonitors", "-l", f"app={DCGM_JOB}")]),
                 ("The exporter's own output on one node",
                  [_cmd("kubectl", "-n", ns, "port-forward", f"service/{DCGM_JOB}", "9400:9400")]),
                 ("The rendered alert rules are installed",
                  [_cmd("kubectl", "-n", ns, "get", "prometheusrules.monitoring.coreos.com", self.alerts()["name"])]
                  if self.alerts()["name"] else []),
                 ("Node state against the spec",
                  [_cmd("kubectl", "get", "nodes", "-o", "json") + " > nodes.json",
                   _cmd("gpuspec", "audit", "--cluster", self.cluster.name, "--nodes", "nodes.json")]),
             ]},
        ]
        mig_pools = [p for p in pools if p["mig"]["layout"]]
        if mig_pools:
            out.append({"title": "MIG layout not applied (resources missing, mig.config.state failed)", "steps": [
                ("Requested layout and its state",
                 [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-L", f"{MIG_CONFIG},{MIG_STATE}")
                  for p in mig_pools]),
                ("MIG manager", [_cmd("kubectl", "-n", ns, "logs", "-l", "app=nvidia-mig-manager", "--tail=100")]
                 + ([_cmd("kubectl", "-n", ns, "get", "configmap", self.ctx.mig_configmap, "-o", "yaml")]
                    if self.ctx.custom_mig else [])),
            ]})
        shared = [p for p in pools if p["sharing"]["config"]]
        if shared:
            out.append({"title": "GPU sharing not applied (replicas not advertised)", "steps": [
                ("Selected sharing config and what GFD reports",
                 [_cmd("kubectl", "get", "nodes", "-l", p["selector"], "-L",
                       f"{DEVICE_PLUGIN_CONFIG_LABEL},{GPU_REPLICAS},{SHARING_STRATEGY}") for p in shared]),
                ("The config the device plugin reads (it does not watch it: restart the DaemonSet after a change)",
                 [_cmd("kubectl", "-n", ns, "get", "configmap", self.ctx.device_plugin_configmap, "-o", "yaml"),
                  _cmd("kubectl", "-n", ns, "rollout", "restart", "daemonset/nvidia-device-plugin-daemonset")]),
            ]})
        gitops = self.gitops()
        if self.cluster.gitops.tool == "argocd":
            apps = [o["name"] for o in gitops["objects"] if o["kind"] == "Application"]
            sync = [_cmd("kubectl", "-n", gitops["controller_namespace"], "get", "applications.argoproj.io", *apps)]
        else:
            sync = [_cmd("kubectl", "-n", gitops["controller_namespace"], "get",
                         "helmreleases.helm.toolkit.fluxcd.io,kustomizations.kustomize.toolkit.fluxcd.io",
                         "-l", f"gpuspec.io/cluster={self.cluster.name}")]
        out.append({"title": "A change in git did not reach the cluster", "steps": [
            ("GitOps objects of this cluster", sync),
            ("The rendered output is current", [_cmd("gpuspec", "render", "--check")]),
        ]})
        for item in out:
            item["steps"] = [{"what": what, "commands": cmds} for what, cmds in item["steps"] if cmds]
        return out

    def acceptance(self, pools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        ns = self.ns
        gitops = self.gitops()
        checks: list[dict[str, Any]] = []
        if self.cluster.gitops.tool == "argocd":
            apps = [o["name"] for o in gitops["objects"] if o["kind"] == "Application"]
            checks.append({"check": "The GitOps applications are synced and healthy", "commands": [
                _cmd("kubectl", "-n", gitops["controller_namespace"], "get", "applications.argoproj.io", *apps)]})
        else:
            checks.append({"check": "The Flux HelmRelease and Kustomizations are ready", "commands": [
                _cmd("kubectl", "-n", gitops["controller_namespace"], "get",
                     "helmreleases.helm.toolkit.fluxcd.io,kustomizations.kustomize.toolkit.fluxcd.io",
                     "-l", f"gpuspec.io/cluster={self.cluster.name}")]})
        checks.append({"check": f"ClusterPolicy {operands.CLUSTER_POLICY} reports ready", "commands": [
            _cmd("kubectl", "get", "clusterpolicies.nvidia.com", operands.CLUSTER_POLICY, "-o",
                 "jsonpath={.status.state}")]})
        if self.ctx.driver_mode == "nvidiadriver":
            drivers = ", ".join(self.nvidiadriver_names())
            checks.append({"check": f"Every NVIDIADriver reports ready: {drivers}",
                           "commands": [_cmd("kubectl", "get", "nvidiadrivers.nvidia.com")]})
        checks.append({"check": f"Every pod in namespace {ns} is Running or Completed", "commands": [
            _cmd("kubectl", "-n", ns, "get", "pods", "-o", "wide")]})
        for p in pools:
            checks.append({
                "check": f"Pool {p['name']}: {p['nodes']} node(s) Ready, each advertising {p['resources_text']}",
                "commands": [_cmd("kubectl", "get", "nodes", "-l", p["selector"])],
            })
        checks.append({"check": "The exported node state matches the spec (no findings)", "commands": [
            _cmd("kubectl", "get", "nodes", "-o", "json") + " > nodes.json",
            _cmd("kubectl", "get", "clusterpolicies.nvidia.com,nvidiadrivers.nvidia.com", "-o", "json")
            + " > operator.json",
            _cmd("gpuspec", "audit", "--cluster", self.cluster.name, "--nodes", "nodes.json",
                 "--clusterpolicies", "operator.json")]})
        exporter = self.values.get("dcgmExporter", {})
        if exporter.get("enabled") and exporter.get("serviceMonitor", {}).get("enabled"):
            # Only where the chart's ServiceMonitor has Prometheus scrape the exporter: else no target to count.
            total = sum(p["nodes"] for p in pools)
            checks.append({"check": f"Prometheus scrapes {total} DCGM exporter target(s) (one per GPU node)",
                           "commands": [], "promql": f'count(up{{job="{DCGM_JOB}",namespace="{ns}"}} == 1)'})
        for item in checks:
            item.setdefault("promql", "")
        jobs = self.acceptance_jobs()
        namespaces = sorted({j["namespace"] for j in jobs})
        job_commands = [_cmd("kubectl", "-n", n, "get", "jobs", "-l", "gpuspec.io/acceptance=true") for n in namespaces]
        job_commands += [_cmd("kubectl", "-n", j["namespace"], "logs", f"job/{j['name']}", "--all-containers")
                         for j in jobs]
        return {"checks": checks, "jobs": jobs, "job_commands": job_commands}

    def migration(self) -> dict[str, Any]:
        """How hand-configured nodes move onto the spec: per pool the batch size (its maxUnavailable over its
        declared nodes, never the whole pool), the drain command, the unmanaged pools."""
        from gpuspec.audit.migrate import drain_command, pool_budget
        from gpuspec.model.cluster_specs import DrainSpec

        rollout = self.cluster.rollout
        pools = []
        for pool in self.cluster.pools:
            if pool.nodes:
                budget = pool_budget(pool, rollout.max_unavailable, pool.nodes, ())
                pools.append({"name": pool.name, "nodes": pool.nodes, "batch": budget.size})
        return {
            "pools": pools,
            "max_unavailable": str(rollout.max_unavailable),
            "drain": drain_command("<node>", rollout.drain or DrainSpec()),
            "unmanaged": [p.name for p in self.cluster.pools if not p.managed],
            "command": f"gpuspec migrate --cluster {self.cluster.name} --nodes nodes.json --format markdown",
        }

    def build(self) -> dict[str, Any]:
        pools = self.pools()
        facts = {
            "cluster": self.overview(),
            "owners": ownership_facts(self.ctx),
            "pools": pools,
            "tenants": self.tenants(),
            "priority_classes": self.priority_classes(),
            "chain": self.chain(),
            "images": self.images(),
            "deviations": self.deviations(),
            "accepted": self.accepted(),
            "rbac": self.rbac(),
            "update": self.update(),
            "rollback": self.rollback(),
            "migration": self.migration(),
            "alerts": self.alerts(),
            "failures": self.failures(pools),
            "acceptance": self.acceptance(pools),
        }
        return {**facts, **Runbook(self.ctx, self.plan, self.root, facts).build(pools)}


def cluster_facts(ctx: ClusterContext, plan: ClusterPlan, rules: Mapping[str, RuleSetting],
                  rendered_root: str = "rendered") -> dict[str, Any]:
    """Everything the handover document of one cluster states, from its context and compiled render plan."""
    return _Builder(ctx, plan, rules, rendered_root).build()
