"""IndexManager with a shared version store (storage.pg_index on the real PostgreSQL, a schema per test): two
"hosts" are two index roots that share nothing but the database. A build publishes before it switches; sync()
fetches the newest version (checked) and switches; a bad download or a failed publish leaves the old version serving;
both sides keep the last N versions."""

from __future__ import annotations

import dataclasses
import fcntl

import pytest

from retrieval.index import IndexManager
from storage.errors import StoreUnavailable
from storage.pg import PgDatabase
from storage.pg_index import IndexTransferError, PgIndexStore
from tests.auxil.postgres import fresh_database
from tests.retrieval.conftest import corpus_chunks, corpus_documents

pytestmark = pytest.mark.postgres


@pytest.fixture
def store():
    with fresh_database() as db:
        yield PgIndexStore(db)


def _corpus(edition: int = 0):
    documents = corpus_documents()
    if edition:
        documents = [dataclasses.replace(d, text=d.text + f" Edisi {edition}.") if d.doc_id == "kontak" else d
                     for d in documents]
    return documents, corpus_chunks(documents)


def _host(tmp_path, name, embedder, config, store, keep=2) -> IndexManager:
    return IndexManager(tmp_path / name / "index", config, embedder, store=store, keep_versions=keep)


def _versions(manager: IndexManager) -> list[str]:
    return sorted(p.name for p in manager.versions_dir.iterdir()) if manager.versions_dir.exists() else []


def test_a_version_built_on_one_host_is_served_by_another(tmp_path, embedder, config, store):
    a, b = (_host(tmp_path, h, embedder, config, store) for h in ("a", "b"))
    documents, chunks = _corpus()
    report = a.build(chunks, documents)
    assert store.latest() == report.version == a.current_version()
    assert b.current() is None  # an empty DATA_DIR: nothing served yet
    assert b.sync() == report.version
    assert b.current_version() == report.version and _versions(b) == [report.version]
    hits = b.current().search("berapa sks basis data", 3, "hybrid").hits
    assert hits and hits[0].doc_id == "kurikulum"
    assert b.sync() is None  # already current: no second download


def test_a_corrupted_download_is_refused_and_the_old_version_keeps_serving(tmp_path, embedder, config, store):
    a, b = (_host(tmp_path, h, embedder, config, store) for h in ("a", "b"))
    first = a.build(*reversed(_corpus()))
    b.sync()
    assert len(b.current()) == first.total
    second = a.build(*reversed(_corpus(1)))
    with store.db.connection() as conn:
        conn.execute("UPDATE index_artifacts SET data = overlay(data placing '\\xdead'::bytea from 1) "
                     "WHERE version = %s AND path = 'chunks.jsonl'", (second.version,))
    with pytest.raises(IndexTransferError) as raised:
        b.sync()
    assert "chunks.jsonl" in str(raised.value) and "sha256" in str(raised.value)
    assert b.current_version() == first.version and b.current().info["version"] == first.version
    assert _versions(b) == [first.version]  # no half download left


def test_a_failed_publish_fails_the_build_and_every_host_keeps_the_old_version(tmp_path, embedder, config, store):
    a = _host(tmp_path, "a", embedder, config, store)
    first = a.build(*reversed(_corpus()))
    closed = PgDatabase(store.db.masked_url.replace("***", ""), schema=store.db.schema, migrate_on_open=False)
    closed.close()
    a.store = PgIndexStore(closed)
    with pytest.raises(StoreUnavailable, match="is closed"):
        a.build(*reversed(_corpus(1)))
    assert a.current_version() == first.version and _versions(a) == [first.version]
    assert store.latest() == first.version


def test_both_sides_keep_the_last_n_versions(tmp_path, embedder, config, store):
    a, b = (_host(tmp_path, h, embedder, config, store, keep=2) for h in ("a", "b"))
    built = []
    for edition in range(4):
        built.append(a.build(*reversed(_corpus(edition))).version)
        assert b.sync() == built[-1]
    assert [v.name for v in store.versions()] == built[:1:-1]
    assert _versions(a) == sorted(built[2:]) and _versions(b) == sorted(built[2:])
    assert b.current_version() == built[-1]


def test_an_empty_store_is_seeded_with_a_hosts_current_version(tmp_path, embedder, config, store):
    a = _host(tmp_path, "a", embedder, config, None)  # one host, before DATABASE_URL
    report = a.build(*reversed(_corpus()))
    a.store = store
    b = _host(tmp_path, "b", embedder, config, store)
    assert b.sync() is None and store.latest() is None  # nothing to fetch, nothing of its own to give
    assert a.sync() is None and store.latest() == report.version
    assert b.sync() == report.version and b.current().info["version"] == report.version


def test_sync_leaves_the_pointer_to_a_build_running_on_the_same_host(tmp_path, embedder, config, store):
    a, b = (_host(tmp_path, h, embedder, config, store) for h in ("a", "b"))
    report = a.build(*reversed(_corpus()))
    b.versions_dir.mkdir(parents=True)
    with open(b.root / ".build.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert b.sync() is None and b.current_version() is None
    assert b.sync() == report.version


def test_without_a_store_nothing_changes(tmp_path, embedder, config):
    a = _host(tmp_path, "a", embedder, config, None)
    report = a.build(*reversed(_corpus()))
    assert a.sync() is None and a.current_version() == report.version


def test_a_fusion_fit_travels_as_a_new_version(tmp_path, embedder, config, store):
    from retrieval.tuning import FUSION_FILE

    a, b = (_host(tmp_path, h, embedder, config, store) for h in ("a", "b"))
    first = a.build(*reversed(_corpus()))
    b.sync()
    path = a.save_fusion({"dense_weight": 0.8})
    fitted = a.current_version()
    assert fitted != first.version and path == a.versions_dir / fitted / FUSION_FILE
    assert a.current().info["fusion"] == {"dense_weight": 0.8} and store.latest() == fitted
    assert b.sync() == fitted
    assert b.current().info["fusion"] == {"dense_weight": 0.8} and b.current().config.dense_weight == 0.8
    assert len(b.current()) == first.total
    later = a.build(*reversed(_corpus(1)))  # the next build carries the fit along, as on one host
    assert b.sync() == later.version and b.current().config.dense_weight == 0.8


def test_a_fetched_version_fills_the_passage_cache_so_the_next_build_embeds_only_changes(tmp_path, nano, embedder,
                                                                                           config, store):
    from retrieval.embedders import CachedEmbedder
    from retrieval.search import passage_text

    a = _host(tmp_path, "a", embedder, config, store)
    b = IndexManager(tmp_path / "b" / "index", config, CachedEmbedder(nano, tmp_path / "b" / "cache"), store=store)
    documents, chunks = _corpus()
    a.build(chunks, documents)
    assert b.embedder.cached([passage_text(c) for c in chunks]) == {}
    b.sync()
    assert len(b.embedder.cached([passage_text(c) for c in chunks])) == len(chunks)
    changed = b.build(*reversed(_corpus(1)))  # the nightly reindex lands on B: one page changed
    assert b.embedder.computed == 1 and changed.embedded == 1
