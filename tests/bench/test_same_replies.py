import json

from bench import same_replies


def _write(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_the_same_replies_on_another_port_are_identical(tmp_path):
    row = {"answerer": "reader", "id": "A01", "answer": "Lihat http://127.0.0.1:4100/kontak/ [1]", "stop": "READER_SPAN",
           "previous": []}
    _write(tmp_path / "a.jsonl", [row])
    _write(tmp_path / "b.jsonl", [{**row, "answer": "Lihat http://127.0.0.1:5123/kontak/ [1]"}])
    assert same_replies.compare(tmp_path / "a.jsonl", tmp_path / "b.jsonl") == []
    assert same_replies.main(["--compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0


def test_a_changed_reply_stop_reason_or_missing_row_differs(tmp_path):
    rows = [{"answerer": "rules", "id": f"I0{k}", "answer": "x", "stop": "STOP_CONFIDENT", "previous": []}
            for k in range(3)]
    _write(tmp_path / "a.jsonl", rows)
    _write(tmp_path / "b.jsonl", [rows[0], {**rows[1], "stop": "FALLBACK_EXTRACTIVE"}])
    diff = same_replies.compare(tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    assert [x["id"] for x, _ in diff] == ["I01", "I02"]
    assert same_replies.main(["--compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 1


def test_the_fifty_questions_are_the_first_25_of_dev_and_informal():
    items = same_replies.questions()
    assert len(items) == 50
    assert items[0]["id"] != items[25]["id"]
