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
