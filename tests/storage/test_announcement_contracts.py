"""The announcement store's contract, run on both backends (SQLite and PostgreSQL, a schema of the test's own):
subscriptions (stage 1 of issue 32)."""

from __future__ import annotations

import threading

import pytest

from storage.announcements import MAX_TOPICS, Subscription
from storage.contracts import AnnouncementStoreAPI
from sync_jobs.announcements import Draft
from tests.storage.conftest import Backend


def open_store(backend: Backend):
    """A new instance, as another process or replica would open it."""
    if backend.name == "sqlite":
        from storage.announcements import AnnouncementStore

        return backend._own(AnnouncementStore(backend.root / "announcements.sqlite3"))
    from storage.pg import PgDatabase
    from storage.pg_announcements import PgAnnouncementStore

    db = PgDatabase(backend.url, statement_timeout_seconds=10, connect_timeout_seconds=5)  # migrated on open
    return backend._own(PgAnnouncementStore(db, close_db=True))


def test_the_store_satisfies_the_interface(backend: Backend) -> None:
    assert isinstance(open_store(backend), AnnouncementStoreAPI)


def test_subscriptions_round_trip_and_survive_reopening(backend: Backend) -> None:
    store = open_store(backend)
    assert store.topics("telegram:1") == [] and store.subscriptions() == []
    assert store.subscribe("telegram:1", "telegram", "all") is True
    assert store.subscribe("telegram:1", "telegram", "all") is False  # once
    assert store.subscribe("telegram:1", "telegram", "beasiswa") is True
    assert store.subscribe("whatsapp:628123", "whatsapp", "beasiswa") is True
    assert store.topics("telegram:1") == ["all", "beasiswa"]
    again = open_store(backend)
    assert [s.topic for s in again.subscriptions("telegram")] == ["all", "beasiswa"]
    assert again.subscriptions("whatsapp") == [
        Subscription("whatsapp:628123", "whatsapp", "beasiswa", again.subscriptions("whatsapp")[0].created_at)]
    assert {s.user_key for s in again.subscriptions()} == {"telegram:1", "whatsapp:628123"}


def test_unsubscribe_one_topic_or_all_and_forget(backend: Backend) -> None:
    store = open_store(backend)
    for topic in ("all", "beasiswa", "krs"):
        store.subscribe("telegram:1", "telegram", topic)
    store.subscribe("telegram:2", "telegram", "krs")
    assert store.unsubscribe("telegram:1", "beasiswa") == 1
    assert store.unsubscribe("telegram:1", "beasiswa") == 0
    assert store.topics("telegram:1") == ["all", "krs"]
    assert store.unsubscribe("telegram:1") == 2 and store.topics("telegram:1") == []
    assert store.forget_user("telegram:2") == 1 and store.subscriptions() == []


def test_bad_input_is_refused_and_nothing_is_written(backend: Backend) -> None:
    store = open_store(backend)
    for user, channel, topic in (("", "telegram", "all"), ("telegram:1", "", "all"), ("telegram:1", "telegram", " "),
                                 ("telegram:1", "telegram", "x" * 61), ("nocolon", "telegram", "all")):
        with pytest.raises(ValueError):
            store.subscribe(user, channel, topic)
    for i in range(MAX_TOPICS):
        store.subscribe("telegram:1", "telegram", f"topik {i}")
    with pytest.raises(ValueError, match="at most"):
        store.subscribe("telegram:1", "telegram", "satu lagi")
    assert len(store.topics("telegram:1")) == MAX_TOPICS and len(store.subscriptions()) == MAX_TOPICS


def test_two_writers_at_once_keep_the_limit(backend: Backend) -> None:
    stores = [open_store(backend), open_store(backend)]
    for i in range(MAX_TOPICS - 1):
        stores[0].subscribe("telegram:1", "telegram", f"t{i}")
    results: list[object] = []

    def add(store, topic: str) -> None:
        try:
            results.append(store.subscribe("telegram:1", "telegram", topic))
        except ValueError as error:
            results.append(error)

    threads = [threading.Thread(target=add, args=(s, f"last {n}")) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(type(r).__name__ for r in results) == ["ValueError", "bool"]
    assert len(stores[1].topics("telegram:1")) == MAX_TOPICS


# --- announcements ------------------------------------------------------------------------------------------


def draft(key: str, title: str = "Beasiswa Bank Indonesia 2026 dibuka", summary: str = "Pendaftaran dibuka.") -> Draft:
    return Draft(key=key, doc_id=f"d-{key}", url=f"http://p.example/{key}/", title=title, date="2026-11-20",
                 summary=summary, text=f"{title}\n{summary} beasiswa", reason="new")


def test_announcements_are_recorded_once_per_page_version(backend: Backend) -> None:
    store = open_store(backend)
    added = store.add_announcements([draft("a"), draft("b", "Seminar nasional")], run_id="r1")
    assert [(a.title, a.status, a.run_id) for a in added] == [
        ("Beasiswa Bank Indonesia 2026 dibuka", "pending", "r1"), ("Seminar nasional", "pending", "r1")]
    assert added[0].topic_text.endswith("beasiswa") and added[0].as_json()["url"] == "http://p.example/a/"
    # a second run, a restart, another replica: the same versions are not recorded again
    assert open_store(backend).add_announcements([draft("a"), draft("c")], run_id="r2")[0].url.endswith("/c/")
    assert [a.url[-2] for a in store.announcements()] == ["c", "b", "a"]  # newest first
    assert [a.url[-2] for a in store.announcements(status="pending", limit=2)] == ["c", "b"]
    assert store.announcement(added[0].id) == added[0] and store.announcement(99999) is None


def test_status_and_summary_changes(backend: Backend) -> None:
    store = open_store(backend)
    a, b = store.add_announcements([draft("a"), draft("b")])
    assert store.set_summary(a.id, "  Ringkasan   baru. ") is True
    assert store.announcement(a.id).summary == "Ringkasan baru."
    assert store.set_status(a.id, "sent", expect="pending") is True
    assert store.set_status(a.id, "discarded", expect="pending") is False  # two admins: it moved once
    assert store.set_summary(a.id, "terlambat") is False  # only while pending
    assert store.set_status(b.id, "discarded") is True
    assert [x.status for x in store.announcements()] == ["discarded", "sent"]
    assert [x.id for x in store.announcements(status="sent")] == [a.id]
    for bad in ("", " ", "x" * 1001):
        with pytest.raises(ValueError):
            store.set_summary(b.id, bad)
    with pytest.raises(ValueError):
        store.set_status(b.id, "gone")
    with pytest.raises(ValueError):
        store.add_announcements([draft("z", summary="")])
    assert len(store.announcements()) == 2


def test_a_delivery_is_claimed_once_across_instances(backend: Backend) -> None:
    store, replica = open_store(backend), open_store(backend)
    (a,) = store.add_announcements([draft("a")])
    assert store.claim_delivery(a.id, "telegram:1", "telegram") is True
    assert replica.claim_delivery(a.id, "telegram:1", "telegram") is False  # a replica, a restart, a second run
    assert replica.claim_delivery(a.id, "whatsapp:62", "whatsapp") is True
    assert store.delivery_counts(a.id) == {"sending": 2, "sent": 0, "skipped": 0, "failed": 0}
    store.finish_delivery(a.id, "telegram:1", "sent")
    replica.finish_delivery(a.id, "whatsapp:62", "skipped", detail="outside the window")
    assert open_store(backend).delivery_counts(a.id) == {"sending": 0, "sent": 1, "skipped": 1, "failed": 0}
    with pytest.raises(ValueError):
        store.finish_delivery(a.id, "telegram:1", "lost")
    store.subscribe("telegram:1", "telegram", "all")
    assert store.forget_user("telegram:1") == 1
    assert store.delivery_counts(a.id)["sent"] == 0 and store.claim_delivery(a.id, "telegram:1", "telegram")


def test_claims_race_and_exactly_one_wins(backend: Backend) -> None:
    stores = [open_store(backend) for _ in range(4)]
    (a,) = stores[0].add_announcements([draft("a")])
    wins: list[bool] = []
    threads = [threading.Thread(target=lambda s=s: wins.append(s.claim_delivery(a.id, "telegram:9", "telegram")))
               for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False, False, False, True]
