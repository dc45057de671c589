"""Pieces of the answer commands that need no model: the shared-document section writer and the dataset loader."""

from __future__ import annotations

import json

import pytest

from bot.cmd_answer import _load_dataset, markdown_table, upsert_section
from bot.settings import Settings


def test_upsert_section_replaces_only_its_own_block(tmp_path):
    doc = tmp_path / "evaluation.md"
    doc.write_text("<!-- retrieval:start -->\nR\n<!-- retrieval:end -->\n", encoding="utf-8")
    upsert_section(doc, "answers-x", markdown_table({"gold_span_any": 0.8}, "Answers"))
    upsert_section(doc, "answers-x", markdown_table({"gold_span_any": 0.9}, "Answers"))
    text = doc.read_text(encoding="utf-8")
    assert text.count("answers-x:start") == 1 and "| gold_span_any | 0.9 |" in text and "0.8" not in text
    assert text.startswith("<!-- retrieval:start -->\nR\n<!-- retrieval:end -->")


def test_dataset_loader(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path, max_question_chars=50)
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "1", "query": "q"}) + "\n\n", encoding="utf-8")
    assert _load_dataset(str(path), settings) == [{"id": "1", "query": "q"}]
    with pytest.raises(SystemExit, match="does not exist"):
        _load_dataset(str(tmp_path / "missing.jsonl"), settings)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{nope\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="bad.jsonl:1"):
        _load_dataset(str(bad), settings)


def test_dataset_loader_refuses_a_query_over_the_question_cap(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path, max_question_chars=50)
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"id": "1", "query": "q"}) + "\n" + json.dumps({"id": "2", "query": "k" * 51}) + "\n",
                    encoding="utf-8")
    with pytest.raises(SystemExit, match=r"long.jsonl:2: the query is 51 characters long; at most 50"):
        _load_dataset(str(path), settings)
