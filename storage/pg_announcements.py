"""The announcement store in PostgreSQL (``DATABASE_URL``), with the contract of ``storage.announcements``'s
SQLite store (``storage.contracts.AnnouncementStoreAPI``); tables from migrations 5, 6 and 7 of ``storage.pg_migrations``.

A subscription is written under a transaction-scoped advisory lock on the user, so two replicas adding topics at
once still respect ``MAX_TOPICS``.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage.announcements import (
    ANNOUNCEMENT_COLUMNS,
    DELIVERY_STATUSES,
    MAX_TOPICS,
    Announcement,
    Subscription,
    announcement_from_row,
    announcement_row,
    check_status,
    check_subscription,
    check_summary,
    subscription_from_row,
    utc_now,
)
from storage.pg_stores import PgStoreBase

__all__ = ["PgAnnouncementStore"]

_LOCK_PROJECT = 0x70726F64  # storage.pg_stores' first key
_LOCK_SUBSCRIBER = 0x616E6E  # second key space: hashtext(user key) is mixed in


class PgAnnouncementStore(PgStoreBase):
    """Subscriptions, announcements and their deliveries in PostgreSQL."""

    def _rows(self, what: str, query: str, params: tuple = ()) -> list[dict[str, Any]]:
        def run(conn: psycopg.Connection) -> list[dict[str, Any]]:
            with conn.cursor(row_factory=dict_row) as cur:
                cur.execute(query, params)  # type: ignore[arg-type]
                return cur.fetchall()

        return self.db.read(what, run)

    # --- subscriptions --------------------------------------------------------------------------------------
    def subscribe(self, user_key: str, channel: str, topic: str) -> bool:
        user_key, channel, topic = check_subscription(user_key, channel, topic)

        def run(conn: psycopg.Connection) -> bool:
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_PROJECT + _LOCK_SUBSCRIBER,
                                                                              user_key))
            have = [r[0] for r in conn.execute("SELECT topic FROM subscriptions WHERE user_key = %s", (user_key,))]
            if topic in have:
                return False
            if len(have) >= MAX_TOPICS:
                raise ValueError(f"at most {MAX_TOPICS} topics per user")
            conn.execute("INSERT INTO subscriptions (user_key, channel, topic, created_at) VALUES (%s,%s,%s,%s) "
                         "ON CONFLICT DO NOTHING", (user_key, channel, topic, utc_now()))
            return True

        return bool(self.db.write("saving a subscription", run, repeatable=True))

    def unsubscribe(self, user_key: str, topic: str | None = None) -> int:
        if topic is None:
            query, params = "DELETE FROM subscriptions WHERE user_key = %s", (user_key,)
        else:
            query, params = "DELETE FROM subscriptions WHERE user_key = %s AND topic = %s", (user_key, topic)
        return int(self.db.write("removing a subscription", lambda conn: conn.execute(query, params).rowcount,
                                 repeatable=True))

    def topics(self, user_key: str) -> list[str]:
        return [r["topic"] for r in self._rows(
            "reading subscriptions",
            "SELECT topic FROM subscriptions WHERE user_key = %s ORDER BY created_at, topic", (user_key,))]

    def subscriptions(self, channel: str | None = None) -> list[Subscription]:
        query, params = "SELECT * FROM subscriptions", ()
        if channel is not None:
            query, params = query + " WHERE channel = %s", (channel,)
        return [subscription_from_row(r) for r in self._rows("reading subscriptions",
                                                             query + " ORDER BY user_key, topic", params)]

    def forget_user(self, user_key: str) -> int:
        removed = self.unsubscribe(user_key)
        self.db.write("forgetting deliveries", lambda conn: conn.execute(
            "DELETE FROM deliveries WHERE user_key = %s", (user_key,)), repeatable=True)
        return removed

    # --- announcements ----------------------------------------------------------------------------------------
    def add_announcements(self, drafts: list[Any], *, run_id: str = "", status: str = "pending"
                          ) -> list[Announcement]:
        now = utc_now()
        rows = [announcement_row(d, run_id, status, now) for d in drafts]
        columns = ", ".join(ANNOUNCEMENT_COLUMNS)
        marks = ", ".join(["%s"] * len(ANNOUNCEMENT_COLUMNS))

        def run(conn: psycopg.Connection) -> list[int]:
            added = []
            for row in rows:
                got = conn.execute(f"INSERT INTO announcements ({columns}) VALUES ({marks}) "
                                   "ON CONFLICT (key) DO NOTHING RETURNING id", row).fetchone()
                if got:
                    added.append(int(got[0]))
            return added

        ids = self.db.write("recording announcements", run, repeatable=True)
        return [a for a in (self.announcement(i) for i in ids) if a is not None]

    def announcement(self, announcement_id: int) -> Announcement | None:
        rows = self._rows("reading an announcement", "SELECT * FROM announcements WHERE id = %s",
                          (int(announcement_id),))
        return announcement_from_row(rows[0]) if rows else None

    def announcements(self, *, status: str | None = None, limit: int = 50) -> list[Announcement]:
        query, params = "SELECT * FROM announcements", ()
        if status is not None:
            query, params = query + " WHERE status = %s", (check_status(status),)
        return [announcement_from_row(r) for r in self._rows("reading announcements",
                                                             query + " ORDER BY id DESC LIMIT %s",
                                                             (*params, int(limit)))]

    def set_status(self, announcement_id: int, status: str, *, expect: str | None = None) -> bool:
        check_status(status)
        query = "UPDATE announcements SET status = %s, updated_at = %s WHERE id = %s"
        params: tuple = (status, utc_now(), int(announcement_id))
        if expect is not None:
            query, params = query + " AND status = %s", (*params, check_status(expect))
        return bool(self.db.write("changing an announcement", lambda conn: conn.execute(query, params).rowcount,
                                  repeatable=True))

    def set_summary(self, announcement_id: int, summary: str) -> bool:
        summary = check_summary(summary)
        return bool(self.db.write("editing an announcement", lambda conn: conn.execute(
            "UPDATE announcements SET summary = %s, updated_at = %s WHERE id = %s AND status = 'pending'",
            (summary, utc_now(), int(announcement_id))).rowcount, repeatable=True))

    # --- deliveries ------------------------------------------------------------------------------------------
    def claim_delivery(self, announcement_id: int, user_key: str, channel: str) -> bool:
        return bool(self.db.write("claiming a delivery", lambda conn: conn.execute(
            "INSERT INTO deliveries (announcement_id, user_key, channel, status, updated_at) "
            "VALUES (%s,%s,%s,'sending',%s) ON CONFLICT DO NOTHING",
            (int(announcement_id), user_key, channel, utc_now())).rowcount, repeatable=False))

    def finish_delivery(self, announcement_id: int, user_key: str, status: str, *, detail: str = "",
                        attempts: int = 1) -> None:
        if status not in DELIVERY_STATUSES[1:]:
            raise ValueError(f"unknown delivery status {status!r}")
        self.db.write("recording a delivery", lambda conn: conn.execute(
            "UPDATE deliveries SET status = %s, detail = %s, attempts = %s, updated_at = %s "
            "WHERE announcement_id = %s AND user_key = %s",
            (status, detail[:200], int(attempts), utc_now(), int(announcement_id), user_key)), repeatable=True)

    def delivery_counts(self, announcement_id: int) -> dict[str, int]:
        rows = self._rows("counting deliveries", "SELECT status, COUNT(*) AS n FROM deliveries "
                          "WHERE announcement_id = %s GROUP BY status", (int(announcement_id),))
        return {**dict.fromkeys(DELIVERY_STATUSES, 0), **{r["status"]: int(r["n"]) for r in rows}}
