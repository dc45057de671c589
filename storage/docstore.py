"""Document and crawl-state store (SQLite in WAL mode: one writer, any number of readers).

Every method blocks; async code calls it through an executor. One connection is shared behind a lock, so the
store may be used from executor threads. A crawl is committed in one transaction (``commit_crawl``): a crawl that
fails before that leaves the store exactly as it was.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from storage.models import Chunk, Document

__all__ = [
    "PAGE_COLUMNS", "DocChanges", "DocumentStore", "PageState", "chunk_from_row", "document_from_row", "document_row",
    "net_changes", "page_state_from_row", "page_state_row",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY,            -- normalised URL (the crawl key)
    fetch_url TEXT NOT NULL,         -- URL as requested
    final_url TEXT NOT NULL,         -- after redirects / canonical link
    status TEXT NOT NULL,            -- ok (has documents) | links (listing page: links only)
    http_status INTEGER NOT NULL DEFAULT 0,
    etag TEXT NOT NULL DEFAULT '',
    last_modified TEXT NOT NULL DEFAULT '',
    body_hash TEXT NOT NULL DEFAULT '',
    content_type TEXT NOT NULL DEFAULT '',
    misses INTEGER NOT NULL DEFAULT 0,
    first_seen TEXT NOT NULL DEFAULT '',
    last_seen TEXT NOT NULL DEFAULT '',
    fetched_at TEXT NOT NULL DEFAULT '',
    depth INTEGER NOT NULL DEFAULT 0,
    links TEXT NOT NULL DEFAULT '[]',
    extract TEXT NOT NULL DEFAULT '[]',
    reason TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    fetched_at TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'page',
    urls TEXT NOT NULL DEFAULT '[]',
    sections TEXT NOT NULL DEFAULT '[]',
    meta TEXT NOT NULL DEFAULT '{}',
    seq INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    title TEXT NOT NULL,
    section TEXT NOT NULL,
    position INTEGER NOT NULL,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    fetched_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, position);
CREATE TABLE IF NOT EXISTS crawls (
    crawl_id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    report TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS changes (
    crawl_id INTEGER NOT NULL,
    doc_id TEXT NOT NULL,
    change TEXT NOT NULL             -- added | changed | removed
);
CREATE INDEX IF NOT EXISTS changes_crawl ON changes(crawl_id);
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class PageState:
    """What the crawler remembers about one URL between crawls."""

    url: str
    fetch_url: str
    final_url: str
    status: str
    http_status: int = 0
    etag: str = ""
    last_modified: str = ""
    body_hash: str = ""
    content_type: str = ""
    misses: int = 0
    first_seen: str = ""
    last_seen: str = ""
    fetched_at: str = ""
    depth: int = 0
    links: tuple[str, ...] = ()
    extract: tuple[Document, ...] = ()  # documents extracted from this URL, before site-wide clean-up
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DocChanges:
    """Documents added, changed and removed by one commit: what an incremental index needs."""

    crawl_id: int
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    chunks_added: int = 0
    chunks_removed: int = 0
    extra: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def touched(self) -> tuple[str, ...]:
        return self.added + self.changed


def _doc_to_json(doc: Document) -> dict:
    return {"doc_id": doc.doc_id, "url": doc.url, "title": doc.title, "text": doc.text,
            "content_hash": doc.content_hash, "fetched_at": doc.fetched_at, "kind": doc.kind,
            "urls": list(doc.urls), "sections": [list(s) for s in doc.sections], "meta": dict(doc.meta)}


def _doc_from_json(data: Mapping) -> Document:
    return Document(doc_id=data["doc_id"], url=data["url"], title=data["title"], text=data["text"],
                    content_hash=data["content_hash"], fetched_at=data.get("fetched_at", ""),
                    kind=data.get("kind", "page"), urls=tuple(data.get("urls", ())),
                    sections=tuple((h, b) for h, b in data.get("sections", ())), meta=dict(data.get("meta", {})))


# --- row <-> record, shared with the PostgreSQL store (storage.pg_stores): same columns, same text encodings ---------


def document_from_row(row: Mapping) -> Document:
    return Document(doc_id=row["doc_id"], url=row["url"], title=row["title"], text=row["text"],
                    content_hash=row["content_hash"], fetched_at=row["fetched_at"], kind=row["kind"],
                    urls=tuple(json.loads(row["urls"])),
                    sections=tuple((h, b) for h, b in json.loads(row["sections"])),
                    meta=json.loads(row["meta"]))


def chunk_from_row(row: Mapping) -> Chunk:
    return Chunk(chunk_id=row["chunk_id"], doc_id=row["doc_id"], url=row["url"], title=row["title"],
                 section=row["section"], position=row["position"], text=row["text"],
                 content_hash=row["content_hash"], fetched_at=row["fetched_at"])


def page_state_from_row(r: Mapping) -> PageState:
    return PageState(
        url=r["url"], fetch_url=r["fetch_url"], final_url=r["final_url"], status=r["status"],
        http_status=r["http_status"], etag=r["etag"], last_modified=r["last_modified"],
        body_hash=r["body_hash"], content_type=r["content_type"], misses=r["misses"],
        first_seen=r["first_seen"], last_seen=r["last_seen"], fetched_at=r["fetched_at"], depth=r["depth"],
        links=tuple(json.loads(r["links"])),
        extract=tuple(_doc_from_json(d) for d in json.loads(r["extract"])), reason=r["reason"],
    )


PAGE_COLUMNS = ("url", "fetch_url", "final_url", "status", "http_status", "etag", "last_modified", "body_hash",
                "content_type", "misses", "first_seen", "last_seen", "fetched_at", "depth", "links", "extract", "reason")


def page_state_row(p: PageState) -> tuple:
    """The values of ``PAGE_COLUMNS`` for one page."""
    return (p.url, p.fetch_url, p.final_url, p.status, p.http_status, p.etag, p.last_modified, p.body_hash,
            p.content_type, p.misses, p.first_seen, p.last_seen, p.fetched_at, p.depth,
            json.dumps(list(p.links), ensure_ascii=False),
            json.dumps([_doc_to_json(d) for d in p.extract], ensure_ascii=False), p.reason)


def document_row(doc: Document, seq: int, now: str) -> tuple:
    """(url, title, text, content_hash, fetched_at, kind, urls, sections, meta, seq, updated_at, doc_id)."""
    return (doc.url, doc.title, doc.text, doc.content_hash, doc.fetched_at, doc.kind,
            json.dumps(list(doc.urls), ensure_ascii=False),
            json.dumps([list(s) for s in doc.sections], ensure_ascii=False),
            json.dumps(dict(doc.meta), ensure_ascii=False), seq, now, doc.doc_id)


def net_changes(rows: Iterable[tuple[int, str, str]], last: int) -> DocChanges:
    """The net effect of ``(crawl_id, doc_id, change)`` rows in crawl order, as of crawl ``last``."""
    state: dict[str, str] = {}
    for _, doc_id, change in rows:
        before = state.get(doc_id)
        if change == "removed":
            state[doc_id] = "gone" if before == "added" else "removed"
        elif change == "added" and before in ("removed",):
            state[doc_id] = "changed"
        else:
            state[doc_id] = change if before not in ("added",) else "added"
    pick = lambda kind: tuple(sorted(d for d, c in state.items() if c == kind))  # noqa: E731
    return DocChanges(int(last), pick("added"), pick("changed"), pick("removed"))


class DocumentStore:
    """SQLite store of documents, chunks, crawl state and per-crawl changes, at ``db_path``."""

    def __init__(self, db_path: Path | str) -> None:
        self.path = Path(db_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.executescript(_SCHEMA)

    # --- lifecycle ------------------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> DocumentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- documents and chunks -------------------------------------------------------------------------------
    _document = staticmethod(document_from_row)
    _chunk = staticmethod(chunk_from_row)

    def documents(self, kind: str | None = None) -> list[Document]:
        """Every stored document in a stable order (optionally only one kind)."""
        with self._lock:
            if kind is None:
                rows = self._db.execute("SELECT * FROM documents ORDER BY seq, doc_id").fetchall()
            else:
                rows = self._db.execute("SELECT * FROM documents WHERE kind=? ORDER BY seq, doc_id", (kind,)).fetchall()
        return [self._document(r) for r in rows]

    def document(self, doc_id: str) -> Document | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
        return self._document(row) if row else None

    def chunks(self, doc_ids: Iterable[str] | None = None) -> list[Chunk]:
        """Every stored chunk (or those of ``doc_ids``), grouped by document in position order."""
        with self._lock:
            if doc_ids is None:
                rows = self._db.execute(
                    "SELECT c.* FROM chunks c JOIN documents d USING(doc_id) ORDER BY d.seq, c.doc_id, c.position"
                ).fetchall()
            else:
                ids = list(doc_ids)
                rows = []
                for start in range(0, len(ids), 500):
                    part = ids[start:start + 500]
                    rows += self._db.execute(
                        f"SELECT * FROM chunks WHERE doc_id IN ({','.join('?' * len(part))}) ORDER BY doc_id, position",
                        part,
                    ).fetchall()
        return [self._chunk(r) for r in rows]

    def doc_hashes(self) -> dict[str, str]:
        """doc_id → content_hash of every stored document."""
        with self._lock:
            return {r[0]: r[1] for r in self._db.execute("SELECT doc_id, content_hash FROM documents")}

    def counts(self) -> dict[str, int]:
        with self._lock:
            docs = self._db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            chunks = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            pages = self._db.execute("SELECT COUNT(*) FROM pages WHERE status='ok'").fetchone()[0]
        return {"documents": docs, "chunks": chunks, "pages": pages}

    # --- crawl state ----------------------------------------------------------------------------------------
    def page_states(self) -> dict[str, PageState]:
        """Every remembered URL, keyed by its normalised form."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM pages").fetchall()
        return {r["url"]: page_state_from_row(r) for r in rows}

    def _write_pages(self, pages: Iterable[PageState], removed: Iterable[str]) -> None:
        self._db.executemany("DELETE FROM pages WHERE url=?", [(u,) for u in removed])
        self._db.executemany(
            f"INSERT OR REPLACE INTO pages ({', '.join(PAGE_COLUMNS)}) VALUES ({','.join('?' * len(PAGE_COLUMNS))})",
            [page_state_row(p) for p in pages],
        )

    # --- commits --------------------------------------------------------------------------------------------
    def _sync(self, crawl_id: int, documents: list[Document], chunks: Mapping[str, list[Chunk]],
              replace_all: bool) -> DocChanges:
        existing = {r[0]: r[1] for r in self._db.execute("SELECT doc_id, content_hash FROM documents")}
        added: list[str] = []
        changed: list[str] = []
        chunks_added = chunks_removed = 0
        now = _now()
        seen: set[str] = set()
        for seq, doc in enumerate(documents):
            seen.add(doc.doc_id)
            old_hash = existing.get(doc.doc_id)
            row = document_row(doc, seq, now)
            if old_hash == doc.content_hash:
                self._db.execute(
                    "UPDATE documents SET url=?, title=?, text=?, content_hash=?, fetched_at=?, kind=?, urls=?,"
                    " sections=?, meta=?, seq=?, updated_at=? WHERE doc_id=?", row)
                continue
            if doc.doc_id not in chunks:
                raise ValueError(f"document {doc.doc_id} is new or changed but no chunks were given for it")
            (changed if old_hash is not None else added).append(doc.doc_id)
            chunks_removed += self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc.doc_id,)).rowcount
            self._db.execute("DELETE FROM documents WHERE doc_id=?", (doc.doc_id,))
            self._db.execute(
                "INSERT INTO documents (url, title, text, content_hash, fetched_at, kind, urls, sections, meta, seq,"
                " updated_at, doc_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", row)
            new_chunks = chunks[doc.doc_id]
            self._db.executemany(
                "INSERT OR REPLACE INTO chunks (chunk_id, doc_id, url, title, section, position, text, content_hash,"
                " fetched_at) VALUES (?,?,?,?,?,?,?,?,?)",
                [(c.chunk_id, c.doc_id, c.url, c.title, c.section, c.position, c.text, c.content_hash, c.fetched_at)
                 for c in new_chunks],
            )
            chunks_added += len(new_chunks)
        removed = sorted(set(existing) - seen) if replace_all else []
        for doc_id in removed:
            chunks_removed += self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,)).rowcount
            self._db.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))
        self._db.executemany(
            "INSERT INTO changes (crawl_id, doc_id, change) VALUES (?,?,?)",
            [(crawl_id, d, "added") for d in added] + [(crawl_id, d, "changed") for d in changed]
            + [(crawl_id, d, "removed") for d in removed],
        )
        return DocChanges(crawl_id, tuple(added), tuple(changed), tuple(removed), chunks_added, chunks_removed)

    def commit_crawl(self, *, pages: Iterable[PageState], removed_pages: Iterable[str], documents: list[Document],
                     chunks: Mapping[str, list[Chunk]], report: Mapping | None = None,
                     started_at: str = "") -> DocChanges:
        """Atomically record one finished crawl: page states, the full current document set (documents not in it
        are removed), chunks for every added or changed document, and the change list."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cur = self._db.execute(
                    "INSERT INTO crawls (started_at, finished_at, report) VALUES (?,?,?)",
                    (started_at or _now(), _now(), json.dumps(dict(report or {}))),
                )
                crawl_id = int(cur.lastrowid)
                self._write_pages(list(pages), list(removed_pages))
                changes = self._sync(crawl_id, documents, chunks, replace_all=True)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return changes

    def sync_documents(self, documents: list[Document], chunks: Mapping[str, list[Chunk]],
                       *, replace_all: bool = True) -> DocChanges:
        """Store ``documents`` outside a crawl (e.g. loaded from JSONL), with the same change tracking.
        ``replace_all`` removes stored documents that are not in ``documents``."""
        if replace_all:
            return self.commit_crawl(pages=(), removed_pages=(), documents=documents, chunks=chunks,
                                     report={"source": "sync_documents"})
        return self._sync_partial(documents, chunks)

    def _sync_partial(self, documents: list[Document], chunks: Mapping[str, list[Chunk]]) -> DocChanges:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                now = _now()
                crawl_id = int(self._db.execute(
                    "INSERT INTO crawls (started_at, finished_at, report) VALUES (?,?,?)", (now, now, "{}")
                ).lastrowid)
                changes = self._sync(crawl_id, documents, chunks, replace_all=False)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return changes

    # --- change history -------------------------------------------------------------------------------------
    def last_crawl_id(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT MAX(crawl_id) FROM crawls").fetchone()
        return int(row[0] or 0)

    def changes_since(self, crawl_id: int) -> DocChanges:
        """Net document changes in the commits after ``crawl_id`` (0 = since the beginning)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT crawl_id, doc_id, change FROM changes WHERE crawl_id > ? ORDER BY crawl_id", (crawl_id,)
            ).fetchall()
            last = self._db.execute("SELECT MAX(crawl_id) FROM crawls").fetchone()[0] or crawl_id
        return net_changes(rows, int(last))

    def last_changes(self) -> DocChanges:
        """What the most recent commit added, changed and removed."""
        last = self.last_crawl_id()
        return self.changes_since(last - 1) if last else DocChanges(0)
