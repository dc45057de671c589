"""MessageDeduper and UserState (rate limit, last inbound, last answer) against a real Redis and in memory."""

from __future__ import annotations

import pytest

from storage.dedup import MessageDeduper, UserState
from storage.redis_guard import connect_redis


@pytest.mark.parametrize("use_redis", [True, False])
async def test_dedup_and_rate_limit_and_user_state(redis_url, use_redis):
    client = connect_redis(redis_url) if use_redis else None
    try:
        dedup = MessageDeduper(client)
        assert await dedup.first_time("wamid.1")
        assert not await dedup.first_time("wamid.1")
        assert await dedup.first_time("wamid.2")
        state = UserState(client)
        results = [(await state.hit_rate("web:x", 3))[0] for _ in range(5)]
        assert results == [True, True, True, False, False]
        assert (await state.hit_rate("web:y", 3))[0]
        await state.touch_inbound("web:x", 123.5)
        assert await state.last_inbound("web:x") == 123.5
        await state.set_last_answer("web:x", "tr", [{"url": "http://a", "title": "A"}])
        assert (await state.last_answer("web:x"))["trace_id"] == "tr"
        await state.delete_user("web:x")
        assert await state.last_inbound("web:x") is None
        assert await state.last_answer("web:x") is None
        assert (await state.hit_rate("web:x", 3))[0]  # counters are gone too
    finally:
        if client is not None:
            await client.aclose()


async def test_delete_user_treats_the_key_literally(redis_url):
    client = connect_redis(redis_url)
    try:
        state = UserState(client)
        await state.touch_inbound("web:a*", 1.0)
        await state.touch_inbound("web:ab", 2.0)
        await state.delete_user("web:a*")
        assert await state.last_inbound("web:a*") is None
        assert await state.last_inbound("web:ab") == 2.0  # not matched by the '*' in the other key
    finally:
        await client.aclose()
