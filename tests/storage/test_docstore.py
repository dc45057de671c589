"""DocumentStore: documents and chunks round-trip, atomic commits, change tracking, WAL readers, threads."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from storage.docstore import DocumentStore, PageState
from storage.models import Chunk, Document


def doc(doc_id: str, text: str, kind: str = "page") -> Document:
    return Document(doc_id=doc_id, url=f"http://p.example/{doc_id}/", title=doc_id.upper(), text=text,
                    content_hash=f"h-{text}", kind=kind, urls=(f"http://p.example/{doc_id}/",),
                    sections=(("Bagian", text),), meta={"k": "v"})


def chunks_of(d: Document, n: int = 2) -> list[Chunk]:
    return [Chunk(chunk_id=f"{d.doc_id}-{d.content_hash}-{i}", doc_id=d.doc_id, url=d.url, title=d.title,
                  section="Bagian", position=i, text=f"{d.text} #{i}", content_hash=f"c{i}-{d.content_hash}")
            for i in range(n)]


@pytest.fixture
def store(data_dir):
    s = DocumentStore(data_dir / "sub" / "prodi.sqlite3")
    yield s
    s.close()


def commit(store: DocumentStore, docs: list[Document], pages=(), removed=()):
    old = store.doc_hashes()
    todo = {d.doc_id: chunks_of(d) for d in docs if old.get(d.doc_id) != d.content_hash}
    return store.commit_crawl(pages=pages, removed_pages=removed, documents=docs, chunks=todo)


def test_round_trip_and_change_tracking(store: DocumentStore) -> None:
    a, b = doc("a", "satu"), doc("b", "dua", kind="lecturer")
    changes = commit(store, [a, b])
    assert changes.added == ("a", "b") and changes.chunks_added == 4
    assert store.documents() == [a, b] and store.documents(kind="lecturer") == [b]
    assert store.document("a").meta == {"k": "v"} and store.document("a").sections == (("Bagian", "satu"),)
    assert [c.chunk_id for c in store.chunks()] == [c.chunk_id for c in chunks_of(a) + chunks_of(b)]
    first = store.last_crawl_id()

    same = commit(store, [a, b])
    assert same.touched == () and same.removed == () and same.chunks_added == 0

    a2 = doc("a", "satu baru")
    changed = commit(store, [a2])
    assert changed.changed == ("a",) and changed.removed == ("b",)
    assert {c.doc_id for c in store.chunks()} == {"a"} and len(store.chunks()) == 2
    last = store.last_changes()
    assert (last.added, last.changed, last.removed) == ((), ("a",), ("b",))
    net = store.changes_since(first)
    assert net.changed == ("a",) and net.removed == ("b",) and net.added == ()
    assert store.counts() == {"documents": 1, "chunks": 2, "pages": 0}


def test_changed_document_without_chunks_is_refused_and_rolled_back(store: DocumentStore) -> None:
    commit(store, [doc("a", "satu")])
    before = (store.documents(), store.chunks(), store.last_crawl_id())
    with pytest.raises(ValueError, match="no chunks"):
        store.commit_crawl(pages=[PageState(url="http://p.example/x", fetch_url="x", final_url="x", status="ok")],
                           removed_pages=(), documents=[doc("a", "berubah")], chunks={})
    assert (store.documents(), store.chunks(), store.last_crawl_id()) == before
    assert store.page_states() == {}


def test_page_states_round_trip(store: DocumentStore) -> None:
    d = doc("a", "satu")
    state = PageState(url="http://p.example/a", fetch_url="http://p.example/a/", final_url="http://p.example/a/",
                      status="ok", http_status=200, etag='"x"', last_modified="Mon", body_hash="bh", misses=1,
                      depth=2, links=("http://p.example/b/",), extract=(d,))
    commit(store, [d], pages=[state])
    assert store.page_states() == {state.url: state}
    commit(store, [d], removed=[state.url])
    assert store.page_states() == {}


def test_readers_in_other_connections_and_threads(store: DocumentStore, data_dir) -> None:
    commit(store, [doc("a", "satu")])
    reader = sqlite3.connect(store.path)
    try:
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert reader.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 2
    finally:
        reader.close()
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(5):
                assert store.documents()
                store.chunks(["a"])
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    commit(store, [doc("a", "satu"), doc("b", "dua")])
    for t in threads:
        t.join()
    assert not errors
    with DocumentStore(store.path) as again:
        assert [d.doc_id for d in again.documents()] == ["a", "b"]
