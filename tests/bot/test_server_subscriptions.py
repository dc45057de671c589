"""/langganan and /berhenti on every channel, end to end through ``ServeApp``: the Telegram and WhatsApp webhooks
over real HTTP with the loopback Bot/Graph API stand-ins, and the web API; the subscriptions land in the store
(DATA_DIR/announcements.sqlite3) and /hapus removes them."""

from __future__ import annotations

from handlers import texts
from tests.auxil.platform_payloads import wa_text
from tests.auxil.telegram_offline import text_update
from tests.bot.test_server_channels import apis, post_tg, post_wa, served  # noqa: F401  (fixtures)


async def test_subscribing_on_telegram_whatsapp_and_the_web(served, apis):  # noqa: F811
    assert await post_tg(served.test_session, text_update("/langganan bsw", user_id=501)) == 200
    await apis.wait_for(lambda: len(apis.telegram("sendMessage")) >= 1)
    assert apis.telegram("sendMessage")[0].params["text"] == texts.LANGGANAN_TOPIC.format(topic="beasiswa")
    status, _ = await post_wa(served.test_session, wa_text("/langganan"))
    assert status == 200
    await apis.wait_for(lambda: apis.graph("text"))
    assert apis.graph("text")[0].params["text"]["body"] == texts.LANGGANAN_ALL
    subs = served.subscriptions
    assert {(s.user_key, s.topic) for s in subs.subscriptions()} == {("telegram:501", "beasiswa"),
                                                                     ("whatsapp:6281234", "all")}
    async with served.test_session.post("/api/chat", json={"message": "/langganan", "session_id": "s1"}) as r:
        assert (await r.json())["reply"] == texts.LANGGANAN_NOT_HERE
    assert await post_tg(served.test_session, text_update("/hapus", user_id=501)) == 200
    await apis.wait_for(lambda: len(apis.telegram("sendMessage")) >= 2)
    assert [s.user_key for s in subs.subscriptions()] == ["whatsapp:6281234"]
