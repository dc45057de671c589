"""bench/fit_abstention.py: every source weighs the same in the fit."""

from __future__ import annotations

from bench.fit_abstention import balanced


def test_the_smaller_source_is_repeated_up_to_the_larger_one():
    rows = [{"source": "idkmrc-tune", "id": i} for i in range(200)] + [{"source": "sample-site-dev", "id": i} for i in range(52)]
    out = balanced(rows)
    counts = {s: sum(1 for r in out if r["source"] == s) for s in ("idkmrc-tune", "sample-site-dev")}
    assert counts["idkmrc-tune"] == 200 and counts["sample-site-dev"] == 52 * 4
    assert balanced(rows[:10]) == rows[:10]  # one source: unchanged
