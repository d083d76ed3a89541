"""Hostile input must not make gpuspec hang: credential patterns run in linear time, overlapping pool
selectors give one finding per group without comparing every pair, and huge or endless files are never
read whole (see test_leaks for FIFOs and devices).  The time bounds are hang guards, far above real runs."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest
import yaml

from gpuspec.pipeline.lint import lint_fleet
from gpuspec.redaction import classify_value, redact_line, redact_text
from gpuspec.rules.overlap import overlapping_groups
from hostile.hostile_cli import make_repo

N = 240_000
ADVERSARIAL = [
    "a" * N,  # a scheme that never reaches "://"
    "a://" + "x:" * (N // 2),  # userinfo that never reaches "@"
    "a://x" * (N // 5),  # many schemes, no userinfo
    "-----BEGIN CERTIFICATE-----" * (N // 27),  # certificate starts, no private key
    "bearer " * (N // 7),
    "eyJ" * (N // 3),
    "password: " * (N // 10),
    "authorization: " * (N // 15),
    "Authorization: Basic " * (N // 21),
    "extraheader=" * (N // 12),
    "stableghp_" * (N // 10),
    "glpat-" * (N // 6),
    "AKIA" * (N // 4),
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_credential_patterns_are_linear(text: str) -> None:
    started = time.monotonic()
    classify_value(text)
    redact_text(text)
    redact_line(text)
    assert time.monotonic() - started < 2.0


def test_url_credentials_are_still_found() -> None:
    assert classify_value("see https://deploy:s3cr3t@git.example/x.git") == "a URL with user:password"
    assert classify_value("http://proxy.example:3128") is None
    assert classify_value("-----BEGIN CERTIFICATE-----\nMII...\n-----BEGIN RSA PRIVATE KEY-----") == \
        "a PEM private key"


def test_identical_selectors_form_one_group() -> None:
    groups = overlapping_groups([{"gpu": "true"}] * 5000)
    assert groups == [list(range(5000))]


def test_nested_and_disjoint_selectors() -> None:
    selectors = [{"pool": f"p{i}"} for i in range(3000)] + [{}]  # the empty selector matches every node
    assert overlapping_groups(selectors) == [list(range(3001))]
    assert overlapping_groups(selectors[:-1]) == []
    assert overlapping_groups(selectors[:-1], strict=True) == []
    mixed = [{"a": "1"}, {"a": "1", "b": "2"}, {"c": "3"}, {"a": "1", "c": "3"}, {"d": "4", "e": "5"}]
    assert overlapping_groups(mixed) == [[0, 1, 3], [2]] or overlapping_groups(mixed) == [[0, 1, 2, 3]]
    assert overlapping_groups(mixed, strict=True) == [[0, 1, 2, 3, 4]]
    assert overlapping_groups([{"k": "1", "z": "a"}, {"k": "2", "z": "a"}, {"k": "1"}], strict=True) == [[0, 2]]


def test_overlapping_pools_give_one_finding_per_group(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    path = root / "fleet" / "clusters" / "train-east.yaml"
    doc = yaml.safe_load(path.read_text())
    base = doc["pools"][0]
    pools = []
    for index in range(400):
        pool = copy.deepcopy(base)
        pool["name"] = f"p{index}"
        pool["nodeSelector"] = {"acme.example/gpu": "true"}
        pools.append(pool)
    doc["pools"] = pools
    doc["tenants"] = []
    doc["rollout"].pop("canary", None)
    path.write_text(yaml.safe_dump(doc))
    started = time.monotonic()
    result = lint_fleet(root / "fleet", root / "policies")
    assert time.monotonic() - started < 60  # hang guard: the pairwise version took 72 s
    overlap = [f for f in result.findings if f.rule_id == "GS705"]
    assert len(overlap) == 1
    assert "400 pools have overlapping node selectors" in overlap[0].message
