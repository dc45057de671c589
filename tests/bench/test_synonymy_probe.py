"""bench.synonymy_probe: reading a MyThes thesaurus and counting what its synonyms would cover."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import idkmrc
from bench.synonymy_probe import load_thesaurus, main, probe_calibrator, probe_thesaurus
from generation.support import stem

# the MyThes layout LibreOffice's thesauri use: the encoding, then "word|n" and n lines "[pos]|synonym|…"
_DAT = "\n".join([
    "ISO-8859-1",
    "biaya|1",
    "[n]|anggaran|ongkos|uang kuliah",
    "kantor|2",
    "[n]|biro|sekretariat",
    "[ant]|rumah",
    "kantor besar|1",
    "[n]|pusat",
    "",
]).encode("iso-8859-1")


def _thesaurus(tmp_path: Path) -> Path:
    path = tmp_path / "th_id_ID_v2.dat"
    path.write_bytes(_DAT)
    return path


def test_the_thesaurus_maps_stems_to_single_word_synonyms_without_antonyms_or_phrases(tmp_path):
    th = load_thesaurus(_thesaurus(tmp_path))
    assert th[stem("biaya")] == {stem("anggaran"), stem("ongkos")}  # "uang kuliah" is a phrase
    assert th[stem("kantor")] == {stem("biro"), stem("sekretariat")}  # "[ant]|rumah" is an antonym
    assert "kantor besar" not in th and stem("pusat") not in th.get(stem("kantor"), set())


def test_the_probe_counts_a_question_whose_missing_word_has_a_synonym_in_its_passage(tmp_path):
    passage = idkmrc.Passage(n=0, context="Sekretariat program studi ada di gedung B lantai dua.", questions=(
        idkmrc.Question(id="a", question="Di mana kantor program studi?", answerable=True, answers=("gedung B",)),
        idkmrc.Question(id="u", question="Kapan ujian kriptografi program studi?", answerable=False, answers=()),
    ))
    counts = probe_thesaurus([passage], _thesaurus(tmp_path))
    assert counts["answerable"] == 1 and counts["unanswerable"] == 1
    assert counts["answerable: every missing anchor covered by a synonym"] == 1  # kantor → sekretariat
    assert counts["unanswerable: some anchor missing"] == 1  # kriptografi, ujian: no synonym on the page
    assert counts["unanswerable: every missing anchor covered by a synonym"] == 0


def test_without_a_thesaurus_the_probe_says_how_to_get_one(tmp_path, capsys):
    assert main(["--probe", "thesaurus", "--thesaurus", str(tmp_path / "none.dat")]) == 2
    assert "mythes-id" in capsys.readouterr().err


@pytest.mark.slow  # samples the IDK-MRC tune split and fits the calibrator twice: about a minute
@pytest.mark.skipif(not idkmrc.train_path().is_file(), reason="IDK-MRC train.json is absent (set IDKMRC_TRAIN)")
def test_the_calibrator_probe_scores_labelled_rows_with_and_without_the_cosine(tmp_path):
    from bench.fit_abstention import PER_CLASS, TUNE_PASSAGES, _sample_tune
    from generation.calibration import FEATURES

    _, items = _sample_tune(TUNE_PASSAGES, PER_CLASS)
    rows = []
    for i, item in enumerate(items[:40]):  # rows as `bench.fit_abstention --raw` writes them
        correct = bool(item["answerable"]) and i % 3 != 0
        features = {f: (0.9 if correct else 0.4) if f == "anchor_coverage" else 0.5 for f in FEATURES}
        anchors = [{"stem": stem(w), "weight": 1.0, "soft": False, "chunk": False, "sentence": False}
                   for w in str(item["query"]).lower().split()[:1]]
        rows.append({"source": "idkmrc-tune", "id": item["id"], "answerable": item["answerable"], "correct": correct,
                     "features": features, "anchors": anchors})
    rows.append({"source": "sample-site-dev", "id": "A01", "answerable": True, "correct": True,
                 "features": rows[0]["features"], "anchors": []})  # another source: left out
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = probe_calibrator(path, folds=2, seeds=1)
    assert out["rows"] == 40 and out["correct"] == sum(r["correct"] for r in rows[:40])
    assert 0.0 <= out["AUC of the cosine alone"] <= 1.0
    with_signals = out["out-of-fold AUC, calibrator signals"]
    assert with_signals.startswith("1.000")  # anchor_coverage alone tells these rows apart
    assert "out-of-fold AUC, calibrator signals + cosine" in out
