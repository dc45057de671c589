"""bench/fit_abstention.py: every source weighs the same in the fit."""

from __future__ import annotations

from bench.fit_abstention import balanced


def test_the_smaller_source_is_repeated_up_to_the_larger_one():
    rows = [{"source": "idkmrc-tune", "id": i} for i in range(200)] + [{"source": "sample-site-dev", "id": i} for i in range(52)]
    out = balanced(rows)
    counts = {s: sum(1 for r in out if r["source"] == s) for s in ("idkmrc-tune", "sample-site-dev")}
    assert counts["idkmrc-tune"] == 200 and counts["sample-site-dev"] == 52 * 4
    assert balanced(rows[:10]) == rows[:10]  # one source: unchanged


def _rows(source: str, n: int, seed: int, local_signal: float) -> list[dict]:
    """Replies of one source: "shared" tells right from wrong in every source; "local" only where
    ``local_signal`` > 0 (elsewhere it points the other way); "noise" never."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n):
        correct = i % 2 == 0
        y = 1.0 if correct else 0.0
        feats = {"shared": y + rng.gauss(0, 0.8), "local": local_signal * (y - 0.5) + rng.gauss(0, 0.5),
                 "noise": rng.gauss(0, 1)}
        out.append({"source": source, "id": f"{source}{i}", "answerable": True, "correct": correct, "features": feats,
                    "settled": "gate", "answer": "", "stop_reason": "", "anchors": None})
    return out


def test_transfer_selection_keeps_the_signal_that_holds_in_every_source():
    from bench.fit_abstention import select_features, transfer

    rows = _rows("wiki", 300, 1, 3.0) + _rows("site", 120, 2, -3.0)
    both = transfer(rows, ["shared", "local", "noise"], l2=1.0)
    assert set(both) == {"wiki", "site"} and all(0.0 <= v <= 1.0 for v in both.values())
    chosen, path = select_features(rows, ["shared", "local", "noise"], l2=1.0)
    assert "shared" in chosen and "local" not in chosen
    assert path[0]["dropped"] is None and path[0]["features"] == ["shared", "local", "noise"]
    # every step of the path is as good as the one before it, out of source
    assert all(b["mean"] >= a["mean"] for a, b in zip(path, path[1:], strict=False))


def test_folding_the_source_indicator_keeps_that_sources_probabilities():
    from bench.fit_abstention import SOURCE_FEATURE, fold_source
    from generation.calibration import Calibrator

    rows = _rows("wiki", 200, 3, 0.0) + _rows("site", 80, 4, 0.0)
    for r in rows[200:]:
        r["correct"] = r["correct"] or r["features"]["shared"] > 0.2  # the site's replies are right more often
    feats = [{**r["features"], SOURCE_FEATURE: float(r["source"] == "site")} for r in rows]
    model = Calibrator.fit(feats, [True] * len(rows), [r["correct"] for r in rows],
                           features=("shared", "noise", SOURCE_FEATURE))
    folded = fold_source(model)
    assert SOURCE_FEATURE not in folded.features and folded.threshold == model.threshold
    site = [f for f in feats if f[SOURCE_FEATURE] == 1.0]
    assert max(abs(a - b) for a, b in zip(model.probabilities(site), folded.probabilities(site), strict=True)) < 1e-9
    assert folded.meta == {**model.meta, "source_indicator_weight": folded.meta["source_indicator_weight"]}
    assert folded.meta["source_indicator_weight"] > 0  # the site base rate is higher here
