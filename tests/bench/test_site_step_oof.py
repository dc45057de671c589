"""``bench.site_step_oof``: which reader reads which items, and the figures it reports out of fold. (The reading
itself runs end to end on the smoke reader in tests/bench/test_train_reader.py.)"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from bench.site_step_oof import READ_SETS, figures, parse_reader, read_items, report, subset_of
from bench.train_reader_site import site_fold


def test_reader_specs_name_the_left_out_fold() -> None:
    spec = parse_reader("step=/tmp/a:b/f0:1")
    assert (spec.name, spec.path, spec.left_out) == ("step", Path("/tmp/a:b/f0"), 1)
    spec = parse_reader("none=/tmp/pre")
    assert (spec.name, spec.path, spec.left_out) == ("none", Path("/tmp/pre"), None)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_reader("/tmp/pre")


def test_blind_set_b_is_never_read_and_each_item_has_one_subset() -> None:
    assert "informal_final.jsonl" not in READ_SETS
    items = read_items()
    subsets = [subset_of(name, item) for name, item in items]
    assert {s for s in subsets} == {"fold0", "fold1", "A", "multi_turn"}
    for (name, item), subset in zip(items, subsets, strict=True):
        if subset.startswith("fold"):
            assert subset == f"fold{site_fold(str(item['id']), 2)}" and not item.get("conversation")
        assert (subset == "A") == (name == "informal_holdout.jsonl")


def test_figures_count_facts_replies_as_answered_at_every_threshold() -> None:
    rows = [
        {"answerable": True, "outcome": "correct", "p": 0.9},
        {"answerable": True, "outcome": "correct", "p": 0.15},
        {"answerable": True, "outcome": "correct", "p": None},  # the facts lookup answered
        {"answerable": True, "outcome": "wrong", "p": 0.8},
        {"answerable": False, "outcome": "answered", "p": 0.5},
        {"answerable": False, "outcome": "answered", "p": 0.05},
        {"answerable": False, "outcome": "refused", "p": None},
    ]
    f = figures(rows, [0.1, 0.3])
    assert (f["answerable"], f["unanswerable"], f["correct_gate_off"]) == (4, 3, 3)
    assert f["at_threshold"] == {"0.1": {"correct": 3, "refused": 2}, "0.3": {"correct": 2, "refused": 2}}
    assert f["gate_auc"] == 0.75  # right (0.9, 0.15) against answered unanswerable (0.5, 0.05): 3 of 4 pairs


def test_report_pools_folds_and_keeps_each_readers_blind_reading_apart() -> None:
    base = {"answerable": True, "outcome": "correct", "p": 0.5}
    rows = [{**base, "reader": "step", "left_out": 0, "subset": "fold0", "id": "a"},
            {**base, "reader": "step", "left_out": 1, "subset": "fold1", "id": "b"},
            {**base, "reader": "step", "left_out": 0, "subset": "A", "id": "h"},
            {**base, "reader": "step", "left_out": 1, "subset": "A", "id": "h"},
            {**base, "reader": "none", "left_out": None, "subset": "A", "id": "h"}]
    rep = report(rows, [0.2])
    assert rep["step"]["folds pooled"]["answerable"] == 2
    assert rep["step"]["A, reader without fold 0"]["answerable"] == 1
    assert rep["step"]["A, reader without fold 1"]["answerable"] == 1
    assert rep["none"]["A"]["answerable"] == 1


def test_every_reader_runs_with_the_source_gate_and_int8_setting(tmp_path) -> None:
    """Only the weights differ between the readers compared: a main run's export (float32, its own threshold) is
    read with the source's selector, threshold and int8 setting; the reader's own files stay untouched."""
    import json

    from bench.site_step_oof import ReaderSpec, with_selector

    source, reader = tmp_path / "source", tmp_path / "pre"
    for path, config in ((source, {"chunk_weights": [0.2, 5.0], "chunk_bias": -6.0, "threshold": 0.196,
                                   "int8": True, "int8_weight_bits": 7, "platt_a": 1.0}),
                         (reader, {"chunk_weights": [], "chunk_bias": 0.0, "threshold": 0.21, "int8": False,
                                   "int8_weight_bits": 8, "platt_a": 0.3})):
        path.mkdir()
        (path / "reader.json").write_text(json.dumps({"config": config}), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    copy = with_selector(ReaderSpec("none", reader, None), source, work)
    config = json.loads((Path(copy) / "reader.json").read_text(encoding="utf-8"))["config"]
    assert config == {"chunk_weights": [0.2, 5.0], "chunk_bias": -6.0, "threshold": 0.196, "int8": True,
                      "int8_weight_bits": 7, "platt_a": 0.3}
    assert json.loads((reader / "reader.json").read_text(encoding="utf-8"))["config"]["int8"] is False


def test_a_step_that_trained_on_half_of_blind_set_a_is_read_on_the_other_half_only(tmp_path) -> None:
    """A step trained on the dev and informal sets whole and on blind set A without fold K (its ``reader.json`` names
    them) reads A's fold K (so the name's readers read each of A's items once) and the multi-turn items, which no
    step trains on; a step of the dev and informal sets without fold K reads their fold K, their multi-turn items
    and all of A; a reader named without a fold reads everything."""
    import json

    from bench.site_step_oof import ReaderSpec

    def reader(name: str, site_step: dict) -> Path:
        path = tmp_path / name
        path.mkdir()
        (path / "reader.json").write_text(json.dumps({"config": {}, "site_step": site_step}), encoding="utf-8")
        return path

    with_a = reader("with_a", {"sets": ["answers.jsonl", "informal.jsonl", "informal_holdout.jsonl"],
                               "left_out_fold": {"folds": 2, "fold": 1, "sets": ["informal_holdout.jsonl"]}})
    folded = reader("folded", {"sets": ["answers.jsonl", "informal.jsonl"], "left_out_fold": {"folds": 2, "fold": 1}})
    items = read_items()
    read = {name: [(s, i["id"]) for s, i in items if ReaderSpec(name, path, left).reads(s, i)]
            for name, path, left in (("with_a", with_a, 1), ("folded", folded, 1), ("all", folded, None))}
    a_fold1 = [(s, i["id"]) for s, i in items if s == "informal_holdout.jsonl" and site_fold(str(i["id"]), 2) == 1]
    multi = [(s, i["id"]) for s, i in items if s != "informal_holdout.jsonl" and i.get("conversation")]
    assert sorted(read["with_a"]) == sorted(a_fold1 + multi) and 0 < len(a_fold1) < 55 and multi
    assert {s for s, _ in read["folded"]} == set(READ_SETS)
    single = {(s, i["id"]) for s, i in items if not i.get("conversation")}
    assert all(site_fold(str(i), 2) == 1 for s, i in read["folded"]
               if s != "informal_holdout.jsonl" and (s, i) in single)
    assert set(multi) <= set(read["folded"])
    assert len([1 for s, _ in read["folded"] if s == "informal_holdout.jsonl"]) == \
        len([1 for s, _ in items if s == "informal_holdout.jsonl"])
    assert len(read["all"]) == len(items)


def test_report_pools_a_out_of_fold_over_the_readers_of_one_name() -> None:
    base = {"answerable": True, "outcome": "correct", "p": 0.5, "reader": "with_a"}
    rows = [{**base, "left_out": 0, "subset": "A, out of fold", "id": "h1"},
            {**base, "left_out": 1, "subset": "A, out of fold", "id": "h2"}]
    rep = report(rows, [0.2])
    assert rep["with_a"]["A, out of fold"]["answerable"] == 2 and "folds pooled" not in rep["with_a"]
