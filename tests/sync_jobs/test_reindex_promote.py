"""The swap: only the document store's tables are replaced in the serving database."""

from __future__ import annotations

import sqlite3

from sync_jobs.reindex import promote_tables


def test_promote_replaces_only_the_store_tables(tmp_path) -> None:
    serving, staging = tmp_path / "serving.sqlite3", tmp_path / "staging.sqlite3"
    with sqlite3.connect(serving) as db:
        db.executescript("CREATE TABLE documents (id TEXT, body TEXT); INSERT INTO documents VALUES ('a', 'old');"
                         "CREATE TABLE feedback (v TEXT); INSERT INTO feedback VALUES ('up');")
    db.close()
    with sqlite3.connect(staging) as db:
        db.executescript("CREATE TABLE documents (id TEXT, body TEXT); INSERT INTO documents VALUES ('a', 'new'), "
                         "('b', 'new'); CREATE TABLE pages (url TEXT); INSERT INTO pages VALUES ('u');"
                         "CREATE TABLE feedback (v TEXT);")
    db.close()
    reader = sqlite3.connect(serving)  # an open reader does not block the promotion
    try:
        promote_tables(staging, serving, ("documents", "pages", "chunks"))
        assert reader.execute("SELECT body FROM documents ORDER BY id").fetchall() == [("new",), ("new",)]
        assert reader.execute("SELECT url FROM pages").fetchall() == [("u",)]
        assert reader.execute("SELECT v FROM feedback").fetchall() == [("up",)]
    finally:
        reader.close()
    fresh = tmp_path / "fresh.sqlite3"
    promote_tables(staging, fresh, ("documents",))
    db = sqlite3.connect(fresh)
    assert db.execute("SELECT COUNT(*) FROM documents").fetchone() == (2,)
    db.close()
