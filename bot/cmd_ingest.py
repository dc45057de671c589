"""`crawl` and `docs`: fill the document store from the site, and show what it holds."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from bot.settings import Settings

__all__ = ["cmd_crawl", "cmd_docs"]


def cmd_crawl(args: argparse.Namespace, settings: Settings) -> int:
    """Crawl the site into the document store; print the CrawlReport (``--json``) or a summary."""
    from bot.settings import SettingsError
    from bot.wiring import build_crawl_config, crawl_target, open_docstore, require_site, uses_demo_site
    from sync_jobs.crawl import crawl_site

    seeds = list(getattr(args, "seed", None) or [])
    try:
        require_site(settings, seeds)
        if not uses_demo_site(settings, seeds):
            build_crawl_config(settings, seeds=seeds or None, max_pages=getattr(args, "max_pages", None))
    except (ValueError, SettingsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    async def crawl():
        with crawl_target(settings, seeds or None, getattr(args, "max_pages", None)) as config:
            return await crawl_site(config, store, progress=pages)

    from bot.progress import console_progress

    bar = console_progress(args.json)
    pages = (lambda done, known: bar("crawl", done, known)) if bar is not None else None
    store = open_docstore(settings)
    try:
        report = asyncio.run(crawl())
    finally:
        store.close()
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        pages = report.as_json()["pages"]
        print("Crawl " + ("FAILED" if not report.ok else "done") + f" in {report.duration_s:.1f}s: "
              + ", ".join(f"{k} {v}" for k, v in pages.items()))
        if report.ok:
            print(f"Store: {report.documents} documents, {report.chunks} chunks at {settings.db_path}")
        for error in report.errors[:10]:
            print(f"  - {error}")
    return 0 if report.ok else 1


def cmd_docs(args: argparse.Namespace, settings: Settings) -> int:
    """Print stored documents (or chunks with ``--chunks``) as JSON lines {doc_id, chunk_id, url, title, section,
    text}."""
    from bot.wiring import open_docstore

    store = open_docstore(settings)
    try:
        out = sys.stdout
        if args.chunks:
            for chunk in store.chunks():
                out.write(json.dumps({"doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id, "url": chunk.url,
                                      "title": chunk.title, "section": chunk.section, "text": chunk.text},
                                     ensure_ascii=False) + "\n")
        else:
            for doc in store.documents():
                out.write(json.dumps({"doc_id": doc.doc_id, "chunk_id": None, "url": doc.url, "title": doc.title,
                                      "section": "", "text": doc.text, "kind": doc.kind, "urls": list(doc.urls)},
                                     ensure_ascii=False) + "\n")
        if not args.json and not args.chunks and not store.counts()["documents"]:
            print("The document store is empty: run `python -m bot crawl` first.", file=sys.stderr)
    finally:
        store.close()
    return 0
