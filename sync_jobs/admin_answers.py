"""Admin answers as documents of the index: a new source next to the crawled pages, source title "Jawaban admin".

Every index build takes them (the reindex job's ``load`` adds them to the crawled documents), so they survive each
reindex; ``rebuild_index`` builds a new version from the serving document store plus the answers in force without a
crawl, after an admin writes, edits, expires or deletes one. The answer pipeline sees them as ordinary hits.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from storage.contracts import DocumentStoreAPI, InsightsStoreAPI
from storage.insights import AdminAnswer, InsightsStore
from storage.models import Chunk, Document
from sync_jobs.chunking import chunk_document

__all__ = ["ADMIN_ANSWER_KIND", "ADMIN_ANSWER_TITLE", "admin_documents", "rebuild_index", "with_admin_answers"]

logger = logging.getLogger(__name__)

ADMIN_ANSWER_TITLE = "Jawaban admin"
ADMIN_ANSWER_KIND = "admin_answer"


def _url(answer: AdminAnswer, base_url: str) -> str:
    """The link the admin gave, else the site's home with a fragment naming the answer (distinct per answer)."""
    if answer.link:
        return answer.link
    base = (base_url or "").split("#", 1)[0] or "https://prodi.invalid/"
    return f"{base}#jawaban-admin-{answer.id}"


def admin_documents(answers: Sequence[AdminAnswer], base_url: str = "") -> tuple[list[Document], list[Chunk]]:
    """One document per answer in force: the question as its heading, the answer as its text."""
    docs: list[Document] = []
    chunks: list[Chunk] = []
    for answer in answers:
        text = answer.answer.strip()
        doc = Document(
            doc_id=f"admin-answer-{answer.id}",
            url=_url(answer, base_url),
            title=ADMIN_ANSWER_TITLE,
            text=f"{answer.question.strip()}\n{text}",
            content_hash=hashlib.sha256(f"{answer.id}:{answer.version}:{answer.question}\n{text}".encode()).hexdigest(),
            fetched_at=answer.created_at,
            kind=ADMIN_ANSWER_KIND,
            sections=((answer.question.strip(), text),),
            meta={"admin_answer_id": str(answer.id), "version": str(answer.version)},
        )
        docs.append(doc)
        chunks.extend(chunk_document(doc))
    return docs, chunks


def with_admin_answers(documents: list[Document], chunks: list[Chunk], store: Path | InsightsStoreAPI,
                       base_url: str = "", today: date | None = None) -> tuple[list[Document], list[Chunk]]:
    """The crawled documents and chunks plus the admin answers in force. ``store`` is the SQLite file (none when it
    does not exist) or an open insights store (PostgreSQL)."""
    if isinstance(store, str | Path):
        if not Path(store).exists():
            return documents, chunks
        opened = InsightsStore(store)
        try:
            answers = opened.active_answers(today)
        finally:
            opened.close()
    else:
        answers = store.active_answers(today)
    extra_docs, extra_chunks = admin_documents(answers, base_url)
    crawled = [d for d in documents if d.kind != ADMIN_ANSWER_KIND]
    return crawled + extra_docs, [c for c in chunks if not c.doc_id.startswith("admin-answer-")] + extra_chunks


def rebuild_index(index_manager: Any, serving_store: Path | DocumentStoreAPI, insights: Path | InsightsStoreAPI,
                  base_url: str = "", today: date | None = None) -> Any:
    """Build a new index version from the serving document store plus the admin answers (no crawl) and switch to
    it; the serving processes reload it as after a reindex. Blocking; the caller holds the reindex lock. ``today``
    decides which answers have expired (default: today in UTC). Each store is a SQLite file or an open store."""
    from storage.docstore import DocumentStore

    documents: list[Document] = []
    chunks: list[Chunk] = []
    if not isinstance(serving_store, str | Path):
        documents, chunks = list(serving_store.documents()), list(serving_store.chunks())
    elif Path(serving_store).exists():
        with DocumentStore(serving_store) as store:
            documents, chunks = list(store.documents()), list(store.chunks())
    documents, chunks = with_admin_answers(documents, chunks, insights, base_url, today)
    if not chunks:  # no crawl yet and no answer left: there is nothing to build an index from
        logger.warning("no crawled pages and no admin answers: the index was not rebuilt")
        return None
    report = index_manager.build(chunks, documents)
    logger.info("index rebuilt for admin answers: version %s, %d chunks", report.version, report.total)
    return report
