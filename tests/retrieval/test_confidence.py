import pytest

from retrieval.confidence import distance_to_similarity, retrieval_confidence


def test_seed_worked_example():
    # the worked example of docs/answers.md, "Retrieval confidence": d = [0.20, 0.60, 1.00, 1.20, 1.80], L = 4 -> s1 0.90, mean 0.52, conc 1.0, length 0.67
    conf = retrieval_confidence([0.20, 0.60, 1.00, 1.20, 1.80], 4)
    assert conf == pytest.approx(0.90 * 1.0 * (4 / 6), abs=1e-9)
    assert round(conf, 2) == 0.60


def test_similarity_mapping_eq1():
    assert distance_to_similarity(0.2) == pytest.approx(0.9)
    assert distance_to_similarity(1.8) == pytest.approx(0.1)
    assert distance_to_similarity(2.5) == 0.0


def test_flat_short_query_is_penalised():
    flat = retrieval_confidence([0.8, 0.85, 0.9, 0.95, 1.0], 1)
    peaked = retrieval_confidence([0.1, 0.9, 1.0, 1.0, 1.1], 8)
    assert flat < 0.1 < 0.7 < peaked


def test_length_weight_floor_and_scale():
    d = [0.0, 2.0]  # s = [1, 0] -> concentration 0.5 -> conc_weight 1
    assert retrieval_confidence(d, 0) == pytest.approx(0.3)
    assert retrieval_confidence(d, 12) == pytest.approx(1.0)
    assert retrieval_confidence(d, 3, concentration_scale=1.0) == pytest.approx(0.5 * 0.5)


def test_empty_and_invalid():
    assert retrieval_confidence([], 5) == 0.0
    with pytest.raises(ValueError, match="positive"):
        retrieval_confidence([0.1], 3, concentration_scale=0)
