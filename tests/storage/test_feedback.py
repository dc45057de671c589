"""FeedbackStore against a real Redis (fresh logical DB per test) and in memory."""

from __future__ import annotations

import pytest

from storage.feedback import FeedbackStore
from storage.redis_guard import connect_redis


@pytest.mark.parametrize("use_redis", [True, False])
async def test_feedback_votes_counts_and_delete(redis_url, use_redis):
    client = connect_redis(redis_url) if use_redis else None
    store = FeedbackStore(client)
    try:
        assert await store.add("telegram:1", "t1", "up")
        assert await store.add("telegram:1", "t2", "down")
        assert await store.add("telegram:1", "t2", "up")  # a changed vote replaces the earlier one
        assert await store.add("whatsapp:9", "t3", "down")
        assert not await store.add("telegram:1", "", "up")
        assert await store.counts() == {"up": 2, "down": 1}
        assert {(e.trace_id, e.value) for e in await store.entries("telegram:1")} == {("t1", "up"), ("t2", "up")}
        assert await store.delete_user("telegram:1") == 2
        assert await store.counts() == {"up": 0, "down": 1}
        with pytest.raises(ValueError, match="up, down"):
            await store.add("telegram:1", "t1", "meh")
    finally:
        if client is not None:
            await client.aclose()
