"""A value that does not match a spec pattern is described in the spec's words, not as a regular expression."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.pipeline.validate import validate_fleet

INFER = "clusters/infer-north.yaml"


def _messages(fleet: Path) -> list[str]:
    return [f.message for f in validate_fleet(fleet, fleet.parent / "policies").findings if f.rule_id == "GS104"]


@pytest.mark.parametrize(("old", "new", "words"), [
    ('branch: "580"', 'branch: "58"', "'58' is not a driver branch such as \"580\""),
    ("name: infer-north", "name: Infer_North", "'Infer_North' is not a DNS-1123 label"),
])
def test_a_pattern_mismatch_reads_as_the_spec_s_words(fleet_copy: Path, old: str, new: str, words: str) -> None:
    path = fleet_copy / INFER
    path.write_text(path.read_text().replace(old, new, 1))
    assert any(m.startswith(words) for m in _messages(fleet_copy)), _messages(fleet_copy)


def test_the_example_fleet_has_no_pattern_mismatch(fleet_copy: Path) -> None:
    assert _messages(fleet_copy) == []
