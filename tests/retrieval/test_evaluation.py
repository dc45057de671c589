import json

import pytest

from retrieval.evaluation import load_dataset, metrics_for, url_key


def test_metrics_known_values():
    m = metrics_for(["a", "x", "b", "y", "z"], {"a", "b"})
    assert m["recall@1"] == 0.5 and m["recall@3"] == 1.0 and m["mrr@1"] == 1.0
    assert m["ndcg@3"] == pytest.approx((1 + 1 / 2) / (1 + 1 / 1.5849625007211562))
    late = metrics_for(["x", "y", "a"], {"a"})
    assert late["mrr@1"] == 0.0 and late["mrr@3"] == pytest.approx(1 / 3) and late["recall@10"] == 1.0


def test_recall_never_exceeds_one_with_duplicates():
    # the thesis counted the same relevant page twice (Recall@10 = 1.03); duplicates are collapsed here
    m = metrics_for(["a", "a", "a", "b"], {"a"})
    assert all(v <= 1.0 for v in m.values())
    assert m["recall@10"] == 1.0


def test_url_paths_match_host_relative(tmp_path):
    assert url_key("http://127.0.0.1:8000/curriculum/") == url_key("/curriculum") == "/curriculum"
    assert url_key("https://x.test/") == "/"
    path = tmp_path / "d.jsonl"
    path.write_text(
        "\n".join(json.dumps(o) for o in [
            {"id": "1", "query": "q", "category": "c", "relevant_urls": ["/curriculum/"]},
            {"id": "2", "query": "q2", "relevant_doc_ids": ["d1"]},
            {"id": "3", "query": "tidak bisa dijawab", "answerable": False},
        ]) + "\n",
        encoding="utf-8",
    )
    items = load_dataset(path)
    assert [i.id for i in items] == ["1", "2"]
    assert items[0].by_url and items[0].relevant == {"/curriculum"}
    assert not items[1].by_url and items[1].category == "all"


def test_markdown_section_is_replaced_in_place(tmp_path):
    from retrieval.evaluation import write_markdown_section

    doc = tmp_path / "evaluation.md"
    doc.write_text("# Evaluation\n\nanswers section by someone else\n", encoding="utf-8")
    write_markdown_section(doc, "table v1")
    write_markdown_section(doc, "table v2")
    text = doc.read_text()
    assert text.count("<!-- retrieval:start -->") == 1 and "table v2" in text and "table v1" not in text
    assert text.startswith("# Evaluation\n\nanswers section by someone else")
