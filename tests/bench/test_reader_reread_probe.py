"""The second-read probe runs end to end on the shipped reader and reports each kind of question at every bar."""

import json

import pytest

from bench.reader_reread_probe import BARS, sentence_ranges


def test_sentence_ranges_point_at_the_sentences():
    passage = "Dibuka tahun 2004. Akreditasi A pada 2014.\nLokasi: Gedung B, Lt. 2"
    ranges = sentence_ranges(passage)
    assert [passage[a:b] for a, b in ranges] == ["Dibuka tahun 2004.", "Akreditasi A pada 2014.", "Lokasi: Gedung B, Lt. 2"]


@pytest.mark.slow  # loads the learned reader and reads IDK-MRC passages
def test_probe_reports_every_kind_at_every_bar(capsys):
    from bench.reader_reread_probe import main

    assert main(["--limit", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    alone = report["quoted sentence alone"]
    assert set(alone) == {"single", "pair", "unanswerable"}
    assert all(row["n"] <= 3 and row["second_added"] == 0 for row in alone.values())
    assert all(row["all_golds"] == 0 for row in (alone["unanswerable"], report[f"second sentence at p >= {BARS[0]}"]["unanswerable"]))
    # a lower bar adds a sentence to at least as many replies, and a reply that gains text loses no gold it held
    for kind in alone:
        added = [report[f"second sentence at p >= {b}"][kind]["second_added"] for b in BARS]
        golds = [alone[kind]["all_golds"]] + [report[f"second sentence at p >= {b}"][kind]["all_golds"] for b in BARS]
        assert added == sorted(added) and golds == sorted(golds)
