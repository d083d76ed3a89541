"""A file's packed state tells two stats apart exactly when one of the four fields differs."""

from __future__ import annotations

import itertools

from gpuspec.render.filestate import pack_state, state_size


def test_states_differ_when_any_field_does_and_keep_the_size() -> None:
    values = [0, 1, 2**32 + 7, 2**63 - 1, 2**64 - 1]
    states: dict[int, tuple[int, int, int, int]] = {}
    for fields in itertools.product(values, repeat=4):
        state = pack_state(*fields)
        assert states.setdefault(state, fields) == fields, "two different stats share a state"
        assert state_size(state) == fields[0]
    assert pack_state(5, -1_000_000_000, 3, 4) != pack_state(5, 1_000_000_000, 3, 4)  # a file dated before 1970

