"""Insights for the prodi's admins: the unanswered-question report, admin answers, feedback rates, weekly digest.

The report groups the logged questions (``storage.insights``, masked; every channel) that the bot refused or that
got 👎 in a period: questions whose embeddings are close (cosine >= INSIGHTS_CLUSTER_THRESHOLD, average link to the
cluster) form one cluster with a representative question (the member closest to the others), a count and the
channels. A cluster an admin answer already covers is marked with that answer's id.

Admin answers are written here (stored versioned, then the index is rebuilt without a crawl by
``sync_jobs.admin_answers.rebuild_index``; serving processes reload it as after a reindex).

Everything here is blocking (SQLite, embedding, index build): async callers use an executor.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np

from storage.insights import AdminAnswer, InsightsStore

__all__ = ["DigestSender", "Insights", "cluster_questions", "format_digest", "parse_period"]

logger = logging.getLogger(__name__)

_PERIOD = re.compile(r"^\s*([0-9]{1,6})\s*([hdw])\s*$", re.IGNORECASE)
MAX_PERIOD_SECONDS = 10 * 366 * 86400  # ten years: longer than any history the bot keeps
_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400}
EmbedFn = Callable[[list[str]], np.ndarray]  # questions -> unit-length (or any) row vectors


def parse_period(text: str) -> float:
    """Seconds in a period written ``24h``, ``7d`` or ``4w``; ValueError saying how to write it."""
    match = _PERIOD.match(text or "")
    seconds = int(match.group(1)) * _UNITS[match.group(2).lower()] if match else 0
    if not 0 < seconds <= MAX_PERIOD_SECONDS:
        raise ValueError(f"period {(text or '')[:40]!r} is not valid; write a number and h, d or w, e.g. 7d or 24h "
                         f"(at most ten years)")
    return seconds


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def cluster_questions(texts: Sequence[str], vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Indices of ``texts`` grouped: each question joins the cluster whose members it is closest to on average
    when that average cosine is at least ``threshold``, else it starts one. Largest clusters first."""
    if not len(texts):
        return []
    unit = _unit(vectors)
    clusters: list[list[int]] = []
    for i in range(len(texts)):
        best, best_sim = -1, -1.0
        for c, members in enumerate(clusters):
            sim = float(np.mean(unit[members] @ unit[i]))
            if sim > best_sim:
                best, best_sim = c, sim
        if best >= 0 and best_sim >= threshold:
            clusters[best].append(i)
        else:
            clusters.append([i])
    return sorted(clusters, key=lambda m: (-len(m), m[0]))


def _iso(ts: float, zone: ZoneInfo) -> str:
    return datetime.fromtimestamp(ts, zone).isoformat(timespec="minutes")


class Insights:
    """The report, the admin answers and the digest over one ``InsightsStore``."""

    def __init__(self, store: InsightsStore, embed: EmbedFn | None, *, rebuild: Callable[[], Any] | None = None,
                 threshold: float = 0.87, timezone: str = "Asia/Jakarta", retention_days: int = 180,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.embed = embed
        self.rebuild = rebuild
        self.threshold = threshold
        self.zone = ZoneInfo(timezone)
        self.retention_days = retention_days
        self.clock = clock
        self.last_rebuild: Any = None

    # --- the unanswered-question report ------------------------------------------------------------------------
    def _vectors(self, texts: list[str]) -> np.ndarray:
        if self.embed is None or not texts:
            # no embedder: identical (case-folded) questions still group
            keys = {t: i for i, t in enumerate(dict.fromkeys(x.casefold().strip() for x in texts))}
            out = np.zeros((len(texts), max(1, len(keys))), dtype=np.float32)
            for row, t in enumerate(texts):
                out[row, keys[t.casefold().strip()]] = 1.0
            return out
        return _unit(self.embed(texts))

    def report(self, since: float, until: float | None = None) -> dict[str, Any]:
        """The clusters of refused or 👎 questions asked in [since, until), largest first."""
        until = self.clock() if until is None else until
        self.store.prune(self.clock() - self.retention_days * 86400)
        rows = [r for r in self.store.questions(since, until + 1) if r["abstained"] or r["feedback"] == "down"]
        texts = [r["question"] for r in rows]
        vectors = self._vectors(texts)
        answers = self.store.active_answers()
        answer_vecs = self._vectors([a.question for a in answers]) if answers and self.embed is not None else None
        clusters = []
        for members in cluster_questions(texts, vectors, self.threshold):
            unit = vectors[members]
            centre = int(np.argmax((unit @ unit.T).mean(axis=1)))
            group = [rows[m] for m in members]
            representative = group[centre]["question"]
            covered = None
            if answer_vecs is not None:
                sims = answer_vecs @ vectors[members[centre]]
                if float(sims.max()) >= self.threshold:
                    covered = answers[int(np.argmax(sims))].id
            elif answers:
                covered = next((a.id for a in answers if a.question.casefold() == representative.casefold()), None)
            given = [r["answer"] for r in group if r["feedback"] == "down" and r["answer"]]
            clusters.append({
                "id": hashlib.sha1(representative.encode("utf-8")).hexdigest()[:12],
                "representative": representative,
                "count": len(group),
                "channels": dict(Counter(r["channel"] for r in group).most_common()),
                "refused": sum(1 for r in group if r["abstained"]),
                "thumbs_down": sum(1 for r in group if r["feedback"] == "down"),
                "examples": list(dict.fromkeys(r["question"] for r in group))[:5],
                "answers_given": list(dict.fromkeys(given))[:3],
                "first_seen": _iso(min(r["ts"] for r in group), self.zone),
                "last_seen": _iso(max(r["ts"] for r in group), self.zone),
                "admin_answer": covered,
            })
        return {"since": _iso(since, self.zone), "until": _iso(until, self.zone), "questions": len(rows),
                "clusters": clusters}

    # --- feedback ---------------------------------------------------------------------------------------------
    def feedback_weeks(self, weeks: int = 8) -> list[dict[str, Any]]:
        """👍/👎 per ISO week (newest first) over the last ``weeks`` weeks, with the share of 👍."""
        now = datetime.fromtimestamp(self.clock(), self.zone)
        start = (now - timedelta(days=now.weekday(), weeks=weeks - 1)).replace(hour=0, minute=0, second=0,
                                                                               microsecond=0)
        counts: dict[str, Counter] = {}
        for i in range(weeks):
            counts[(start + timedelta(weeks=i)).date().isoformat()] = Counter()
        for row in self.store.feedback_rows(start.timestamp()):
            day = datetime.fromtimestamp(row["feedback_ts"], self.zone)
            monday = (day - timedelta(days=day.weekday())).date().isoformat()
            if monday in counts:
                counts[monday][row["feedback"]] += 1
        out = []
        for week, c in sorted(counts.items(), reverse=True):
            total = c["up"] + c["down"]
            out.append({"week": week, "up": c["up"], "down": c["down"],
                        "up_rate": round(c["up"] / total, 3) if total else None})
        return out

    def worst_answers(self, since: float, limit: int = 5) -> list[dict[str, Any]]:
        """The answers with the most 👎 since ``since``: the answer text, how many 👎 and 👍, one question."""
        grouped: dict[str, dict[str, Any]] = {}
        for row in self.store.feedback_rows(since):
            key = (row["answer"] or "").strip()
            if not key:
                continue
            item = grouped.setdefault(key, {"answer": key, "down": 0, "up": 0, "question": row["question"]})
            item[row["feedback"]] = item.get(row["feedback"], 0) + 1
        ranked = sorted((g for g in grouped.values() if g["down"]), key=lambda g: (-g["down"], g["up"]))
        return ranked[:limit]

    # --- admin answers ----------------------------------------------------------------------------------------
    def answers(self) -> list[dict[str, Any]]:
        return [a.as_json() for a in self.store.answers()]

    def save_answer(self, *, question: str, answer: str, author: str, link: str = "", expires: str = "",
                    answer_id: int | None = None) -> AdminAnswer:
        """Store (a new version of) an answer, then rebuild the index so it answers at once."""
        saved = self.store.save_answer(question=question, answer=answer, author=author, link=link, expires=expires,
                                       answer_id=answer_id)
        logger.info("admin answer %s v%s saved by %s", saved.id, saved.version, saved.author)
        self._rebuild()
        return saved

    def delete_answer(self, answer_id: int, author: str) -> bool:
        deleted = self.store.delete_answer(answer_id, author)
        if deleted:
            logger.info("admin answer %s deleted by %s", answer_id, author)
            self._rebuild()
        return deleted

    def drop_expired(self, today: Any = None) -> bool:
        """Rebuild the index when an answer's last day passed within the week (the daily expiry job); True if so."""
        from datetime import date

        today = today or datetime.now(self.zone).date()
        recent = [a for a in self.store.answers() if a.expires and not a.active(today)
                  and (today - date.fromisoformat(a.expires)).days <= 7]
        if recent:
            logger.info("admin answers %s expired: rebuilding the index", [a.id for a in recent])
            self._rebuild(today)
        return bool(recent)

    def _rebuild(self, today: Any = None) -> None:
        """Rebuild the index for the answers; ``last_rebuild`` is "pending" while a running reindex delays it."""
        if self.rebuild is not None:
            self.last_rebuild = self.rebuild(today) if today is not None else self.rebuild()

    # --- the weekly digest ------------------------------------------------------------------------------------
    def digest(self, runs: Sequence[Any] = (), now: float | None = None, *,
               announcements: Callable[[float, float], Sequence[dict[str, Any]]] | None = None) -> str:
        """The weekly digest text for admins (Indonesian): top 5 new unanswered clusters, 👍/👎, reindex health, and
        with ``announcements(since, until)`` (``bot.announcements.sent_between`` over the store) the announcements
        sent that week."""
        now = self.clock() if now is None else now
        week_ago = now - 7 * 86400
        report = self.report(week_ago, now)
        new = [c for c in report["clusters"] if c["admin_answer"] is None][:5]
        votes = Counter(r["feedback"] for r in self.store.feedback_rows(week_ago) if r["feedback_ts"] <= now)
        recent = []
        for run in runs:
            data = run.as_json() if hasattr(run, "as_json") else dict(run)
            try:
                started = datetime.fromisoformat(str(data.get("started_at"))).timestamp()
            except ValueError:
                continue
            if started >= week_ago:
                recent.append(data)
        sent: Sequence[dict[str, Any]] | None = None
        if announcements is not None:
            try:
                sent = list(announcements(week_ago, now))
            except Exception as error:  # boundary: the digest still goes out without the announcements
                logger.warning("the digest could not read the announcements: %s", type(error).__name__)
                sent = None
        return format_digest(new, votes, recent, since=week_ago, until=now, zone=self.zone, announcements=sent)


def _day(ts: float, zone: ZoneInfo) -> str:
    months = ("Jan", "Feb", "Mar", "Apr", "Mei", "Jun", "Jul", "Agu", "Sep", "Okt", "Nov", "Des")
    d = datetime.fromtimestamp(ts, zone)
    return f"{d.day} {months[d.month - 1]} {d.year}"


DIGEST_ANNOUNCEMENTS = 8  # titles listed (the message stays under Telegram's 4096); the rest are counted


def format_digest(clusters: Sequence[dict[str, Any]], votes: Counter, runs: Sequence[dict[str, Any]], *,
                  since: float, until: float, zone: ZoneInfo | None = None,
                  announcements: Sequence[dict[str, Any]] | None = None) -> str:
    zone = zone or ZoneInfo("UTC")
    lines = [f"📊 Ringkasan mingguan prodi-bot ({_day(since, zone)} – {_day(until, zone)})", ""]
    if clusters:
        lines.append("Pertanyaan yang belum terjawab (5 teratas):")
        for i, c in enumerate(clusters, 1):
            channels = ", ".join(c["channels"])
            lines.append(f"{i}. \"{c['representative']}\" — {c['count']} kali ({channels})")
        lines.append("Tulis jawabannya di halaman /admin, atau kirim /jawab pertanyaan | jawaban.")
    else:
        lines.append("Tidak ada pertanyaan baru yang belum terjawab minggu ini.")
    lines.append("")
    up, down = votes.get("up", 0), votes.get("down", 0)
    if up + down:
        lines.append(f"Umpan balik: 👍 {up}, 👎 {down} ({round(100 * up / (up + down))}% puas).")
    else:
        lines.append("Umpan balik: belum ada 👍/👎 minggu ini.")
    if runs:
        ok = sum(1 for r in runs if r.get("status") == "SUCCESS")
        failed_pages = sum(int(r.get("pages_failed") or 0) for r in runs)
        last = runs[0]
        mark = "✅" if last.get("status") == "SUCCESS" else "❌"
        lines.append(f"Pembaruan indeks: {len(runs)} kali, {ok} berhasil, {len(runs) - ok} gagal; "
                     f"halaman gagal diambil: {failed_pages}. Terakhir: {mark} {last.get('status')} "
                     f"({str(last.get('started_at', ''))[:16].replace('T', ' ')}).")
    else:
        lines.append("Pembaruan indeks: tidak ada yang berjalan minggu ini. Periksa REINDEX_CRON.")
    if announcements is not None:  # None: announcements are not wired here (the section is left out)
        lines.append("")
        if announcements:
            lines.append(f"Pengumuman terkirim minggu ini: {len(announcements)}")
            for a in announcements[:DIGEST_ANNOUNCEMENTS]:
                d = a.get("deliveries") or {}
                title = " ".join(str(a.get("title", "")).split())[:120]
                lines.append(f"- {title} — {str(a.get('url', ''))[:200]} (terkirim {d.get('sent', 0)}, dilewati "
                             f"{d.get('skipped', 0)}, gagal {d.get('failed', 0)})")
            if len(announcements) > DIGEST_ANNOUNCEMENTS:
                lines.append(f"…dan {len(announcements) - DIGEST_ANNOUNCEMENTS} lainnya; lihat halaman /admin.")
        else:
            lines.append("Pengumuman terkirim minggu ini: tidak ada.")
    return "\n".join(lines)


class DigestSender:
    """Sends the weekly digest to the admins (``notify(text)``: the Telegram admin notifications) at each
    DIGEST_CRON tick. With ``claims`` (shared by the replicas) only the first replica of a tick sends it."""

    def __init__(self, insights: Insights, runs: Any, notify: Callable[[str], Any], *, claims: Any = None,
                 announcements: Callable[[float, float], Sequence[dict[str, Any]]] | None = None) -> None:
        """``announcements(since, until)``: the announcements sent in the week (``bot.announcements.sent_between``
        over the store); None leaves that section out."""
        self.insights = insights
        self.announcements = announcements
        self.runs = runs  # storage.runs.RunStore or None
        self.notify = notify
        self.claims = claims

    async def send(self, tick: datetime | None = None) -> int:
        """Render and send one digest; returns how many admins got it (0 when another replica sent it)."""
        import asyncio
        import inspect

        if tick is not None and self.claims is not None:
            try:
                if not await self.claims.claim(f"digest:{tick.isoformat()}", ttl_seconds=7 * 86400):
                    return 0
            except Exception as error:  # boundary: the digest is sent anyway without a claim store; sending twice beats not sending
                logger.warning("digest claim failed (%s); sending anyway", error)
        loop = asyncio.get_running_loop()

        def render() -> str:
            runs = self.runs.recent(50) if self.runs is not None else []
            return self.insights.digest(runs, announcements=self.announcements)

        text = await loop.run_in_executor(None, render)
        sent = self.notify(text)
        sent = await sent if inspect.isawaitable(sent) else sent
        logger.info("weekly digest sent to %s admin(s)", sent)
        return int(sent or 0)
