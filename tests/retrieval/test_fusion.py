import numpy as np
import pytest

from retrieval.fusion import minmax, mmr_select, normalize, rrf, weighted_sum, zscore


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


def test_zscore_and_normalize_dispatch():
    z = zscore(np.array([1.0, 2.0, 3.0]))
    assert z.mean() == pytest.approx(0.0) and z.std() == pytest.approx(1.0) and z[2] > z[1] > z[0]
    assert zscore(np.array([4.0, 4.0])).tolist() == [0.0, 0.0]
    assert zscore(np.zeros(0)).size == 0
    assert normalize(np.array([2.0, 4.0]), "minmax").tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="minmax, zscore"):
        normalize(np.array([1.0]), "rank")


def test_weighted_sum_with_zscore():
    dense = np.array([0.90, 0.89, 0.20])
    bm25 = np.array([1.0, 3.0, 0.0])
    fused = weighted_sum(dense, bm25, 0.65, "zscore")
    assert fused == pytest.approx(0.65 * zscore(dense) + 0.35 * zscore(bm25))
    assert weighted_sum(dense, bm25, 1.0, "zscore").argmax() == 0
    assert weighted_sum(dense, bm25, 0.0, "zscore").argmax() == 1
    assert weighted_sum(dense, bm25, 0.5).tolist() == pytest.approx(  # min-max stays the default normalisation
        (0.5 * minmax(dense) + 0.5 * minmax(bm25)).tolist())


def test_config_rejects_an_unknown_normalisation():
    from retrieval.config import RetrievalConfig

    with pytest.raises(ValueError, match="FUSION_NORM"):
        RetrievalConfig(fusion_norm="max")
