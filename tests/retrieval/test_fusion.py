import numpy as np
import pytest

from retrieval.fusion import minmax, mmr_select, rrf, weighted_sum


def test_minmax_and_weighted_sum():
    assert minmax(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert minmax(np.array([5.0, 5.0])).tolist() == [1.0, 1.0]
    fused = weighted_sum(np.array([0.9, 0.8, 0.7]), np.array([0.0, 10.0, 5.0]), 0.5)
    assert fused.tolist() == pytest.approx([0.5, 0.75, 0.25])


def test_rrf_rewards_agreement():
    scores = rrf([np.array([0, 1, 2]), np.array([1, 0])], 3, k=60)
    assert scores[0] == scores[1] == 1.0 and scores[2] < scores[0]


def test_mmr_page_cap_dedup_and_diversity():
    vectors = np.eye(4, dtype=np.float32)[[0, 0, 0, 1, 2]]  # three near-duplicates of one direction
    rel = np.array([1.0, 0.99, 0.98, 0.5, 0.4])
    groups = ["a", "a", "a", "b", "c"]
    hashes = ["h1", "h2", "h3", "h4", "h5"]
    plain = mmr_select(rel, vectors, groups, hashes, 5, diversity=0.0, max_per_group=2)
    assert plain == [0, 1, 3, 4]  # relevance order, third chunk of page "a" capped
    diverse = mmr_select(rel, vectors, groups, hashes, 3, diversity=0.45, max_per_group=2)
    assert diverse[0] == 0 and set(diverse[1:]) == {3, 4}  # the near-duplicate loses to other pages
    dedup = mmr_select(rel, vectors, ["a", "b", "c", "d", "e"], ["x", "x", "y", "z", "w"], 5, diversity=0.0)
    assert 1 not in dedup and len(dedup) == 4
