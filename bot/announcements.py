"""Announcements pushed from the nightly rescrape (issue 32): finding them at the end of a reindex.

:class:`AnnouncingReindexJob` is the one reindex job (``sync_jobs.reindex.ReindexJob``) that also records the
announcements of a successful run. While the job loads the crawled staging store (before it is promoted), the
finder reads the crawl's added and changed documents there and the changed ones' previous versions in the serving
store, and keeps the drafts ``sync_jobs.announcements.detect`` accepts; when the run ends in SUCCESS they are
written to the announcement store (``pending``) and counted in the run's log (stage ``announcements``). A failed
run records nothing. The first run of an empty store records nothing either: every page is new then, and none of it
is news to anyone.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.settings import Settings
from handlers.chat import announce_callback, parse_announce_callback
from sync_jobs.reindex import ReindexJob

__all__ = ["AnnouncementFinder", "AnnouncingReindexJob", "announce_callback", "announce_rules",
           "notify_pending", "parse_announce_callback", "sent_between"]

logger = logging.getLogger(__name__)


def announce_rules(settings: Settings, today):  # -> sync_jobs.announcements.AnnounceRules
    """ANNOUNCE_PATH_PREFIXES and ANNOUNCE_MAX_AGE_DAYS as the detector's rules, for ``today`` (in TIMEZONE)."""
    from sync_jobs.announcements import AnnounceRules, prefixes_from

    return AnnounceRules(prefixes=prefixes_from(settings.announce_path_prefixes),
                         max_age_days=settings.announce_max_age_days, today=today)


def _epoch(stamp: str) -> float | None:
    from datetime import UTC, datetime

    try:
        parsed = datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def sent_between(store: Any, since: float, until: float, *, limit: int = 200) -> list[dict[str, Any]]:
    """The announcements sent (approved on /admin, on Telegram or by ANNOUNCE_MODE=auto) between ``since`` and
    ``until`` (epoch seconds; the time the status became ``sent``), oldest first, each with its delivery counts
    (blocking). The weekly digest lists them."""
    out = []
    for a in store.announcements(status="sent", limit=limit):
        at = _epoch(a.updated_at)
        if at is None or not since <= at <= until:
            continue
        counts = store.delivery_counts(a.id)
        out.append({**a.as_json(), "deliveries": {k: int(counts.get(k, 0)) for k in ("sent", "skipped", "failed",
                                                                                     "sending")}})
    return sorted(out, key=lambda d: (d["updated_at"], d["id"]))


# --- the Telegram admin notice (ANNOUNCE_MODE=review) --------------------------------------------------------------
NOTICE_LIMIT = 10  # notices per run; the rest wait on /admin


def notice_text(a: Any) -> str:
    return (f"📢 Pengumuman baru menunggu persetujuan:\n\n{a.title}\n{a.date}\n\n{a.summary}\n\n{a.url}\n\n"
            "Kirim ke pelanggan, atau buang? (Ringkasan dapat diubah di halaman /admin.)")


async def notify_pending(notify: Callable[..., Any], added: list[Any], *, limit: int = NOTICE_LIMIT) -> int:
    """One notice per new pending announcement to the Telegram admins (``notify(text, buttons=…)``, a
    ``bot.channels.telegram.TelegramAdminNotifier``) with Kirim / Buang buttons; at most ``limit``, then one line
    pointing at /admin. Returns the notices sent (summed over admins)."""
    sent = 0
    for a in added[:limit]:
        buttons = [[("Kirim", announce_callback("send", a.id)), ("Buang", announce_callback("discard", a.id))]]
        sent += int(await notify(notice_text(a), buttons=buttons) or 0)
    if len(added) > limit:
        sent += int(await notify(f"…dan {len(added) - limit} pengumuman lain menunggu di halaman /admin.") or 0)
    return sent


class AnnouncementFinder:
    """Finds the drafts of one crawl (blocking, in the job's executor) and records them after the run."""

    def __init__(self, settings: Settings, *, open_store: Callable[[], Any], open_docstore: Callable[[], Any],
                 today: Callable[[], Any]) -> None:
        """``open_store``: a new announcement store (closed after use); ``open_docstore``: the serving document
        store; ``today``: the local date (``bot.wiring`` passes its own)."""
        self.settings = settings
        self._open_store = open_store
        self._open_docstore = open_docstore
        self._today = today
        self._drafts: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def capture(self, staging: Path) -> int:
        """Read the crawl's changes in ``staging`` (the crawled copy, not yet promoted) against the serving store.
        Never raises: announcements must not fail a reindex."""
        try:
            drafts = self._detect(Path(staging))
        except Exception:  # boundary: capture never raises, announcements must not fail a reindex
            logger.exception("finding announcements failed; the reindex goes on without them")
            drafts = []
        with self._lock:
            self._drafts[Path(staging).name] = drafts
        return len(drafts)

    def _detect(self, staging: Path) -> list[Any]:
        from storage.docstore import DocumentStore
        from sync_jobs.announcements import detect

        with DocumentStore(staging) as crawled:
            changes = crawled.last_changes()
            if not changes.touched:
                return []
            new_docs = {d.doc_id: d for d in crawled.documents()}
        serving = self._open_docstore()
        try:
            if not serving.doc_hashes():
                logger.info("announcements: the first crawl of an empty store is no news; none recorded")
                return []
            old_docs = {doc_id: serving.document(doc_id) for doc_id in changes.changed}
        finally:
            serving.close()
        return detect(changes.added, changes.changed, new_docs, old_docs, announce_rules(self.settings, self._today()))

    def take(self, staging_name: str) -> list[Any]:
        with self._lock:
            return self._drafts.pop(staging_name, [])

    def record(self, drafts: list[Any], run_id: str) -> list[Any]:
        """Write the drafts as pending announcements; those recorded before (same page version) are skipped."""
        if not drafts:
            return []
        store = self._open_store()
        try:
            return store.add_announcements(drafts, run_id=run_id, status="pending")
        finally:
            store.close()


class AnnouncingReindexJob(ReindexJob):
    """The reindex job that records the announcements of a successful run (see the module docstring)."""

    def __init__(self, *, finder: AnnouncementFinder, send_now: Callable[[int], Any] | None = None,
                 notify: Callable[..., Any] | None = None, **kwargs: Any) -> None:
        """``send_now(announcement_id)``: ANNOUNCE_MODE=auto sends each recorded announcement at once. ``notify``
        (the Telegram admin notifier): otherwise each admin gets a notice with Kirim / Buang buttons."""
        load = kwargs["load"]

        def load_and_find(store_path):
            found = finder.capture(store_path)
            if found:
                logger.info("announcements: %d found in this crawl", found)
            return load(store_path)

        kwargs["load"] = load_and_find
        super().__init__(**kwargs)
        self.finder = finder
        self.send_now = send_now
        self.notify = notify

    async def run(self, trigger: str, requested_by: str | None = None):
        final = await super().run(trigger, requested_by=requested_by)
        drafts = self.finder.take(f"docstore-{final.run_id}.sqlite3")
        if final.status != "SUCCESS" or not drafts:
            return final
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        try:
            added = await loop.run_in_executor(None, self.finder.record, drafts, final.run_id)
        except Exception:  # boundary: the reindex run is already final; recording its announcements must not change it
            logger.exception("recording the announcements of run %s failed", final.run_id)
            return final
        line = {"run_id": final.run_id, "stage": "announcements",
                "duration_s": round(time.perf_counter() - started, 3), "found": len(drafts),
                "recorded": len(added), "ids": [a.id for a in added]}
        try:
            await loop.run_in_executor(None, self.runs.log, final.run_id, line)
        except Exception as error:  # boundary: the announcements are stored; the run-log line is a courtesy
            logger.warning("could not log the announcements of run %s: %s", final.run_id, error)
        logger.info("reindex %s: %d announcement(s) recorded", final.run_id, len(added))
        if self.send_now is None and self.notify is not None and added:
            try:
                await notify_pending(self.notify, added)
            except Exception:  # boundary: notifying admins is a courtesy; they wait on /admin all the same
                logger.exception("notifying the admins of run %s's announcements failed", final.run_id)
        if self.send_now is not None:
            for announcement in added:
                try:
                    await self.send_now(announcement.id)
                except Exception:  # boundary: each auto send is independent; it stays recorded and the admin page shows its counts
                    logger.exception("sending announcement %s at once (ANNOUNCE_MODE=auto) failed", announcement.id)
        return final


class AnnouncementDesk:
    """What admins do with announcements (``/admin``, ``python -m bot announcements``): list them with their
    delivery counts, send a pending one (pending → sent, then delivered; two clicks send once), edit its summary,
    discard it. ``deliverer()`` builds a ``bot.announce_delivery.Deliverer`` over the store."""

    def __init__(self, store: Any, deliverer: Callable[[Any], Any] | None = None) -> None:
        self.store = store
        self._deliverer = deliverer

    async def _blocking(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import functools

        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))

    def listing(self, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first, each with its delivery counts (blocking)."""
        out = []
        for a in self.store.announcements(limit=limit):
            counts = self.store.delivery_counts(a.id)
            out.append({**a.as_json(), "deliveries": {k: counts.get(k, 0) for k in ("sent", "skipped", "failed",
                                                                                     "sending")}})
        return out

    async def get(self, announcement_id: int) -> Any:
        """One announcement, or None."""
        return await self._blocking(self.store.announcement, announcement_id)

    async def send(self, announcement_id: int, *, accepted: Callable[[], Any] | None = None) -> dict[str, Any]:
        """Approve and deliver; ValueError when it is not pending (already sent or discarded) or unknown.
        ``accepted()`` (the Telegram notice answers its button) is awaited once approved, before the delivery."""
        if not await self._blocking(self.store.set_status, announcement_id, "sent", expect="pending"):
            raise ValueError(f"announcement {announcement_id} is not waiting (unknown, sent or discarded)")
        if accepted is not None:
            try:
                await accepted()
            except Exception as error:  # boundary: answering the button is a courtesy; the delivery goes on
                logger.warning("acknowledging announcement %s failed: %s", announcement_id, type(error).__name__)
        announcement = await self._blocking(self.store.announcement, announcement_id)
        if self._deliverer is None:
            return {"announcement_id": announcement_id, "delivered": False}
        report = await self._deliverer(announcement)
        return {**report.as_json(), "delivered": True}

    async def edit(self, announcement_id: int, summary: str) -> Any:
        if not await self._blocking(self.store.set_summary, announcement_id, summary):
            raise ValueError(f"announcement {announcement_id} is not waiting (unknown, sent or discarded)")
        return await self._blocking(self.store.announcement, announcement_id)

    async def discard(self, announcement_id: int) -> None:
        if not await self._blocking(self.store.set_status, announcement_id, "discarded", expect="pending"):
            raise ValueError(f"announcement {announcement_id} is not waiting (unknown, sent or discarded)")
