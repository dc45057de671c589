"""The in-domain step's folds (``python -m bench.train_reader_site --folds 2 --fold K``): every single-turn item of the
sets the step trains on falls in exactly one fold, by its id, the same on every run, and the folds are of similar
size, so a step trained without fold K can be measured on fold K's questions."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bench.train_reader_site import SETS, site_fold

EVAL = Path(__file__).resolve().parents[1] / "data" / "eval"


def _single_turn_ids() -> list[str]:
    ids = []
    for name in SETS:
        for line in (EVAL / name).read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if not item.get("conversation"):
                ids.append(str(item["id"]))
    return ids


def test_each_item_is_in_one_fold_of_two_of_similar_size() -> None:
    ids = _single_turn_ids()
    assert len(ids) == len(set(ids)) > 100
    folds = Counter(site_fold(i, 2) for i in ids)
    assert set(folds) == {0, 1}
    assert abs(folds[0] - folds[1]) <= 0.2 * len(ids)
    assert [site_fold(i, 2) for i in ids] == [site_fold(i, 2) for i in ids]
    assert {site_fold(i, 3) for i in ids} == {0, 1, 2}


def test_informal_copies_are_added_with_a_fixed_seed_and_keep_their_labels() -> None:
    """``--informal P``: a share P of the step's questions gains a second copy written as students type (the external
    lexicon's spellings, ``bench.train_reader.as_students_type``), with the same chunk and gold spans; the same seed
    gives the same copies, and P = 0 adds none."""
    from bench.train_reader_site import with_informal_copies

    rows = [row for n in range(20) for row in (
        (f"berapa jumlah sks untuk lulus angkatan {n}", "Jumlah SKS: 144", ["144"], True),
        (f"siapa ketua program studi tahun {n}", "Ketua Program Studi: Supriyono", ["Supriyono"], True),
        (f"apakah ada asrama untuk angkatan {n}", "Fasilitas kampus", [], False))]
    assert with_informal_copies(rows, 0.0, seed=1) == rows
    once, again = with_informal_copies(rows, 0.5, seed=1), with_informal_copies(rows, 0.5, seed=1)
    assert once == again
    extra = once[len(rows):]
    assert once[: len(rows)] == rows and 10 <= len(extra) <= 50
    originals = {(r[1], tuple(r[2]), r[3]) for r in rows}
    assert all((c, tuple(g), a) in originals for _, c, g, a in extra)
    assert any(q not in {r[0] for r in rows} for q, _, _, _ in extra)  # some copies are spelled differently


def test_the_step_stops_before_it_trains_when_its_output_is_not_a_main_runs_export(tmp_path: Path) -> None:
    """The step writes its reader over a copy of the main run's export and its card from that run's
    ``train_log.jsonl``: an output directory without that log (a copy of ``reader.json`` and ``reader.npz`` alone)
    stops the step at once with a message naming the file, instead of after minutes of training with a
    StopIteration from the card."""
    import pytest

    from bench.reader_card import CardError, main_run_log
    from bench.train_reader_site import main

    (tmp_path / "reader.json").write_text(json.dumps({"config": {}}), encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        main(["--out", str(tmp_path), "--work", str(tmp_path / "work")])
    assert "train_log.jsonl" in str(stopped.value) and "bench.train_reader" in str(stopped.value)
    # a log without the main run's rows (a step's own rows only) is no main run's log either
    (tmp_path / "train_log.jsonl").write_text(json.dumps({"event": "site_epoch", "epoch": 1}) + "\n", encoding="utf-8")
    with pytest.raises(CardError, match="'data'"):
        main_run_log(tmp_path)
    with pytest.raises(SystemExit, match="'data'"):
        main(["--out", str(tmp_path), "--work", str(tmp_path / "work")])


def test_a_step_may_train_on_blind_set_a_with_a_fold_left_out_and_never_on_blind_set_b() -> None:
    """``--sets`` and ``--fold-sets``: a step can train on the dev and informal sets whole and on blind set A without
    one fold (which is then out of sample for it); blind set B, or a fold of a set it does not train on, stops it with
    a message."""
    import pytest

    from bench.train_reader_site import SITE_SETS, step_items

    every = step_items(SITE_SETS)
    half = step_items(SITE_SETS, folds=2, fold=0, fold_sets=["informal_holdout.jsonl"])
    held = {str(i["id"]) for s, i in every if s == "informal_holdout.jsonl" and site_fold(str(i["id"]), 2) == 0}
    assert held and {str(i["id"]) for _, i in half} == {str(i["id"]) for _, i in every} - held
    assert [i for _, i in step_items()] == [i for s, i in every if s in SETS]
    assert all(not i.get("conversation") for _, i in every)
    with pytest.raises(SystemExit, match="informal_final.jsonl"):
        step_items(("answers.jsonl", "informal_final.jsonl"))
    with pytest.raises(SystemExit, match="--fold-sets"):
        step_items(SETS, folds=2, fold=0, fold_sets=["informal_holdout.jsonl"])


def test_the_card_names_the_sets_the_step_trained_on() -> None:
    from bench.reader_card import _set_names

    assert _set_names(["answers.jsonl", "informal.jsonl"]) == "dev and informal sets"
    assert _set_names(["answers.jsonl", "informal.jsonl", "informal_holdout.jsonl"]) == \
        "dev set, informal set and blind set A"
