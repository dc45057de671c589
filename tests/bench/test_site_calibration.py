"""bench/site_calibration.py: what `python -m bot calibrate` gives a site, on the sets it was and was not fitted on."""

from __future__ import annotations

from bench.site_calibration import FITTED_ON, SETS, counts, markdown


def _result(i: int, answerable: bool, answer: str, abstained: bool, golds: list[str]) -> dict:
    return {"id": f"q{i}", "query": "q", "answer": answer, "abstained": abstained, "sources": [], "stop_reason": "x",
            "latency_ms": 1.0, "answerable": answerable, "golds": golds, "gold_match": "all", "turns": 1}


def test_counts_score_each_item_as_make_eval_does():
    results = [_result(1, True, "Skripsi 6 SKS [1]", False, ["6 SKS"]),
               _result(2, True, "Kerja praktik 2 SKS [1]", False, ["6 SKS"]),
               _result(3, True, "Maaf, saya belum menemukan …", True, ["6 SKS"]),
               _result(4, False, "Maaf …", True, []),
               _result(5, False, "Biaya wisuda … [1]", False, [])]
    assert counts(results) == {"correct": 1, "wrong": 1, "abstained": 1, "unscored": 0, "refused": 1,
                               "answered": 1, "answerable": 3, "unanswerable": 2}


def test_the_report_marks_the_fitted_sets_in_sample_and_reads_every_change_from_the_numbers():
    def c(correct, wrong, abstained, refused, unanswerable=12):
        return {"correct": correct, "wrong": wrong, "abstained": abstained, "refused": refused,
                "answered": unanswerable - refused, "answerable": correct + wrong + abstained,
                "unanswerable": unanswerable}

    before = {"dev": c(30, 2, 7, 13, 13), "informal": c(70, 5, 16, 20), "holdout": c(25, 8, 10, 6), "final": c(20, 9, 14, 8)}
    after = {"dev": c(33, 3, 3, 11, 13), "informal": c(75, 7, 9, 18), "holdout": c(27, 9, 7, 6), "final": c(24, 9, 10, 8)}
    text = markdown(before, after, {"before": 0.1884, "after": 0.1245, "fusion": False, "target_refusal": 0.8},
                    seconds=12.0, machine_line="- Machine: test")
    assert set(FITTED_ON) < set(SETS) and "0.1884 → 0.1245" in text and "\n- Machine: test\n" in text
    assert "| dev set (fitted on: in-sample) | 30 / 2 / 7 of 39 | 13 of 13 | 33 / 3 / 3 of 39 | 11 of 13 |" in text
    assert "| blind set B (held out) |" in text
    # the held-out sets get a sentence each, with signed changes; the fitted sets none
    assert "- Blind set B: answerable correct 20 → 24 of 43 (+4), wrong 9 → 9, unanswerable refused 8 → 8 of 12 (+0)." \
        in text
    assert "- Blind set A: answerable correct 25 → 27 of 43 (+2)" in text
    assert "- Dev set:" not in text and "- Informal set:" not in text
