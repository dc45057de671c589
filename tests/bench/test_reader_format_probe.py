"""The probe of layout and question form runs end to end on the shipped reader and reports every figure."""

import json


def test_probe_reports_layouts_and_question_forms(capsys):
    from bench.reader_format_probe import main

    assert main(["--limit", "4"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == {"answerable": 4, "unanswerable": 4}
    blocks = [report["prose"], report["lines"], *(report["asked"][k] for k in
                                                   ("as_written", "word_at_end", "no_question_word"))]
    for block in blocks:
        assert set(block) == {"span_correct", "mean_p_answerable", "mean_p_unanswerable", "answered_correctly",
                              "refused"}
        assert all(0.0 <= v <= 1.0 for v in block.values())
    # the question forms are read over the same questions: at most the sample, and at least one that opens with a
    # question word (most IDK-MRC questions do)
    asked = report["asked"]["questions"]
    assert 1 <= asked["answerable"] <= 4 and asked["unanswerable"] <= 4
