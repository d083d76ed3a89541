"""A bounded fuzz run of every command in the normal suite, and a replay of every input that once failed.

The long run (``python -m benchmarks.fuzz --inputs 100000``) saves each failing input under
``tests/hostile/fuzz_regressions/<id>/case.json``; once fixed, it stays here as a regression test.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks import fuzz

SAVED = fuzz.load_cases(fuzz.DEFAULT_SAVE)


def test_bounded_fuzz_run_of_every_command(tmp_path: Path) -> None:
    summary = fuzz.fuzz(inputs=100, seed=20261130, save=tmp_path, report=lambda _line: None, every=0)
    assert set(summary.by_command) == set(fuzz.COMMANDS)
    assert summary.failures == 0, summary.saved
    assert set(summary.exit_codes) <= {0, 1, 2} and len(summary.exit_codes) > 1


@pytest.mark.parametrize(("ident", "case"), SAVED, ids=[ident for ident, _ in SAVED])
def test_saved_fuzz_regression(ident: str, case: fuzz.Case) -> None:
    with fuzz.workspace() as ws:
        outcome = fuzz.run_case(ws, case)
    assert not outcome.problems, (ident, case.note, outcome.problems)


def test_the_oracle_catches_a_leak_and_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuspec.cli.common
    import gpuspec.pipeline.validate
    import gpuspec.report.text

    with fuzz.workspace() as ws:
        text = (ws.root / "fleet" / "clusters" / "train-east.yaml").read_text()
        planted = fuzz.Case(["validate"], {"fleet/clusters/train-east.yaml": {
            "kind": "text", "text": f"{text}password: {fuzz.CANARY}\n"}})
        assert fuzz.planted(planted) and fuzz.run_case(ws, planted).problems == []
        # With redaction switched off the same input leaks, and the oracle says so.
        monkeypatch.setattr(gpuspec.report.text, "redact_line", lambda line: line)
        monkeypatch.setattr(gpuspec.cli.common, "redact_findings", lambda findings, raw=None: list(findings))
        monkeypatch.setattr(gpuspec.cli.common, "redact_text", lambda text: text)
        assert "the canary credential reached the output" in fuzz.run_case(ws, planted).problems
        cut = fuzz.Case(["validate"], {"fleet/clusters/train-east.yaml": {
            "kind": "text", "text": f"{text}word: {fuzz.CANARY}\n"}})
        assert not fuzz.planted(cut)

        def broken(*_args: object, **_kwargs: object) -> None:
            raise RuntimeError("boom")

        monkeypatch.setattr(gpuspec.pipeline.validate, "validate_fleet", broken)
        crash = fuzz.run_case(ws, fuzz.Case(["validate"]))
        assert any(p.startswith("internal error") for p in crash.problems)


def test_the_harness_keeps_nothing_of_a_run() -> None:
    # A long fuzz run is judged by each run's memory, so the harness itself must not grow from run to run.
    import gc
    import io

    with fuzz.workspace() as ws:
        case = fuzz.Case(["validate", "--format", "json"])
        fuzz.run_case(ws, case)
        gc.collect()
        before = sum(isinstance(o, io.StringIO) for o in gc.get_objects())
        for _ in range(20):
            assert fuzz.run_case(ws, case).problems == []
        gc.collect()
        assert sum(isinstance(o, io.StringIO) for o in gc.get_objects()) == before


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="the per-run peak needs Linux's /proc")
def test_the_memory_oracle_judges_each_run_by_its_own_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuspec.pipeline.validate

    real = gpuspec.pipeline.validate.validate_fleet

    def hungry(*args: object, **kwargs: object) -> object:
        block = bytearray(256 * 1024**2)
        block[:: 4096] = b"x" * len(block[:: 4096])  # touch every page, so it is resident
        del block
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with fuzz.workspace() as ws:
        case = fuzz.Case(["validate"])
        fuzz.run_case(ws, case)
        monkeypatch.setattr(fuzz, "MEMORY_BOUND", fuzz._reset_peak() + 128 * 1024**2)
        monkeypatch.setattr(gpuspec.pipeline.validate, "validate_fleet", hungry)
        assert any(p.startswith("peak memory") for p in fuzz.run_case(ws, case).problems)
        monkeypatch.setattr(gpuspec.pipeline.validate, "validate_fleet", real)
        assert fuzz.run_case(ws, case).problems == []  # the earlier run's peak is not this one's


def test_mutators_change_their_input() -> None:
    rng = random.Random(1)
    for _ in range(20):
        _doc, note = fuzz.mutate_data({"a": [1, {"b": "c"}], "d": "e"}, rng)
        assert note
        _text, note = fuzz.mutate_text("a: 1\nb: [2]\nc: d\n", rng)
        assert note.startswith("text:")
