"""bench.idkmrc: the fixed 80/20 split of IDK-MRC train by passage, documents, eval items and the export CLI.

Reads the real ``../shared/data/idk-mrc-train/train.json`` (or $IDKMRC_TRAIN); skipped when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import idkmrc

TRAIN = idkmrc.train_path()
needs_data = pytest.mark.skipif(not TRAIN.is_file(), reason=f"IDK-MRC train.json is not at {TRAIN} (set IDKMRC_TRAIN)")


@pytest.fixture(scope="module")
def passages() -> list[idkmrc.Passage]:
    return idkmrc.load_passages()


@needs_data
def test_counts_match_the_published_train_split(passages):
    questions = [q for p in passages for q in p.questions]
    assert len(passages) == 3659 and len(questions) == 9332
    assert sum(not q.answerable for q in questions) == 4290
    assert all(q.answers for q in questions if q.answerable) and not any(q.answers for q in questions if not q.answerable)


@needs_data
def test_split_is_by_passage_about_20_percent_and_adds_up(passages):
    tune, check = idkmrc.split(passages)
    assert len(tune) + len(check) == len(passages)
    assert 0.18 <= len(check) / len(passages) <= 0.22
    tune_ids, check_ids = {p.doc_id for p in tune}, {p.doc_id for p in check}
    assert not tune_ids & check_ids
    tune_q = {q.id for p in tune for q in p.questions}
    check_q = {q.id for p in check for q in p.questions}
    assert not tune_q & check_q  # no passage's questions on both sides
    assert len(tune_q) + len(check_q) == 9332
    tune_items, check_items = idkmrc.items(tune), idkmrc.items(check)
    assert {d for it in tune_items for d in it["relevant_doc_ids"]} <= tune_ids
    assert {d for it in check_items for d in it["relevant_doc_ids"]} <= check_ids
    # the numbers reported in docs/retrieval.md
    assert (len(tune), len(check), len(tune_items), len(check_items)) == (2937, 722, 7502, 1830)
    assert sum(it["answerable"] for it in check_items) == 996


@needs_data
def test_split_is_deterministic_and_independent_of_order(passages):
    tune, check = idkmrc.split(passages)
    tune2, check2 = idkmrc.split(list(reversed(passages)))
    assert {p.doc_id for p in check} == {p.doc_id for p in check2}
    assert [p.doc_id for p in idkmrc.split(idkmrc.load_passages())[1]] == [p.doc_id for p in check]
    assert all(idkmrc.is_check(p.context) for p in check) and not any(idkmrc.is_check(p.context) for p in tune)


def test_split_rule_on_synthetic_passages():
    made = [idkmrc.Passage(n, f"paragraf nomor {n}", ()) for n in range(2000)]
    tune, check = idkmrc.split(made)
    assert len(tune) + len(check) == 2000 and 0.17 <= len(check) / 2000 <= 0.23
    assert idkmrc.is_check("paragraf nomor 1") == idkmrc.is_check("paragraf nomor 1")


def test_documents_and_items_shape(tmp_path):
    data = [{"context": "Jakarta adalah ibu kota Indonesia.", "qas": [
        {"id": "q1", "question": "Apa  ibu kota Indonesia?", "is_impossible": False,
         "answers": [{"text": "Jakarta", "answer_start": 0}, {"text": "Jakarta", "answer_start": 0}]},
        {"id": "q2", "question": "Siapa gubernur Jakarta?", "is_impossible": True, "answers": []}]}]
    path = tmp_path / "train.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    passages = idkmrc.load_passages(path)
    assert idkmrc.documents(passages) == [{"id": "idk-0", "url": "idkmrc:idk-0", "title": "",
                                           "text": "Jakarta adalah ibu kota Indonesia."}]
    rows = idkmrc.items(passages)
    assert rows[0] == {"id": "q1", "query": "Apa ibu kota Indonesia?", "category": "answerable",
                       "relevant_doc_ids": ["idk-0"], "answers": ["Jakarta"], "answerable": True,
                       "reference_answer": "Jakarta"}
    assert rows[1]["category"] == "unanswerable" and rows[1]["answers"] == [] and rows[1]["reference_answer"] == ""
    assert [r["id"] for r in idkmrc.items(passages, answerable=False)] == ["q2"]


def test_missing_file_names_the_path(tmp_path, monkeypatch):
    monkeypatch.setenv("IDKMRC_TRAIN", str(tmp_path / "nope.json"))
    with pytest.raises(FileNotFoundError, match="nope.json"):
        idkmrc.load_passages()
    assert idkmrc.main(["export", "--split", "tune", "--out", str(tmp_path / "out")]) == 2


def test_export_cli_writes_docs_and_questions(tmp_path, capsys):
    data = [{"context": f"Paragraf {n} tentang kota nomor {n}.", "qas": [
        {"id": f"q{n}", "question": f"Kota nomor {n}?", "is_impossible": False,
         "answers": [{"text": f"nomor {n}", "answer_start": 0}]}]} for n in range(50)]
    path = tmp_path / "train.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for side in ("tune", "check"):
        out = tmp_path / side
        assert idkmrc.main(["export", "--split", side, "--out", str(out), "--train", str(path)]) == 0
        docs = [json.loads(x) for x in (out / "docs.jsonl").read_text(encoding="utf-8").splitlines()]
        questions = [json.loads(x) for x in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
        assert {q["relevant_doc_ids"][0] for q in questions} == {d["id"] for d in docs}
        assert f"{side}: {len(docs)} passages" in capsys.readouterr().out
    assert len(Path(tmp_path / "tune" / "docs.jsonl").read_text().splitlines()) + len(
        Path(tmp_path / "check" / "docs.jsonl").read_text().splitlines()) == 50
