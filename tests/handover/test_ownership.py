"""The handover documents name the owners from the spec: contacts, roles and the receiver of each alert."""

from __future__ import annotations

from pathlib import Path

import yaml

from .helpers import REPO_ROOT, copy_example, documents, section, tables, unquote

FLEET = yaml.safe_load((REPO_ROOT / "fleet" / "fleet.yaml").read_text(encoding="utf-8"))
TEAMS = {t["name"]: t for t in FLEET["teams"]}


def _doc(name: str) -> str:
    return (REPO_ROOT / "rendered" / "handover" / f"{name}.md").read_text(encoding="utf-8")


def test_contacts_come_from_the_spec() -> None:
    rows = {r["Role"]: r for r in tables(section(_doc("infer-north"), "Contacts"))[0]}
    assert unquote(rows["platform"]["Team"]) == "gpu-platform"
    assert rows["platform"]["On call"] == TEAMS["gpu-platform"]["onCall"]
    assert unquote(rows["platform"]["Alert receiver"]) == TEAMS["gpu-platform"]["receiver"]
    assert rows["platform"]["Escalation"].startswith("1. " + TEAMS["gpu-platform"]["escalation"][0])
    assert unquote(rows["hardware"]["Team"]) == "dc-north-ops"  # the cluster's override
    assert unquote(rows["observability"]["Team"]) == "sre-observability"
    pools = tables(section(_doc("infer-north"), "Contacts"))[1]
    assert [(unquote(p["Pool"]), unquote(p["Hardware team"])) for p in pools] == [("t4-batch", "gpu-hardware")]
    tenants = {unquote(t["Tenant"]): unquote(t["Team"]) for t in tables(section(_doc("infer-north"), "Contacts"))[2]}
    assert tenants == {"inference": "ml-serving", "batch": "ml-research"}


def test_each_alert_names_its_team_and_receiver() -> None:
    for name in ("infer-north", "train-east"):
        rule = yaml.safe_load((REPO_ROOT / "rendered" / "clusters" / name / "monitoring" / "alerts.yaml").read_text())
        rendered = sorted(
            (r["alert"], r["labels"]["team"], r["labels"].get("pool", "")) for r in rule["spec"]["groups"][0]["rules"]
        )
        rows = tables(section(_doc(name), "Monitoring and alerts"))[0]
        shown = sorted(
            (unquote(r["Alert"]), unquote(r["Team"]), unquote(r["Pool"]) if not r["Pool"].startswith("all") else "")
            for r in rows
        )
        assert shown == rendered
        for row in rows:
            assert unquote(row["Receiver"]) == TEAMS[unquote(row["Team"])]["receiver"]
        route = section(_doc(name), "Monitoring and alerts").split("```yaml\n", 1)[1].split("```", 1)[0]
        receivers = {r["receiver"] for r in yaml.safe_load(route)["routes"][0]["routes"]}
        assert receivers == {TEAMS[t]["receiver"] for _, t, _ in rendered}


def test_roles_table_lists_every_binding_of_a_role() -> None:
    rows = {r["Role"]: r for r in tables(section(_doc("train-east"), "Roles: who may change what"))[0]}
    viewer = rows["Role `gpuspec-gpu-operator-view`"]["Bound to"]
    assert "Group gpuspec:gpu-operator-viewers" in viewer and "Group acme:sre-observability" in viewer
    tenant = rows["ClusterRole `gpuspec-gpu-tenant-quota-view`"]
    assert tenant["Scope"] == "namespaces research-train, research-eval, notebooks"


def test_a_fleet_without_ownership_says_so(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    settings = yaml.safe_load((root / "fleet" / "fleet.yaml").read_text())
    del settings["ownership"]
    (root / "fleet" / "fleet.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    cluster = root / "fleet" / "clusters" / "infer-north.yaml"
    cluster.write_text(cluster.read_text().replace("ownership:\n  hardware: dc-north-ops\n", ""))
    doc = documents(root)["handover/infer-north.md"]
    contacts = section(doc, "Contacts")
    assert "No owners are recorded in the spec" in contacts
    assert "no owner" in section(doc, "Monitoring and alerts")
