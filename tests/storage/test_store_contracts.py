"""The store contracts, each test run on both backends: SQLite (the embedded default) and PostgreSQL (the real
server, a schema of the test's own). What callers rely on: the document and crawl-state store (crawl, reindex,
docs), the job runs (reindex, status, admin page) and the insights store (question log, feedback, admin answers)."""

from __future__ import annotations

import threading
import time
from datetime import date

import pytest

from storage.contracts import DocumentStoreAPI, InsightsStoreAPI, RunStoreAPI
from storage.docstore import DocChanges, PageState
from storage.models import Chunk, Document
from tests.storage.conftest import Backend


def doc(doc_id: str, text: str, kind: str = "page") -> Document:
    return Document(doc_id=doc_id, url=f"http://p.example/{doc_id}/", title=doc_id.upper(), text=text,
                    content_hash=f"h-{text}", kind=kind, urls=(f"http://p.example/{doc_id}/", f"http://p.example/{doc_id}"),
                    sections=(("Bagian", text), ("Lain", "isi")), meta={"k": "v", "semester": "5"})


def chunks_of(d: Document, n: int = 2) -> list[Chunk]:
    return [Chunk(chunk_id=f"{d.doc_id}-{d.content_hash}-{i}", doc_id=d.doc_id, url=d.url, title=d.title,
                  section="Bagian", position=i, text=f"{d.text} #{i}", content_hash=f"c{i}-{d.content_hash}",
                  fetched_at="2026-03-01T00:00:00+00:00")
            for i in range(n)]


def commit(store, docs: list[Document], pages=(), removed=()) -> DocChanges:
    old = store.doc_hashes()
    todo = {d.doc_id: chunks_of(d) for d in docs if old.get(d.doc_id) != d.content_hash}
    return store.commit_crawl(pages=pages, removed_pages=removed, documents=docs, chunks=todo,
                              report={"fetched": len(docs)}, started_at="2026-03-01T00:00:00+00:00")


# --- the document and crawl-state store ------------------------------------------------------------------------


def test_docstore_satisfies_the_interface(backend: Backend) -> None:
    assert isinstance(backend.docstore(), DocumentStoreAPI)


def test_an_empty_docstore(backend: Backend) -> None:
    store = backend.docstore()
    assert store.documents() == [] and store.chunks() == [] and store.doc_hashes() == {}
    assert store.document("nope") is None and store.page_states() == {}
    assert store.counts() == {"documents": 0, "chunks": 0, "pages": 0}
    assert store.last_crawl_id() == 0 and store.last_changes() == DocChanges(0)
    assert store.changes_since(0) == DocChanges(0)


def test_documents_round_trip_with_change_tracking(backend: Backend) -> None:
    store = backend.docstore()
    a, b = doc("a", "satu"), doc("b", "dua ✓ — é", kind="lecturer")
    changes = commit(store, [a, b])
    assert changes.added == ("a", "b") and changes.changed == () and changes.chunks_added == 4
    assert store.documents() == [a, b] and store.documents(kind="lecturer") == [b]
    assert store.document("a").meta == {"k": "v", "semester": "5"}
    assert store.document("b").sections == (("Bagian", "dua ✓ — é"), ("Lain", "isi"))
    assert [c.chunk_id for c in store.chunks()] == [c.chunk_id for c in chunks_of(a) + chunks_of(b)]
    assert store.chunks(["b"]) == chunks_of(b) and store.chunks([]) == []
    assert store.doc_hashes() == {"a": "h-satu", "b": "h-dua ✓ — é"}
    first = store.last_crawl_id()
    assert first >= 1

    same = commit(store, [a, b])
    assert same.touched == () and same.removed == () and same.chunks_added == 0
    assert store.last_crawl_id() > first

    a2 = doc("a", "satu baru")
    changed = commit(store, [a2])
    assert changed.changed == ("a",) and changed.removed == ("b",) and changed.chunks_removed == 4
    assert {c.doc_id for c in store.chunks()} == {"a"} and len(store.chunks()) == 2
    last = store.last_changes()
    assert (last.added, last.changed, last.removed) == ((), ("a",), ("b",))
    net = store.changes_since(first)
    assert net.changed == ("a",) and net.removed == ("b",) and net.added == ()
    assert store.changes_since(0).added == ("a",)  # added then changed: still added since the beginning
    assert store.counts() == {"documents": 1, "chunks": 2, "pages": 0}
    assert store.document("b") is None


def test_documents_keep_the_order_they_were_committed_in(backend: Backend) -> None:
    store = backend.docstore()
    docs = [doc(name, name) for name in ("z", "b", "m", "a")]
    commit(store, docs)
    assert [d.doc_id for d in store.documents()] == ["z", "b", "m", "a"]
    assert [c.doc_id for c in store.chunks()][::2] == ["z", "b", "m", "a"]


def test_a_changed_document_without_chunks_is_refused_and_nothing_is_written(backend: Backend) -> None:
    store = backend.docstore()
    commit(store, [doc("a", "satu")])
    before = (store.documents(), store.chunks(), store.last_crawl_id(), store.page_states())
    with pytest.raises(ValueError, match="no chunks"):
        store.commit_crawl(pages=[PageState(url="http://p.example/x", fetch_url="x", final_url="x", status="ok")],
                           removed_pages=(), documents=[doc("a", "berubah")], chunks={})
    assert (store.documents(), store.chunks(), store.last_crawl_id(), store.page_states()) == before


def test_page_states_round_trip_and_are_removed(backend: Backend) -> None:
    store = backend.docstore()
    d = doc("a", "satu")
    state = PageState(url="http://p.example/a", fetch_url="http://p.example/a/", final_url="http://p.example/a/",
                      status="ok", http_status=200, etag='"x"', last_modified="Mon", body_hash="bh",
                      content_type="text/html", misses=1, first_seen="2026-01-01", last_seen="2026-03-01",
                      fetched_at="2026-03-01", depth=2, links=("http://p.example/b/",), extract=(d,), reason="")
    listing = PageState(url="http://p.example/l", fetch_url="http://p.example/l", final_url="http://p.example/l",
                        status="links", links=("http://p.example/a",))
    commit(store, [d], pages=[state, listing])
    assert store.page_states() == {state.url: state, listing.url: listing}
    assert store.counts()["pages"] == 1  # only pages with documents count
    moved = PageState(url=state.url, fetch_url=state.fetch_url, final_url="http://p.example/a-baru/", status="ok")
    commit(store, [d], pages=[moved], removed=[listing.url])
    assert store.page_states() == {state.url: moved}
    reopened = backend.docstore()
    assert reopened.page_states() == {state.url: moved} and reopened.documents() == [d]


def test_sync_documents_with_and_without_replacing_the_rest(backend: Backend) -> None:
    store = backend.docstore()
    a, b, c = doc("a", "satu"), doc("b", "dua"), doc("c", "tiga")
    store.sync_documents([a, b], {d.doc_id: chunks_of(d) for d in (a, b)})
    partial = store.sync_documents([c], {"c": chunks_of(c)}, replace_all=False)
    assert partial.added == ("c",) and partial.removed == ()
    assert {d.doc_id for d in store.documents()} == {"a", "b", "c"}
    full = store.sync_documents([a], {})
    assert full.removed == ("b", "c") and [d.doc_id for d in store.documents()] == ["a"]
    assert store.last_changes().removed == ("b", "c")


def test_a_nul_character_in_page_text_does_not_lose_the_document(backend: Backend) -> None:
    store = backend.docstore()
    odd = doc("pdf", "teks\x00dari PDF")
    commit(store, [odd])
    (back,) = store.documents()
    assert back.text.replace("\x00", "").replace("\ufffd", "") == "teksdari PDF"
    assert len(store.chunks(["pdf"])) == 2


def test_readers_in_other_instances_and_threads_see_commits(backend: Backend) -> None:
    store = backend.docstore()
    commit(store, [doc("a", "satu")])
    other = backend.docstore()
    assert [d.doc_id for d in other.documents()] == ["a"]
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                assert len(store.documents()) >= 1
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    commit(store, [doc("a", "satu"), doc("b", "dua")])
    for t in threads:
        t.join()
    assert errors == []
    assert [d.doc_id for d in other.documents()] == ["a", "b"]


# --- job runs ------------------------------------------------------------------------------------------------------


def test_run_store_satisfies_the_interface(backend: Backend) -> None:
    assert isinstance(backend.runs(), RunStoreAPI)


def test_a_run_goes_from_running_to_success_with_counts(backend: Backend) -> None:
    store = backend.runs()
    run = store.start("cli", requested_by="ani")
    assert run.status == "RUNNING" and run.ended_at is None and not run.finished and run.requested_by == "ani"
    assert store.get(run.run_id) == run
    updated = store.update(run.run_id, pages_fetched=12, pages_changed=3, pages_unchanged=9)
    assert updated.pages_fetched == 12 and updated.status == "RUNNING"
    done = store.finish(run.run_id, "SUCCESS", chunks_embedded=7, embed_seconds=1.25, index_version="v2")
    assert done.status == "SUCCESS" and done.finished and done.ended_at >= done.started_at
    assert (done.pages_fetched, done.pages_changed, done.chunks_embedded) == (12, 3, 7)
    assert done.index_version == "v2" and done.duration_seconds >= 0 and done.error is None
    assert store.get(run.run_id) == done and backend.runs().get(run.run_id) == done
    assert isinstance(done.embed_seconds, float) and done.as_json()["embed_seconds"] == 1.25
    assert store.get("missing") is None


def test_recent_is_newest_first_and_filters_by_status(backend: Backend) -> None:
    store = backend.runs()
    first = store.finish(store.start("schedule").run_id, "SUCCESS", pages_fetched=10)
    second = store.finish(store.start("admin", requested_by="42").run_id, "FAILED", error="site down")
    third = store.start("cli", status="SKIPPED")
    assert [r.run_id for r in store.recent()] == [third.run_id, second.run_id, first.run_id]
    assert [r.run_id for r in store.recent(2)] == [third.run_id, second.run_id]
    assert [r.run_id for r in store.recent(status="FAILED")] == [second.run_id]
    assert store.last_success() == first
    assert store.recent(status="ABORTED") == []
    assert second.error == "site down"


def test_recent_keeps_the_start_order_for_runs_started_in_the_same_millisecond(backend: Backend) -> None:
    store = backend.runs()
    ids = [store.start("cli").run_id for _ in range(6)]
    assert [r.run_id for r in store.recent(6)] == ids[::-1]


def test_logs_keep_their_order_and_structure(backend: Backend) -> None:
    store = backend.runs()
    run = store.start("cli")
    store.log(run.run_id, {"stage": "crawl", "pages_fetched": 3, "errors": ["a", "b"]})
    store.log(run.run_id, {"stage": "index", "chunks_embedded": 5, "note": "é ✓", "when": date(2026, 3, 1)})
    assert store.logs(run.run_id) == [{"stage": "crawl", "pages_fetched": 3, "errors": ["a", "b"]},
                                      {"stage": "index", "chunks_embedded": 5, "note": "é ✓", "when": "2026-03-01"}]
    assert store.logs("missing") == []


def test_progress_is_one_row_per_run_overwritten(backend: Backend) -> None:
    store = backend.runs()
    run = store.start("admin")
    assert store.progress(run.run_id) is None
    store.set_progress(run.run_id, "crawl", 3, None)
    first = store.progress(run.run_id)
    assert (first["stage"], first["done"], first["total"]) == ("crawl", 3, None) and first["updated_at"]
    store.set_progress(run.run_id, "embed", 10, 40)
    second = backend.runs().progress(run.run_id)
    assert (second["stage"], second["done"], second["total"]) == ("embed", 10, 40)


def test_running_runs_are_aborted_after_a_crash(backend: Backend) -> None:
    stale = backend.runs().start("schedule")
    alive = backend.runs().start("admin")
    reopened = backend.runs()  # a new process
    assert reopened.abort_running("died", except_ids=(alive.run_id,)) == [stale.run_id]
    aborted = reopened.get(stale.run_id)
    assert aborted.status == "ABORTED" and aborted.error == "died" and aborted.ended_at
    assert reopened.get(alive.run_id).status == "RUNNING"
    assert reopened.abort_running() == [alive.run_id]
    assert "stopped" in reopened.get(alive.run_id).error
    assert reopened.abort_running() == []


def test_bad_run_values_are_rejected_and_change_nothing(backend: Backend) -> None:
    store = backend.runs()
    with pytest.raises(ValueError, match="schedule, admin, cli"):
        store.start("cron")
    run = store.start("cli")
    with pytest.raises(ValueError, match="final status"):
        store.finish(run.run_id, "RUNNING")
    with pytest.raises(ValueError, match="unknown run fields"):
        store.update(run.run_id, pages=1)
    with pytest.raises(ValueError, match="unknown status"):
        store.update(run.run_id, status="DONE")
    with pytest.raises(KeyError):
        store.finish("nope", "SUCCESS")
    with pytest.raises(KeyError):
        store.update("nope", pages_fetched=1)
    assert store.get(run.run_id) == run and len(store.recent()) == 1


# --- the insights store: question log and admin answers -------------------------------------------------------------


def test_insights_store_satisfies_the_interface(backend: Backend) -> None:
    assert isinstance(backend.insights(), InsightsStoreAPI)


def test_questions_are_masked_logged_and_read_back_in_time_order(backend: Backend) -> None:
    store = backend.insights()
    assert store.record(trace_id="", channel="web", user_key="web:1", question="q", answer="a", abstained=False) is False
    assert store.record(trace_id="t2", channel="whatsapp", user_key="whatsapp:6281234567890",
                        question="Saya 081234567890 / ani@mail.com, kapan wisuda?", answer="Belum tahu.",
                        abstained=True, ts=2000.0)
    store.record(trace_id="t1", channel="telegram", user_key="telegram:7", question="Kaprodi siapa?",
                 answer="Dr. X", abstained=False, ts=1000.0)
    rows = store.questions(since=0.0, until=5000.0)
    assert [r["trace_id"] for r in rows] == ["t1", "t2"]
    assert rows[1] == {"trace_id": "t2", "ts": 2000.0, "channel": "whatsapp",
                       "question": "Saya [nomor telepon] / [email], kapan wisuda?", "answer": "Belum tahu.",
                       "abstained": True, "feedback": None, "feedback_ts": None}
    assert rows[0]["abstained"] is False
    assert [r["trace_id"] for r in store.questions(since=1500.0, until=5000.0)] == ["t2"]
    assert [r["trace_id"] for r in store.questions(since=0.0, until=2000.0)] == ["t1"]
    assert [r["trace_id"] for r in store.questions()] == ["t1", "t2"]  # until defaults to now
    # the same trace id again replaces the row
    store.record(trace_id="t1", channel="telegram", user_key="telegram:7", question="Kaprodi siapa ya?",
                 answer="Dr. Y", abstained=False, ts=1000.0)
    assert [r["question"] for r in store.questions(0.0, 5000.0)] == ["Kaprodi siapa ya?", "Saya [nomor telepon] / [email], kapan wisuda?"]


def test_feedback_attaches_to_a_logged_answer(backend: Backend) -> None:
    store = backend.insights()
    store.record(trace_id="t1", channel="web", user_key="web:1", question="q1", answer="a1", abstained=False, ts=10.0)
    store.record(trace_id="t2", channel="web", user_key="web:1", question="q2", answer="a2", abstained=True, ts=20.0)
    assert store.set_feedback("t1", "down", ts=100.0) is True
    assert store.set_feedback("nope", "up", ts=100.0) is False
    store.set_feedback("t2", "up", ts=200.0)
    rows = store.feedback_rows(since=0.0)
    assert [(r["trace_id"], r["feedback"], r["feedback_ts"]) for r in rows] == [("t1", "down", 100.0), ("t2", "up", 200.0)]
    assert set(rows[0]) == {"trace_id", "ts", "channel", "question", "answer", "feedback", "feedback_ts"}
    assert [r["trace_id"] for r in store.feedback_rows(since=150.0)] == ["t2"]


def test_forget_user_and_prune_delete_only_their_rows(backend: Backend) -> None:
    store = backend.insights()
    for i, user in enumerate(["web:ani", "web:budi", "web:ani"]):
        store.record(trace_id=f"t{i}", channel="web", user_key=user, question=f"q{i}", answer="", abstained=True,
                     ts=100.0 * (i + 1))
    assert store.forget_user("web:ani") == 2 and store.forget_user("web:ani") == 0
    assert [r["trace_id"] for r in store.questions(0.0, 1e6)] == ["t1"]
    store.record(trace_id="old", channel="web", user_key="web:c", question="lama", answer="", abstained=True, ts=50.0)
    assert store.prune(older_than=150.0) == 1
    assert [r["trace_id"] for r in store.questions(0.0, 1e6)] == ["t1"]


def test_the_user_hash_is_keyed_and_survives_a_restart(backend: Backend) -> None:
    store = backend.insights()
    h = store.user_hash("whatsapp:6281234567890")
    assert h == store.user_hash("whatsapp:6281234567890") and h != store.user_hash("whatsapp:6281234567891")
    assert "6281234567890" not in h and len(h) == 24
    assert backend.insights().user_hash("whatsapp:6281234567890") == h
    store.record(trace_id="t", channel="web", user_key="web:x", question="q", answer="", abstained=True, ts=1.0)
    assert backend.insights().forget_user("web:x") == 1  # another process finds the same user's rows


def test_admin_answers_are_versioned_expire_and_delete(backend: Backend) -> None:
    store = backend.insights()
    first = store.save_answer(question="Kapan wisuda?", answer="Wisuda 20 Juli.", author="ani",
                              link="https://p.example/wisuda", expires="2026-08-01")
    assert (first.id, first.version, first.deleted) == (1, 1, False)
    second = store.save_answer(question="Biaya UKT?", answer="Lihat portal.", author="")
    assert (second.id, second.version, second.author) == (2, 1, "admin")
    edited = store.save_answer(question="Kapan wisuda?", answer="Wisuda 21 Juli.", author="budi", answer_id=1,
                               expires="2026-08-01")
    assert (edited.id, edited.version) == (1, 2)
    assert store.answer(1) == edited and backend.insights().answer(1) == edited
    assert [a.version for a in store.history(1)] == [1, 2] and store.history(1)[0] == first
    assert [a.id for a in store.answers()] == [2, 1]
    assert [a.id for a in store.active_answers(date(2026, 8, 1))] == [2, 1]
    assert [a.id for a in store.active_answers(date(2026, 8, 2))] == [2]  # expired after its last day
    assert store.delete_answer(2, "ani") is True and store.delete_answer(2, "ani") is False
    assert store.delete_answer(99, "ani") is False
    assert [a.id for a in store.answers()] == [1]
    deleted = [a for a in store.answers(include_deleted=True) if a.id == 2]
    assert deleted[0].deleted and deleted[0].version == 2 and deleted[0].author == "ani"
    assert store.answer(99) is None and store.history(99) == []
    third = store.save_answer(question="Baru?", answer="Ya.", author="ani")
    assert third.id == 3  # ids are never reused


def test_bad_admin_answers_are_refused_and_nothing_is_stored(backend: Backend) -> None:
    store = backend.insights()
    store.save_answer(question="Q", answer="A", author="ani")
    for kwargs, message in [({"question": " ", "answer": "A"}, "both"),
                            ({"question": "Q" * 501, "answer": "A"}, "at most"),
                            ({"question": "Q", "answer": "A", "link": "ftp://x"}, "web address"),
                            ({"question": "Q", "answer": "A", "expires": "besok"}, "YYYY-MM-DD"),
                            ({"question": "Q", "answer": "A", "answer_id": 42}, "no admin answer 42")]:
        with pytest.raises(ValueError, match=message):
            store.save_answer(author="ani", **kwargs)
    assert [(a.id, a.version) for a in store.answers(include_deleted=True)] == [(1, 1)]


def test_concurrent_admin_answers_get_distinct_ids(backend: Backend) -> None:
    stores = [backend.insights() for _ in range(3)]
    saved: list[int] = []
    errors: list[BaseException] = []

    def save(store, n: int) -> None:
        try:
            for i in range(4):
                saved.append(store.save_answer(question=f"q{n}-{i}", answer="a", author="ani").id)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=save, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and sorted(saved) == list(range(1, 13))


def test_the_question_log_turns_store_errors_into_none(backend: Backend) -> None:
    """ChatService's question log never raises into an answer: a broken store (SQLite or PostgreSQL) is logged."""
    import asyncio

    from storage.insights import QuestionLog

    store = backend.insights()
    store.close()
    log = QuestionLog(store)

    async def go():
        return (await log.record(trace_id="t", channel="web", user_key="web:1", question="q", answer="a",
                                 abstained=False), await log.feedback("t", "up"), await log.forget("web:1"))

    started = time.monotonic()
    assert asyncio.run(go()) == (None, None, None)
    assert time.monotonic() - started < 30
