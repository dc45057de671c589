"""Asking back end to end: the REAL answer pipeline over the sample site (crawled over loopback, real embedder, the
bundled llama.cpp model) behind the real ChatService and Redis stores, on Telegram's loopback Bot API stand-in.

"emailnya apa?" after a reply that named the head and the secretary of the programme asks back with both as inline
buttons (no 👍/👎, not a refusal, no question-log row), and pressing one answers with that person's e-mail; a typed
pick ("yg kaprodi aja") does the same."""

from __future__ import annotations

import pytest

from bot import wiring
from tests.auxil.telegram_offline import callback_update, feed, text_update


@pytest.fixture
async def service(sample_site_index, redis_url):
    settings, manager = sample_site_index
    settings = settings.model_copy(update={"redis_url": redis_url})
    pool = wiring.build_llm_pool(settings)
    pipeline = wiring.build_pipeline(settings, index_manager=manager, pool=pool)
    stores = wiring.build_channel_stores(settings)
    service = wiring.build_chat_service(settings, pipeline, stores, rate_limit_per_minute=1000)
    yield service
    pool.close()
    await stores.close()


async def test_the_pipeline_asks_back_on_telegram_and_a_press_answers_the_chosen_reading(tg, fake_apis):
    await feed(tg, text_update("/reset"))
    await feed(tg, text_update("kaprodi sama sekprodi TI siapa aja kak"))
    first = fake_apis.telegram("sendMessage")[-1].params["text"]
    assert "Supriyono" in first and "Shoffin" in first
    await feed(tg, text_update("emailnya apa?"))
    asked = fake_apis.telegram("sendMessage")[-1].params
    assert asked["text"].startswith("Maksud Anda yang mana")
    keyboard = asked["reply_markup"]["inline_keyboard"]
    labels = [row[0]["text"] for row in keyboard]
    assert labels == ["Supriyono, M.Kom.", "Shoffin Nahwa Utama, M.T."]  # one button a row, no 👍/👎
    await feed(tg, callback_update(keyboard[1][0]["callback_data"]))
    reply = fake_apis.telegram("sendMessage")[-1].params
    assert "shoffin@ti.uin-malang.ac.id" in reply["text"] and "supriyono@" not in reply["text"]
    assert [b["text"] for b in reply["reply_markup"]["inline_keyboard"][0]] == ["👍", "👎"]


async def test_a_typed_pick_answers_too(tg, fake_apis):
    await feed(tg, text_update("/reset", user_id=77))
    await feed(tg, text_update("kaprodi sama sekprodi TI siapa aja kak", user_id=77))
    await feed(tg, text_update("emailnya apa?", user_id=77))
    assert fake_apis.telegram("sendMessage")[-1].params["text"].startswith("Maksud Anda yang mana")
    await feed(tg, text_update("yg kaprodi aja", user_id=77))
    reply = fake_apis.telegram("sendMessage")[-1].params["text"]
    assert "supriyono@ti.uin-malang.ac.id" in reply and "shoffin@" not in reply


async def test_a_typed_pick_of_a_role_line_is_no_small_talk(tg, fake_apis):
    """"yg skripsi kak" alone reads like small talk to the classifier; after an ask-back whose lines name
    "Koordinator Skripsi" it is the pick, and "beliau" afterwards is that person."""
    await feed(tg, text_update("/reset", user_id=78))
    await feed(tg, text_update("mau tanya email koordinator dong", user_id=78))
    asked = fake_apis.telegram("sendMessage")[-1].params
    assert asked["text"].startswith("Maksud Anda yang mana") and "Koordinator Skripsi" in asked["text"]
    await feed(tg, text_update("yg skripsi kak", user_id=78))
    assert "yaqinov@ti.uin-malang.ac.id" in fake_apis.telegram("sendMessage")[-1].params["text"]
    await feed(tg, text_update("ruangan beliau dmn?", user_id=78))
    assert "B.3.12" in fake_apis.telegram("sendMessage")[-1].params["text"]
