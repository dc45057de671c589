"""The one reindex job: crawl → extract → chunk → embed new chunks → validate → atomic swap → announce.

The CLI (``python -m bot reindex``), the schedule and ``/reindex`` all run ``ReindexJob.run``.

Nothing the old index needs is touched before validation passes:

- the crawl writes into a *staging copy* of the document store (``DATA_DIR/staging``), never the serving one;
- the new index is built into a new version directory and the ``current`` pointer switches atomically only at
  the end of a build (``retrieval.IndexManager``); the old version keeps serving until then;
- the staging store replaces the serving store (SQLite online backup, safe with open readers) only after the swap.

Safety valves (run FAILED, no swap, the old index serves): the crawl fetched fewer pages than
``min_pages_ratio`` of the last good run; the share of failed pages passed ``max_error_ratio``; the new index would
hold fewer than ``min_chunks_ratio`` of the old chunk count.

One run at a time across processes (a ``storage.locks`` lock). Every stage writes one JSON log line (run id, stage,
counts, duration) to the run's record and to ``logging`` with ``extra=``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import inspect
import json
import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from retrieval.embedders import CachedEmbedder
from retrieval.search import passage_text
from storage.locks import Lock
from storage.models import Chunk, Document
from storage.runs import JobRun, RunStore

__all__ = [
    "CrawlCounts", "ReindexConfig", "ReindexJob", "ValveTripped", "copy_sqlite", "index_info", "promote_tables",
    "status_snapshot", "warm_passage_cache",
]

logger = logging.getLogger(__name__)

_EMBED_BATCH = 32  # chunks per embedding call: the progress of a long embed is reported after each batch
_PROGRESS_EVERY_S = 0.25  # the run store's progress row is rewritten at most this often (the admin page polls it)

# progress(stage, done, total): a run's stage and how many of its items (pages, chunks) are done; total None when
# unknown. Called from the event loop and from executor threads.
ProgressFn = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True, slots=True)
class ReindexConfig:
    """Thresholds and places for the job (built from Settings by ``bot.wiring``)."""

    serving_store: Path  # the document store the rest of the bot reads
    staging_dir: Path  # where a run's copy of it lives until the swap
    min_pages_ratio: float = 0.5
    max_error_ratio: float = 0.2
    min_chunks_ratio: float = 0.5
    # the document store's tables; only these are replaced in the serving database at the swap
    store_tables: tuple[str, ...] = ("pages", "documents", "chunks", "crawls", "changes")
    # a serving store in PostgreSQL (storage.pg_stores.PgDocumentStore) instead of the SQLite file serving_store:
    # the run still crawls into a local SQLite staging copy (export_sqlite) and swaps it in (replace_from_sqlite)
    serving_db: Any = None


@dataclass(frozen=True, slots=True)
class CrawlCounts:
    """What a crawl did, in the job's terms (the ingestion adapter maps its report to this)."""

    fetched: int  # pages fetched successfully (changed + unchanged, incl. 304 Not Modified)
    changed: int
    unchanged: int
    failed: int
    removed: int
    errors: tuple[str, ...] = ()  # a few example error messages
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


class ValveTripped(Exception):
    """A safety valve stopped the run before the swap; the message says which and why."""


CrawlFn = Callable[[Path], Awaitable[CrawlCounts]]
LoadFn = Callable[[Path], tuple[Sequence[Document], Sequence[Chunk]]]
PublishFn = Callable[[dict[str, Any]], Awaitable[Any]]


def copy_sqlite(source: Path, target: Path) -> None:
    """Copy a SQLite database with the online-backup API (consistent even while others read or write it)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(source, timeout=30)
    try:
        dst = sqlite3.connect(target, timeout=30)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def promote_tables(source: Path, target: Path, tables: Sequence[str]) -> None:
    """Replace ``tables`` of the SQLite database ``target`` with those of ``source`` in one transaction.

    Readers of ``target`` (WAL mode) see either the old or the new rows, never a mix; other tables in ``target``
    are left alone. A ``target`` that does not exist yet becomes a full copy of ``source``.
    """
    if not target.exists():
        copy_sqlite(source, target)
        return
    db = sqlite3.connect(target, timeout=30, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout=30000")
        db.execute("ATTACH DATABASE ? AS staging", (str(source),))
        present = {row[0]: row[1] for row in db.execute("SELECT name, sql FROM staging.sqlite_master WHERE type='table'")}
        existing = {row[0] for row in db.execute("SELECT name FROM main.sqlite_master WHERE type='table'")}
        db.execute("BEGIN IMMEDIATE")
        try:
            for table in tables:
                if table not in present:
                    continue
                if table not in existing:
                    db.execute(present[table])
                columns = [row[1] for row in db.execute(f'PRAGMA staging.table_info("{table}")')]
                names = ", ".join(f'"{c}"' for c in columns)
                db.execute(f'DELETE FROM main."{table}"')
                db.execute(f'INSERT INTO main."{table}" ({names}) SELECT {names} FROM staging."{table}"')
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("DETACH DATABASE staging")
    finally:
        db.close()


class ReindexJob:
    """Runs one reindex. Blocking work (SQLite, chunking, embedding, index build) goes to the default executor.

    ``crawl(store_path)`` crawls (fetch, extract, chunk) into the SQLite document store at ``store_path`` and
    returns ``CrawlCounts``; ``load(store_path)`` returns that store's documents and chunks (blocking);
    ``publish(payload)`` announces a new version to other processes (Redis pub/sub), optional.
    """

    def __init__(
        self,
        *,
        config: ReindexConfig,
        runs: RunStore,
        lock: Lock,
        index_manager: Any,
        crawl: CrawlFn,
        load: LoadFn,
        publish: PublishFn | None = None,
        progress: ProgressFn | None = None,
    ) -> None:
        self.config = config
        self.runs = runs
        self.lock = lock
        self.index_manager = index_manager
        self._crawl = crawl
        self._load = load
        self._publish = publish
        self.progress = progress  # a console progress bar (the CLI); the run store is always told
        self._progress_lock = threading.Lock()
        self._progress_written: dict[str, tuple[str, float]] = {}

    # --- helpers -------------------------------------------------------------------------------------------
    async def _blocking(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def _stage(self, run: JobRun, stage: str, started: float, **counts: Any) -> None:
        line = {"run_id": run.run_id, "stage": stage, "duration_s": round(time.perf_counter() - started, 3), **counts}
        await self._blocking(self.runs.log, run.run_id, line)
        logger.info("reindex %s stage %s %s", run.run_id, stage, json.dumps(counts, ensure_ascii=False, default=str),
                    extra={"run_id": run.run_id, "stage": stage, "duration_s": line["duration_s"], "counts": counts})

    def _progress(self, run: JobRun, stage: str, done: int = 0, total: int | None = None) -> None:
        """Tell the console bar and (throttled) the run store where the run is. Never raises."""
        if self.progress is not None:
            with contextlib.suppress(Exception):
                self.progress(stage, done, total)
        now = time.monotonic()
        with self._progress_lock:
            last_stage, last_at = self._progress_written.get(run.run_id, ("", 0.0))
            due = stage != last_stage or now - last_at >= _PROGRESS_EVERY_S or (total is not None and done >= total)
            if due:
                self._progress_written[run.run_id] = (stage, now)
        if not due:
            return

        def write() -> None:
            try:
                self.runs.set_progress(run.run_id, stage, done, total)
            except Exception as error:  # boundary: progress is a courtesy, never fail a run over it
                logger.debug("could not record the progress of run %s: %s", run.run_id, error)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            write()  # an executor thread: blocking is fine here
        else:
            loop.run_in_executor(None, write)

    async def _run_crawl(self, run: JobRun, staging: Path) -> CrawlCounts:
        """The crawl, told how to report pages done out of pages known when it accepts ``progress=``."""
        try:
            accepts = "progress" in inspect.signature(self._crawl).parameters
        except (TypeError, ValueError):
            accepts = False
        if not accepts:
            return await self._crawl(staging)

        def pages(done: int, known: int) -> None:
            self._progress(run, "crawl", done, known)

        return await self._crawl(staging, progress=pages)  # type: ignore[call-arg]

    def index_info(self) -> dict[str, Any]:
        """The serving index as recorded on disk: version, chunks, documents, embedder, built_at, size_bytes."""
        return index_info(Path(self.index_manager.root))

    # --- the job -------------------------------------------------------------------------------------------
    async def run(self, trigger: str, requested_by: str | None = None) -> JobRun:
        """Run the job once and return its final record. Never raises for job failures (they are FAILED runs)."""
        run = await self._blocking(lambda: self.runs.start(trigger, requested_by=requested_by))
        started = time.perf_counter()
        try:
            acquired = await self.lock.acquire()
        except Exception as error:  # boundary: the job runner records a lock failure as a FAILED run (run() never raises for job failures)
            return await self._finish(run, "FAILED", error=f"could not take the reindex lock: {error}")
        if not acquired:
            owner = None
            with contextlib.suppress(Exception):
                owner = await self.lock.owner()
            await self._stage(run, "lock", started, acquired=False, owner=owner)
            return await self._finish(
                run, "SKIPPED", error=f"another reindex is already running ({owner or 'unknown holder'}); "
                "its result will be served when it finishes")
        staging = self.config.staging_dir / f"docstore-{run.run_id}.sqlite3"
        try:
            return await self._run_locked(run, staging, started)
        except ValveTripped as valve:
            logger.warning("reindex %s stopped by a safety valve: %s", run.run_id, valve)
            return await self._finish(run, "FAILED", error=str(valve))
        except asyncio.CancelledError as cancelled:  # shutdown, or (a reindex child) the parent process died
            reason = str(cancelled) or "the run was cancelled (shutdown)"
            await asyncio.shield(self._finish(run, "ABORTED", error=reason))
            raise
        except Exception as error:  # boundary: the job runner records any failure as a FAILED run (run() never raises for job failures)
            logger.exception("reindex %s failed", run.run_id)
            return await self._finish(run, "FAILED", error=f"{type(error).__name__}: {error}"[:1000])
        finally:
            await self._blocking(self._remove_staging, staging)
            with contextlib.suppress(Exception):
                await self.lock.release()

    async def _finish(self, run: JobRun, status: str, *, error: str | None = None, **counts: Any) -> JobRun:
        with self._progress_lock:
            self._progress_written.pop(run.run_id, None)
        final = await self._blocking(lambda: self.runs.finish(run.run_id, status, error=error, **counts))
        logger.log(
            logging.INFO if status in ("SUCCESS", "SKIPPED") else logging.ERROR,
            "reindex %s finished: %s%s", run.run_id, status, f" ({error})" if error else "",
            extra={"run_id": run.run_id, "stage": "finish", "status": status,
                   "duration_s": round(final.duration_seconds, 3)},
        )
        await self._blocking(self.runs.log, run.run_id, {"run_id": run.run_id, "stage": "finish", "status": status,
                                                          "duration_s": round(final.duration_seconds, 3),
                                                          "error": error})
        return final

    def _abort_reason(self) -> str:
        """Why the runs left RUNNING are closed, once this process holds the lock (so none of them is alive)."""
        dead = getattr(self.lock, "taken_over_from", None)
        if dead:
            return f"interrupted: {dead} died before the run ended (its lock was taken over)"
        return "the process stopped before the run ended"

    def _check_lock(self) -> None:
        if not getattr(self.lock, "held", True):
            raise ValveTripped("lost the reindex lock during the run (Redis expired it); nothing was swapped")

    async def _run_locked(self, run: JobRun, staging: Path, started: float) -> JobRun:
        cfg = self.config
        # 0. leftovers of a run that died (we hold the lock, so no other run is alive) --------------------------
        t = time.perf_counter()
        aborted = await self._blocking(lambda: self.runs.abort_running(self._abort_reason(), (run.run_id,)))
        removed = await self._blocking(self._clean_leftovers, staging.name)
        if aborted or removed:
            await self._stage(run, "recover", t, aborted_runs=aborted, removed=removed)

        # 1. staging copy of the serving document store ---------------------------------------------------------
        t = time.perf_counter()
        self._progress(run, "prepare")
        existed = cfg.serving_db is not None or cfg.serving_store.exists()
        await self._blocking(self._prepare_staging, staging)
        await self._stage(run, "prepare", t, serving_store_existed=existed)

        # 2. crawl into the staging store ---------------------------------------------------------------------
        t = time.perf_counter()
        self._progress(run, "crawl")
        counts = await self._run_crawl(run, staging)
        await self._blocking(lambda: self.runs.update(
            run.run_id, pages_fetched=counts.fetched, pages_changed=counts.changed,
            pages_unchanged=counts.unchanged, pages_failed=counts.failed, pages_removed=counts.removed))
        await self._stage(run, "crawl", t, pages_fetched=counts.fetched, pages_changed=counts.changed,
                          pages_unchanged=counts.unchanged, pages_failed=counts.failed,
                          pages_removed=counts.removed, errors=list(counts.errors[:5]), **counts.extra)
        self._check_lock()

        # 3. the crawled documents and their chunks (extracted and chunked by the crawl) ------------------------
        t = time.perf_counter()
        self._progress(run, "chunk")
        documents, chunks = await self._blocking(self._load_and_chunk, staging)
        old = self.index_info()
        old_chunks = int(old.get("chunks") or 0)
        await self._stage(run, "chunk", t, documents=len(documents), chunks=len(chunks), old_chunks=old_chunks)

        # 3b. the safety valves, each with its threshold and measured value -----------------------------------
        t = time.perf_counter()
        self._progress(run, "validate")
        checks = await self._valve_checks(counts, len(chunks), old_chunks)
        failed = [c for c in checks if not c["ok"]]
        await self._stage(run, "validate", t, checks=checks, passed=not failed)
        if failed:
            raise ValveTripped(failed[0]["error"])
        self._check_lock()

        # 4. embed only what the cache does not know -------------------------------------------------------------
        t = time.perf_counter()
        self._progress(run, "embed", 0, len(chunks))
        embedded, embed_seconds = await self._blocking(self._embed_new, chunks, run)
        await self._stage(run, "embed", t, chunks_embedded=embedded, embed_seconds=round(embed_seconds, 3))
        self._check_lock()

        # 5. build a new version and switch the pointer atomically ---------------------------------------------
        t = time.perf_counter()
        self._progress(run, "index")
        report = await self._blocking(self.index_manager.build, chunks, documents)
        if embedded is None:  # the embedder has no cache: the build did the embedding
            embedded, embed_seconds = report.embedded, report.duration_s
        await self._stage(run, "index", t, version=report.version, chunks_total=report.total,
                          chunks_added=report.added, chunks_removed=report.removed, hnsw=report.hnsw)

        # 6. the staging store becomes the serving store ------------------------------------------------------
        t = time.perf_counter()
        self._progress(run, "promote")
        if cfg.serving_db is not None:
            await self._blocking(cfg.serving_db.replace_from_sqlite, staging, cfg.store_tables)
        else:
            await self._blocking(promote_tables, staging, cfg.serving_store, cfg.store_tables)
        await self._stage(run, "promote", t)

        # 7. tell every process ---------------------------------------------------------------------------------
        if self._publish is not None:
            t = time.perf_counter()
            payload = {"version": report.version, "run_id": run.run_id, "chunks": report.total}
            try:
                receivers = await self._publish(payload)
            except Exception as error:  # boundary: the announcement is a courtesy; the pointer check still picks it up
                logger.warning("could not announce index %s: %s", report.version, error)
                receivers = None
            await self._stage(run, "announce", t, version=report.version, receivers=receivers)

        return await self._finish(
            run, "SUCCESS",
            chunks_added=report.added, chunks_removed=report.removed, chunks_embedded=int(embedded),
            chunks_total=report.total, embed_seconds=float(embed_seconds), index_version=report.version,
            error=("; ".join(counts.errors[:3]) or None) if counts.failed else None,
        )

    async def _valve_checks(self, counts: CrawlCounts, chunks: int, old_chunks: int) -> list[dict[str, Any]]:
        """Every safety valve as ``{name, ok, threshold, measured, error}``; the first failed one stops the run."""
        cfg = self.config
        examples = "; ".join(counts.errors[:3])
        tail = f": {examples}" if examples else ""
        last = await self._blocking(self.runs.last_success)
        attempted = counts.fetched + counts.failed
        checks: list[dict[str, Any]] = [{
            "name": "pages_fetched", "ok": counts.fetched > 0, "threshold": 1, "measured": counts.fetched,
            "error": "the crawl fetched no pages (the site is down or unreachable?)" + tail,
        }]
        if last is not None and last.pages_fetched:
            checks.append({
                "name": "min_pages_ratio", "ok": counts.fetched >= cfg.min_pages_ratio * last.pages_fetched,
                "threshold": cfg.min_pages_ratio, "measured": round(counts.fetched / last.pages_fetched, 4),
                "detail": {"fetched": counts.fetched, "last_good": last.pages_fetched, "last_run": last.run_id},
                "error": f"the crawl fetched {counts.fetched} pages, fewer than {cfg.min_pages_ratio:.0%} of the "
                         f"{last.pages_fetched} of the last good run ({last.run_id})" + tail,
            })
        if attempted:
            checks.append({
                "name": "max_error_ratio", "ok": counts.failed / attempted <= cfg.max_error_ratio,
                "threshold": cfg.max_error_ratio, "measured": round(counts.failed / attempted, 4),
                "detail": {"failed": counts.failed, "attempted": attempted},
                "error": f"{counts.failed} of {attempted} pages failed ({counts.failed / attempted:.0%}, the limit "
                         f"is {cfg.max_error_ratio:.0%})" + tail,
            })
        checks.append({
            "name": "chunks", "ok": chunks > 0, "threshold": 1, "measured": chunks,
            "error": "the crawl produced no text to index (0 chunks); check SITE_SEEDS and the site",
        })
        if old_chunks:
            checks.append({
                "name": "min_chunks_ratio", "ok": chunks >= cfg.min_chunks_ratio * old_chunks,
                "threshold": cfg.min_chunks_ratio, "measured": round(chunks / old_chunks, 4),
                "detail": {"chunks": chunks, "old_chunks": old_chunks},
                "error": f"the new index would have {chunks} chunks, fewer than {cfg.min_chunks_ratio:.0%} of the "
                         f"current {old_chunks}; not swapping (pages missing from the site? see the crawl errors)",
            })
        for check in checks:
            if check["ok"]:
                check.pop("error")
        return checks

    # --- blocking parts -----------------------------------------------------------------------------------
    def _prepare_staging(self, staging: Path) -> None:
        staging.parent.mkdir(parents=True, exist_ok=True)
        self._remove_staging(staging)
        if self.config.serving_db is not None:
            self.config.serving_db.export_sqlite(staging)
        elif self.config.serving_store.exists():
            copy_sqlite(self.config.serving_store, staging)

    @staticmethod
    def _remove_staging(staging: Path) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(staging) + suffix).unlink(missing_ok=True)

    def _load_and_chunk(self, staging: Path) -> tuple[list[Document], list[Chunk]]:
        documents, stored = self._load(staging)
        chunks: list[Chunk] = []
        seen: set[str] = set()
        for chunk in stored:
            if chunk.chunk_id not in seen:
                seen.add(chunk.chunk_id)
                chunks.append(chunk)
        return list(documents), chunks

    def _embed_new(self, chunks: Sequence[Chunk], run: JobRun | None = None) -> tuple[int | None, float]:
        """Warm the passage cache with the chunks it lacks, timing only that. (None, 0) without a cache."""
        def batch(done: int, total: int) -> None:
            if run is not None:
                self._progress(run, "embed", done, total)

        return warm_passage_cache(self.index_manager.embedder, chunks, on_batch=batch)

    # --- start-up recovery and status ---------------------------------------------------------------------
    async def recover(self) -> dict[str, Any]:
        """After a crash: mark RUNNING runs ABORTED, remove staging files and half-built index versions.

        Only while holding the reindex lock, so a run in progress on another replica is left alone.
        """
        if not await self.lock.acquire():
            return {"recovered": False, "reason": "a reindex is running elsewhere"}
        try:
            aborted = await self._blocking(self.runs.abort_running, self._abort_reason())
            removed = await self._blocking(self._clean_leftovers)
        finally:
            await self.lock.release()
        if aborted or removed:
            logger.warning("recovered after an interrupted reindex: aborted runs %s, removed %s", aborted, removed)
        return {"recovered": True, "aborted_runs": aborted, "removed": removed}

    def _clean_leftovers(self, keep: str = "") -> list[str]:
        removed: list[str] = []
        if self.config.staging_dir.exists():
            for path in self.config.staging_dir.iterdir():
                if path.name.startswith("docstore-") and not (keep and path.name.startswith(keep)):
                    path.unlink(missing_ok=True)
                    removed.append(str(path))
        root = Path(self.index_manager.root)
        versions = root / "versions"
        if not versions.exists():
            return removed
        root.mkdir(parents=True, exist_ok=True)
        with open(root / ".build.lock", "a+") as lock_file:
            try:
                fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return removed  # a build is running in another process: its temp dir is not a leftover
            try:
                for path in versions.glob(".tmp-*"):
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(str(path))
                for stray in root.glob(".current.*"):
                    stray.unlink(missing_ok=True)
                    removed.append(str(stray))
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)
        return removed

    async def status(self, limit: int = 10) -> dict[str, Any]:
        """``{"index": {"version", "chunks", …, "last_crawl"}, "runs": [newest first]}``."""
        return await self._blocking(status_snapshot, self.runs, Path(self.index_manager.root), limit)


def warm_passage_cache(embedder: Any, chunks: Sequence[Chunk],
                       on_batch: Callable[[int, int], None] | None = None) -> tuple[int | None, float]:
    """Embed the chunks a ``CachedEmbedder`` lacks, in batches (``on_batch(done, total)`` after each), so the
    index build that follows finds them all in the cache. Returns (chunks computed, seconds); (None, 0.0) when the
    embedder has no cache (the build embeds then)."""
    if not isinstance(embedder, CachedEmbedder):
        return None, 0.0
    texts = [passage_text(c) for c in chunks]
    before = embedder.computed
    started = time.perf_counter()
    for start in range(0, len(texts), _EMBED_BATCH):
        embedder.embed(texts[start:start + _EMBED_BATCH], kind="passage")
        if on_batch is not None:
            on_batch(min(start + _EMBED_BATCH, len(texts)), len(texts))
    return embedder.computed - before, time.perf_counter() - started


def index_info(root: Path) -> dict[str, Any]:
    """The index that ``root/current`` names, as recorded in its params.json (no loading, no embedder)."""
    try:
        name = (root / "current").read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        name = None
    if name is None:
        return {"version": None, "chunks": 0, "documents": 0}
    path = root / "versions" / name
    try:
        params = json.loads((path / "params.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return {"version": name, "chunks": 0, "documents": 0,
                "error": f"unreadable params.json ({error}); rebuild with `python -m bot reindex`"}
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    counts = params.get("counts", {})
    return {
        "version": name,
        "chunks": int(counts.get("chunks", 0)),
        "documents": int(counts.get("documents", 0)),
        "embedder": params.get("embedder"),
        "built_at": params.get("built_at"),
        "size_bytes": size,
    }


def status_snapshot(runs: RunStore, index_root: Path, limit: int = 10) -> dict[str, Any]:
    """``{"index": {"version", "chunks", …, "last_crawl"}, "runs": [newest first]}`` (blocking)."""
    index = index_info(index_root)
    recent = runs.recent(limit)
    last = next((r for r in recent if r.status == "SUCCESS"), None) or runs.last_success()
    index["last_crawl"] = last.ended_at if last else None
    return {"index": index, "runs": [r.as_json() for r in recent]}
