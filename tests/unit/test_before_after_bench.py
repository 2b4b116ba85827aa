"""bench/runner_before_after.py's order of runs: mirrored pairs, so a machine that drifts over
the runs favours neither code. No JVM."""

from __future__ import annotations

from bench.runner_before_after import round_order


def test_the_codes_take_turns_in_mirrored_pairs() -> None:
    runs = [code for number in range(1, 5) for code in round_order(number)]
    assert runs == ["before", "after", "after", "before"] * 2
    # each code's mean position in the sequence is the same: a linear drift cancels out
    positions = {code: [i for i, c in enumerate(runs) if c == code] for code in ("before", "after")}
    assert sum(positions["before"]) == sum(positions["after"])
