"""1,000 Telegram subscribers (issue 32): one announcement reaches every one of them exactly once, and
python-telegram-bot's AIORateLimiter paces the sends as Telegram's broadcast limit asks (30 messages a second: a
bucket of 30, refilled at 30 a second).

The pace is counted where the limiter releases each request (the moment it calls the HTTP request), not where the
loopback stand-in receives it: arrivals follow the releases but bunch together when the machine is busy, which says
nothing about the limiter. A bucket of C refilled at r a second releases at most C + r*T requests in any window of
T seconds, and no fewer than the total allows on average."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from bot.announce_delivery import Deliverer, TelegramAnnouncer
from storage.announcements import AnnouncementStore
from tests.auxil.fake_apis import FakeApis
from tests.bot.test_announce_delivery import BEASISWA

pytestmark = pytest.mark.slow  # 1,000 sends at Telegram's 30 a second: over 30 s by design

SUBSCRIBERS = 1000
RATE = 30  # messages a second


def _record_releases(sender: TelegramAnnouncer) -> list[float]:
    """The time at which the product's limiter (as TelegramAnnouncer configures it) lets each sendMessage request
    go: it calls the request's coroutine then. The instance keeps its settings; only its class gains the clock."""
    from telegram.ext import AIORateLimiter

    limiter = sender.bot.rate_limiter
    assert type(limiter) is AIORateLimiter
    released: list[float] = []

    class Timed(AIORateLimiter):  # type: ignore[misc]
        __slots__ = ()

        async def process_request(self, callback, args, kwargs, endpoint, data, rate_limit_args):  # type: ignore[no-untyped-def]
            async def call(*a, **kw):  # type: ignore[no-untyped-def]
                if endpoint.lower() == "sendmessage":
                    released.append(time.monotonic())
                return await callback(*a, **kw)

            return await super().process_request(call, args, kwargs, endpoint, data, rate_limit_args)

    limiter.__class__ = Timed
    return released


def _busiest(times: list[float], window: float) -> int:
    """The most releases inside any window of ``window`` seconds."""
    worst, j = 0, 0
    for i, t in enumerate(times):
        while times[j] < t - window:
            j += 1
        worst = max(worst, i - j + 1)
    return worst


async def test_a_thousand_subscribers_within_the_rate_limit(tmp_path):
    apis = FakeApis()
    await apis.start()
    store = AnnouncementStore(tmp_path / "announcements.sqlite3")
    for i in range(SUBSCRIBERS):
        store.subscribe(f"telegram:{100000 + i}", "telegram", "all" if i % 2 else "beasiswa")
    (announcement,) = store.add_announcements([BEASISWA])
    sender = TelegramAnnouncer("123:fake", base_url=apis.telegram_base, overall_max_rate=RATE)
    released = _record_releases(sender)
    started = time.monotonic()
    try:
        report = await Deliverer(store, {"telegram": sender}).deliver(announcement)
    finally:
        await sender.close()
        await apis.close()
        took = time.monotonic() - started
    assert report.counts == {"sent": SUBSCRIBERS, "skipped": 0, "failed": 0, "already": 0}
    chats = Counter(c.params["chat_id"] for c in apis.telegram("sendMessage"))
    assert len(chats) == SUBSCRIBERS and set(chats.values()) == {1}  # no message lost, none twice
    assert store.delivery_counts(announcement.id)["sent"] == SUBSCRIBERS
    times = sorted(released)
    assert len(times) == SUBSCRIBERS
    busiest = {w: _busiest(times, w) for w in (1.0, 5.0, 10.0)}
    print(f"{SUBSCRIBERS} messages in {took:.1f} s; busiest 1/5/10-second windows at release: "
          f"{busiest[1.0]}/{busiest[5.0]}/{busiest[10.0]} (bucket {RATE}, {RATE}/s)")
    for window, count in busiest.items():
        assert count <= RATE + RATE * window + 1, (window, count)  # +1: a release on the window's edge
    assert took >= (SUBSCRIBERS - RATE) / RATE * 0.95  # the limiter, not the stand-in, set the pace
    store.close()
