"""bench.eval_sets: the one reader of the question sets' JSONL files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import eval_sets
from bench.eval_sets import EVAL_DIR, load_items, load_set


def test_load_items_keeps_file_order_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"id": "b"}\n\n   \n{"id": "a", "query": "kapan krs?"}\n', encoding="utf-8")
    assert load_items(path) == [{"id": "b"}, {"id": "a", "query": "kapan krs?"}]
    assert load_items(str(path)) == load_items(path)


def test_load_items_names_a_broken_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"id": "a"}\n{"id": \n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"set\.jsonl, line 2: not a JSON object"):
        load_items(path)


@pytest.mark.parametrize("name", sorted(p.name for p in EVAL_DIR.glob("*.jsonl")))
def test_every_set_of_the_project_reads(name: str) -> None:
    items = load_set(name)
    lines = [line for line in (EVAL_DIR / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(items) == len(lines) > 0
    assert all(isinstance(item, dict) for item in items)


def test_the_named_sets_are_files_of_the_eval_directory() -> None:
    named = [eval_sets.RETRIEVAL_SET, eval_sets.ANSWERS_SET, eval_sets.INFORMAL_SET, eval_sets.HOLDOUT_SET,
             eval_sets.FINAL_SET, eval_sets.DIALOGUES_SET]
    assert all(path.parent == EVAL_DIR and path.is_file() for path in named)
    assert sorted(p.name for p in named) == sorted(p.name for p in EVAL_DIR.glob("*.jsonl"))
