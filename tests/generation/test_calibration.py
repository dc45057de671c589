"""The calibrated abstention model: fitting, the operating point, persistence, refitting on a site's data."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from generation.calibration import (
    DEFAULT_MODEL_PATH,
    FEATURES,
    Calibrator,
    LabelledReply,
    choose_threshold,
    figures,
    fit_logistic,
    operating_point,
    refit,
)


def _rows(n: int, seed: int = 7) -> tuple[list[dict[str, float]], list[bool], list[bool]]:
    """Synthetic replies: correct ones have high coverage; unanswerable ones miss an anchor."""
    rng = random.Random(seed)
    rows, answerable, correct = [], [], []
    for i in range(n):
        ans = i % 2 == 0
        good = ans and rng.random() < 0.8
        cov = rng.uniform(0.7, 1.0) if good else rng.uniform(0.2, 0.8)
        miss = rng.uniform(0.0, 0.3) if good else rng.uniform(0.3, 1.0)
        rows.append({f: rng.random() for f in FEATURES} | {"anchor_coverage": cov, "max_missing_anchor": miss})
        answerable.append(ans)
        correct.append(good)
    return rows, answerable, correct


def test_logistic_fit_separates_and_leaves_the_bias_unpenalised() -> None:
    x = np.array([[0.0, 1], [0.2, 1], [0.8, 1], [1.0, 1]])
    y = np.array([0, 0, 1, 1])
    w = fit_logistic(x, y, l2=0.1)
    p = 1 / (1 + np.exp(-(x @ w)))
    assert p[0] < 0.5 < p[3]
    assert w[0] > 0


def test_fitted_model_ranks_signals_the_right_way_and_meets_its_target() -> None:
    rows, answerable, correct = _rows(400)
    model = Calibrator.fit(rows, answerable, correct, target_refusal=0.8)
    w = dict(zip(model.features, model.weights, strict=False))
    assert w["anchor_coverage"] > 0 > w["max_missing_anchor"]
    p = model.probabilities(rows)
    point = operating_point(p, answerable, correct, model.threshold)
    assert point.refused_unanswerable >= 0.8
    # the lowest threshold that meets the target: one step lower misses it
    lower = max((v for v in p if v < model.threshold), default=None)
    if lower is not None:
        assert operating_point(p, answerable, correct, lower).refused_unanswerable < 0.8


def test_operating_point_counts() -> None:
    p = [0.9, 0.8, 0.2, 0.7, 0.1]
    answerable = [True, True, True, False, False]
    correct = [True, False, True, False, False]
    point = operating_point(p, answerable, correct, 0.5)
    assert point.answered_answerable == pytest.approx(2 / 3)
    assert point.correct_of_answered == pytest.approx(1 / 2)
    assert point.correct_answerable == pytest.approx(1 / 3)
    assert point.refused_unanswerable == pytest.approx(1 / 2)


def test_threshold_without_unanswerable_questions_maximises_right_minus_wrong() -> None:
    point = choose_threshold([0.9, 0.6, 0.3], [True, True, True], [True, True, False])
    assert 0.3 < point.threshold <= 0.6


def test_round_trip_and_clear_errors(tmp_path) -> None:
    rows, answerable, correct = _rows(100)
    model = Calibrator.fit(rows, answerable, correct)
    path = tmp_path / "m.json"
    model.save(path)
    again = Calibrator.load(path)
    assert again.threshold == pytest.approx(model.threshold, abs=1e-6)
    assert np.allclose(again.probabilities(rows), model.probabilities(rows), atol=1e-5)
    data = json.loads(path.read_text())
    data["weights"] = data["weights"][:-2]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="calibrate"):
        Calibrator.load(path)
    with pytest.raises(ValueError, match="cannot read"):
        Calibrator.load(tmp_path / "missing.json")


def _replies(rows, answerable, correct) -> list[LabelledReply]:
    return [LabelledReply(str(i), a, c, r, "gate", "", "") for i, (r, a, c) in enumerate(zip(rows, answerable, correct, strict=True))]


def test_refit_with_few_questions_moves_only_the_threshold() -> None:
    rows, answerable, correct = _rows(300)
    prior = Calibrator.fit(rows, answerable, correct, target_refusal=0.8)
    few = _replies(*_rows(12, seed=3))
    model, how = refit(few, prior=prior, target_refusal=1.0)
    assert how == "threshold"
    assert model.weights == prior.weights
    assert figures(few, model).refused_unanswerable == 1.0
    with pytest.raises(ValueError, match="too few"):
        refit(few, prior=None)


def test_refit_with_enough_questions_refits_the_weights_towards_the_prior() -> None:
    prior = Calibrator.fit(*_rows(300), target_refusal=0.8)
    site = _replies(*_rows(120, seed=11))
    model, how = refit(site, prior=prior, target_refusal=0.9)
    assert how == "weights+threshold"
    assert model.weights != prior.weights and model.features == prior.features
    assert figures(site, model).refused_unanswerable >= 0.9


def test_replies_settled_before_the_gate_keep_their_outcome() -> None:
    model = Calibrator.fit(*_rows(100))
    answered = LabelledReply("f", True, True, None, "answered", "x", "FACTS_LOOKUP")
    refused = LabelledReply("a", False, False, None, "abstained", "", "ABSTAIN_LOW_RETRIEVAL")
    assert answered.probability(model) == 1.0 and refused.probability(model) == 0.0


def test_the_bundled_model_is_valid_and_says_what_it_was_fitted_on() -> None:
    model = Calibrator.load(DEFAULT_MODEL_PATH)
    assert set(model.features) <= set(FEATURES)
    assert 0.0 < model.threshold < 1.0
    assert "idkmrc-tune" in model.meta["fitted_on"]


def test_a_signal_that_was_not_measured_adds_nothing_either_way() -> None:
    """When the LLM fails, its signals are missing, not "maximally uncertain": they take the training mean."""
    rows, answerable, correct = _rows(200)
    model = Calibrator.fit(rows, answerable, correct)
    row = dict(rows[0])
    at_mean = {**row, "llm_confidence": model.mean[model.features.index("llm_confidence")]}
    assert model.probability({**row, "llm_confidence": None}) == pytest.approx(model.probability(at_mean))
    gaps = [dict(r, llm_confidence=None) if i % 3 == 0 else r for i, r in enumerate(rows)]
    assert np.isfinite(Calibrator.fit(gaps, answerable, correct).weights).all()


def test_a_monotone_fit_keeps_every_signal_on_its_side() -> None:
    """Two collinear coverage signals: a free fit may give one a negative weight (it trades off against the
    other); the monotone fit pins it at 0 and says so."""
    rng = random.Random(3)
    rows, answerable, correct = [], [], []
    for i in range(400):
        good = rng.random() < 0.5
        cov = rng.uniform(0.6, 1.0) if good else rng.uniform(0.0, 0.7)
        # sentence coverage: coverage plus noise that is *anti*-correlated with correctness once coverage is known
        sent = min(1.0, cov + (rng.uniform(-0.05, 0.05) if good else rng.uniform(0.1, 0.3)))
        rows.append({f: 0.5 for f in FEATURES} | {"anchor_coverage": cov, "sentence_coverage": sent})
        answerable.append(True if good else i % 2 == 0)
        correct.append(good)
    free = dict(zip(FEATURES, Calibrator.fit(rows, answerable, correct).weights, strict=False))
    assert free["sentence_coverage"] < 0  # the free fit goes against the signal's meaning
    model = Calibrator.fit(rows, answerable, correct, monotone=True)
    w = dict(zip(FEATURES, model.weights, strict=False))
    assert w["sentence_coverage"] == 0.0 and w["anchor_coverage"] > 0
    assert model.meta["pinned_at_zero"] == ["sentence_coverage"] and model.meta["monotone"] is True
    # a refit on a site's data keeps the constraint the shipped model was fitted with
    replies = [LabelledReply(str(i), a, c, r, "gate", "", "") for i, (r, a, c) in enumerate(zip(rows, answerable, correct, strict=True))]
    refitted, how = refit(replies, prior=model)
    assert how == "weights+threshold"
    assert dict(zip(FEATURES, refitted.weights, strict=False))["sentence_coverage"] >= 0


def test_reweighing_soft_anchors_recomputes_the_coverage_signals() -> None:
    from generation.calibration import reweigh_anchors

    table = [{"stem": "skripsi", "weight": 2.0, "soft": False, "chunk": True, "sentence": True},
             {"stem": "mulai", "weight": 0.2, "soft": True, "chunk": False, "sentence": False},
             {"stem": "bimbing", "weight": 1.0, "soft": False, "chunk": True, "sentence": False}]
    feats = {"anchor_coverage": 3.0 / 3.2, "sentence_coverage": 2.0 / 3.2, "max_missing_anchor": 0.1, "top_cosine": 0.7}
    same = reweigh_anchors(feats, table, 0.2, 0.2)
    assert same["anchor_coverage"] == pytest.approx(feats["anchor_coverage"])
    assert same["max_missing_anchor"] == pytest.approx(0.1)
    heavier = reweigh_anchors(feats, table, 1.0, 0.2)
    assert heavier["anchor_coverage"] == pytest.approx(3.0 / 4.0)
    assert heavier["sentence_coverage"] == pytest.approx(2.0 / 4.0)
    assert heavier["max_missing_anchor"] == pytest.approx(0.5)
    assert heavier["top_cosine"] == 0.7
    assert reweigh_anchors(feats, [], 1.0, 0.2) == feats
