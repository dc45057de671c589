"""`python -m bot index|search|eval retrieval` end to end, in-process, on a temporary DATA_DIR."""

import json

import pytest

from bot.cli import main

pytestmark = pytest.mark.slow  # CLI subprocesses that build indexes


@pytest.fixture
def env(monkeypatch, data_dir):
    monkeypatch.setenv("DATA_DIR", str(data_dir))
    monkeypatch.delenv("EMBEDDER", raising=False)
    return data_dir


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, out


def test_index_search_eval(env, capsys, corpus_jsonl, tmp_path):
    code, out = run(capsys, "search", "beasiswa", "--json")
    assert code == 1 and json.loads(out)["error"] == "no_index" and "python -m bot index" in json.loads(out)["message"]

    code, out = run(capsys, "index", "--from-jsonl", str(corpus_jsonl), "--json")
    report = json.loads(out)
    assert code == 0 and report["chunks"]["total"] == 11 and report["chunks"]["embedded"] == 11

    code, out = run(capsys, "index", "--from-jsonl", str(corpus_jsonl), "--json")
    assert json.loads(out)["chunks"] == {"total": 11, "added": 0, "removed": 0, "embedded": 0}

    code, out = run(capsys, "search", "syarat IPK untuk proposal skripsi", "--k", "3", "--json")
    result = json.loads(out)
    assert code == 0 and 0 <= result["confidence"] <= 1
    assert result["hits"][0]["doc_id"] == "skripsi"
    assert set(result["hits"][0]) == {"chunk_id", "doc_id", "url", "title", "score", "text"}

    code, out = run(capsys, "search", "mata kuliah semester 5 yang 3 SKS", "--mode", "bm25", "--json")
    assert json.loads(out)["mode"] == "bm25"

    dataset = tmp_path / "eval.jsonl"
    rows = [
        {"id": "q1", "query": "kapan pendaftaran jalur mandiri", "category": "akademik", "relevant_doc_ids": ["pendaftaran"]},
        {"id": "q2", "query": "laboratorium buka sampai jam berapa", "category": "fasilitas",
         "relevant_urls": ["/fasilitas/laboratorium/"]},
        {"id": "q3", "query": "dosen bidang Intelligent System", "category": "dosen",
         "relevant_doc_ids": ["dosen-suhartono", "dosen-agus"]},
    ]
    dataset.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    dump, md = tmp_path / "dump.jsonl", tmp_path / "eval.md"
    code, out = run(capsys, "eval", "retrieval", "--dataset", str(dataset), "--compare", "--json",
                    "--dump", str(dump), "--markdown", str(md))
    metrics = json.loads(out)
    assert code == 0 and set(metrics["modes"]) == {"hybrid", "dense", "bm25"}
    hybrid = metrics["modes"]["hybrid"]
    assert hybrid["n"] == 3 and set(hybrid["per_category"]) == {"akademik", "fasilitas", "dosen"}
    assert hybrid["global"]["mrr@10"] == 1.0
    for mode in metrics["modes"].values():
        assert all(0.0 <= v <= 1.0 for v in mode["global"].values())
    lines = [json.loads(x) for x in dump.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["q1", "q2", "q3"]
    assert all(len(x["ranked_doc_ids"]) == 11 == len(set(x["ranked_doc_ids"])) for x in lines[::2])
    assert lines[0]["ranked_doc_ids"][0] == "pendaftaran"
    assert "| MRR@k |" in md.read_text() and "per category, k=5" in md.read_text()


def test_usage_errors(env, capsys, tmp_path):
    code, out = run(capsys, "index", "--from-jsonl", str(tmp_path / "missing.jsonl"), "--json")
    assert code == 2 and "missing.jsonl" in json.loads(out)["message"]
    code, out = run(capsys, "eval", "retrieval", "--json")
    assert code == 2 and "--dataset" in json.loads(out)["message"]


def test_jsonl_long_documents_are_chunked_and_ranked_once(env, capsys, tmp_path):
    long_text = "\n\n".join(
        f"Bagian {i}. Mahasiswa program studi mengikuti kegiatan akademik nomor {i} dengan tertib dan disiplin "
        f"sesuai pedoman akademik yang berlaku di fakultas. " * 4
        for i in range(8)
    )
    docs = [
        {"id": "panjang", "url": "http://x.test/pedoman/", "title": "Pedoman Akademik", "text": long_text},
        {"id": "pendek", "url": "http://x.test/kontak/", "title": "Kontak", "text": "Telepon sekretariat (0341) 555."},
    ]
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    code, out = run(capsys, "index", "--from-jsonl", str(path), "--json")
    report = json.loads(out)
    assert code == 0 and report["documents"] == 2 and report["chunks"]["total"] > 2  # the long one was split
    dataset = tmp_path / "q.jsonl"
    dataset.write_text(json.dumps({"id": "q", "query": "pedoman kegiatan akademik mahasiswa",
                                   "relevant_doc_ids": ["panjang"]}) + "\n", encoding="utf-8")
    dump = tmp_path / "dump.jsonl"
    code, out = run(capsys, "eval", "retrieval", "--dataset", str(dataset), "--json", "--dump", str(dump))
    ranked = json.loads(dump.read_text())["ranked_doc_ids"]
    assert ranked == ["panjang", "pendek"]  # one entry per document, at its best chunk
    assert json.loads(out)["global"]["mrr@1"] == 1.0


def test_index_from_the_document_store(env, capsys):
    from storage.docstore import DocumentStore
    from tests.retrieval.conftest import corpus_chunks, corpus_documents

    code, out = run(capsys, "index", "--json")
    assert code == 1 and "crawl" in json.loads(out)["message"]  # empty store: says what to run first
    documents, chunks = corpus_documents(), corpus_chunks()
    with DocumentStore(env / "prodi.sqlite3") as store:
        store.sync_documents(documents, {d.doc_id: [c for c in chunks if c.doc_id == d.doc_id] for d in documents})
    code, out = run(capsys, "index", "--json")
    report = json.loads(out)
    assert code == 0 and report["chunks"]["total"] == 11 and report["facts"]["courses"] == 6
    code, out = run(capsys, "search", "mata kuliah semester 5 yang 3 SKS", "--json")
    result = json.loads(out)
    assert result["hits"][0]["doc_id"] == "kurikulum"
    assert [r["code"] for r in result["facts"]["rows"]] == ["IF-301", "IF-302"]
