"""The handover's update policy states each pool's worst-case driver reload and the maintenance window, from the
spec: changing the spec changes the sentences."""

from __future__ import annotations

from pathlib import Path

import yaml

from .helpers import copy_example, documents, section


def test_example_states_durations_and_window() -> None:
    docs = documents()
    north = section(docs["handover/infer-north.md"], "Update policy")
    assert "- driver-reload of pool `l40s`: ≤ 5h (NVIDIADriver default: 12 node(s), 1 at a time" in north
    assert "- driver-reload of every pool at once: ≤ 5h 25m" in north
    assert "Maintenance window: sat, sun 01:00 for 8h (Europe/Berlin)" in north
    east = section(docs["handover/train-east.md"], "Update policy")
    assert "- mig-repartition of pool `a100-mig`: ≤ 5m" in east
    assert "No maintenance window (`rollout.window`)" in east


def test_spec_settings_move_the_numbers(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    path = root / "fleet" / "clusters" / "infer-north.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["rollout"].update({"maxParallelUpgrades": 0, "maxUnavailable": "50%", "perNodeSeconds": {"driverReload": 300}})
    data["rollout"]["window"] = {"days": ["wed"], "start": "22:00", "length": "2h30m"}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    north = section(documents(root)["handover/infer-north.md"], "Update policy")
    # 50% of the 13 nodes of NVIDIADriver default = 7 (rounded up): 12 nodes in 2 batches of 300 + 600 + 300 s.
    assert "- driver-reload of pool `l40s`: ≤ 40m (NVIDIADriver default: 12 node(s), 7 at a time" in north
    assert "per node 300 s driver reload" in north
    assert "Maintenance window: wed 22:00 for 2h30m (UTC)" in north
