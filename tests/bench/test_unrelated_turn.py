"""``python -m bench.unrelated_turn``: each single-turn item is asked after another item's question, never after
its own, the same pairs on every run, and the summary counts what changed."""

from __future__ import annotations

import pytest

from bench.unrelated_turn import SETS, derangement, single_turn, summary


def test_every_item_is_asked_after_another_one_the_same_on_every_run() -> None:
    for n in (2, 3, 44, 90):
        perm = derangement(n, seed=7)
        assert sorted(perm) == list(range(n))
        assert all(p != i for i, p in enumerate(perm))
        assert derangement(n, seed=7) == perm
    assert derangement(44, seed=7) != derangement(44, seed=8)
    with pytest.raises(ValueError):
        derangement(1, seed=7)


def test_the_sets_are_the_single_turn_items_and_blind_set_b_is_not_among_them() -> None:
    assert "final" not in SETS and all("final" not in name for name in SETS.values())
    for name in SETS:
        items = single_turn(name)
        assert len(items) > 20 and not any(it.get("conversation") for it in items)


def test_the_summary_counts_right_outcomes_lost_and_gained() -> None:
    rows = [{"id": "a", "after": "b", "alone": "correct", "after_outcome": "wrong", "same_reply": False},
            {"id": "b", "after": "c", "alone": "abstained", "after_outcome": "correct", "same_reply": False},
            {"id": "c", "after": "a", "alone": "refused", "after_outcome": "refused", "same_reply": True},
            {"id": "d", "after": "a", "alone": "refused", "after_outcome": "answered", "same_reply": False}]
    s = summary(rows)
    assert s["items"] == 4 and s["changed"] == 3 and s["reply_changed"] == 3
    assert s["right_lost"] == 2 and s["right_gained"] == 1
    assert s["alone"] == {"correct": 1, "abstained": 1, "refused": 2}
    assert s["after"] == {"correct": 1, "wrong": 1, "refused": 1, "answered": 1}
