"""The acceptance test of issue 32, end to end on the sample site: three Telegram users subscribe (one to
"beasiswa" only) and one WhatsApp user, over the real webhooks of ``ServeApp``; a scholarship post and a seminar
post are published on the site and the reindex runs; two announcements wait on /admin, and approving them in
Debian's Chromium sends the right messages to the right users through the loopback Bot API and Graph API
stand-ins (the topic filter holds; WhatsApp, outside the 24-hour window, gets the template payload); a second
reindex sends nothing new. The screenshot of "Pengumuman baru" goes to docs/img/ (UPDATE_SCREENSHOTS=1)."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot import wiring
from bot.app import ServeApp
from tests.auxil.answerer import CorpusAnswerer
from tests.auxil.fake_apis import FakeApis
from tests.auxil.platform_payloads import wa_text
from tests.auxil.reindex_site import ops_settings
from tests.auxil.sample_news import news_post, publish
from tests.auxil.telegram_offline import text_update
from tests.bot.test_server_channels import APP_SECRET, TG_SECRET, post_tg, post_wa
from tests.browser import screenshot_dir
from tests.browser.test_web_pages import browser, log_in  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser

TOKEN = "adm-announce-token"
SCHOLARSHIP = ("Pendaftaran Beasiswa Prestasi Akademik 2026",
               "Pendaftaran Beasiswa Prestasi Akademik 2026 dibuka mulai 1 Desember 2026 untuk mahasiswa aktif. "
               "Berkas diunggah melalui portal kemahasiswaan paling lambat 20 Desember 2026. "
               "Penerima diumumkan pada 10 Januari 2027.")
SEMINAR = ("Seminar Nasional Kecerdasan Buatan 2026",
           "Program studi menyelenggarakan Seminar Nasional Kecerdasan Buatan pada 5 Desember 2026 di aula utama. "
           "Pendaftaran peserta gratis melalui formulir daring. Sertifikat diberikan kepada semua peserta.")


def announced(apis: FakeApis) -> dict[str, list[str]]:
    """Who got which announcement (by title), per Telegram chat id and WhatsApp number."""
    out: dict[str, list[str]] = {}
    for call in apis.telegram("sendMessage"):
        text = str(call.params.get("text", ""))
        if text.startswith("📢"):
            title = next(t for t, _ in (SCHOLARSHIP, SEMINAR) if t in text)
            out.setdefault(f"telegram:{call.params['chat_id']}", []).append(title)
    for call in apis.graph("template"):
        params = call.params["template"]["components"][0]["parameters"]
        out.setdefault(f"whatsapp:{call.params['to']}", []).append(params[0]["text"])
    for call in apis.graph("text"):
        if call.params["text"]["body"].startswith("📢"):
            out.setdefault(f"whatsapp-text:{call.params['to']}", []).append(call.params["text"]["body"])
    return {k: sorted(v) for k, v in out.items()}


async def test_announcements_end_to_end(browser, mutable_sample_site, warm_data_dir, redis_url):  # noqa: F811
    site = mutable_sample_site
    apis = await FakeApis().start()
    settings = ops_settings(
        warm_data_dir, site.base_url, redis_url=redis_url, http_port=0, admin_token=TOKEN,
        telegram_token="123:fake", telegram_webhook_url="https://bot.example.invalid/telegram/webhook",
        telegram_secret_token=TG_SECRET, telegram_api_base_url=apis.telegram_base, whatsapp_token="wa-token",
        whatsapp_phone_number_id="PNID", whatsapp_verify_token="verify-me", whatsapp_app_secret=APP_SECRET,
        whatsapp_graph_base_url=apis.graph_base, whatsapp_announce_template="pengumuman_prodi",
        whatsapp_announce_template_language="id")
    first = await wiring.build_reindex_job(settings).run("cli")  # the site as it was: the baseline, no news
    assert first.status == "SUCCESS", first.error
    app = ServeApp(settings, answerer=CorpusAnswerer(), status_provider=lambda: {"index": {}, "runs": []},
                   reindex_trigger=lambda who: "ok", index_ready=lambda: True, start_scheduler=False)
    await app.start()
    base = f"http://127.0.0.1:{app.port}"
    import aiohttp

    session = aiohttp.ClientSession(base_url=base)
    try:
        # 1. subscriptions on both channels, through the webhooks
        for user_id, text in ((601, "/langganan"), (602, "/langganan bsw"), (603, "/langganan")):
            assert await post_tg(session, text_update(text, user_id=user_id)) == 200
        assert (await post_wa(session, wa_text("/langganan", msg_id="wamid.S1", sender="6281234")))[0] == 200
        await apis.wait_for(lambda: len(apis.telegram("sendMessage")) >= 3 and apis.graph("text"))
        await app.channel("whatsapp").webhook.drain()
        topics = {s.user_key: s.topic for s in app.subscriptions.subscriptions()}
        assert topics == {"telegram:601": "all", "telegram:602": "beasiswa", "telegram:603": "all",
                          "whatsapp:6281234": "all"}
        # the WhatsApp student last wrote two days ago: outside the 24-hour window, only a template may go
        await app.stores.state.touch_inbound("whatsapp:6281234", time.time() - 2 * 86400)

        # 2. two news posts on the site, and the reindex
        today = wiring.local_today(settings)
        publish(site.root, news_post("pendaftaran-beasiswa-prestasi-akademik-2026", SCHOLARSHIP[0], SCHOLARSHIP[1],
                                     day=today),
                news_post("seminar-nasional-kecerdasan-buatan-2026", SEMINAR[0], SEMINAR[1], day=today,
                          category="kegiatan"))
        run = await wiring.build_reindex_job(settings).run("schedule")
        assert run.status == "SUCCESS", run.error
        pending = app.subscriptions.announcements(status="pending")
        assert sorted(a.title for a in pending) == sorted([SCHOLARSHIP[0], SEMINAR[0]])
        leads = {a.title: a.summary for a in pending}  # two lead sentences each, verbatim from the page
        assert leads[SCHOLARSHIP[0]] == ". ".join(SCHOLARSHIP[1].split(". ")[:2]) + "."
        assert leads[SEMINAR[0]] == ". ".join(SEMINAR[1].split(". ")[:2]) + "."
        assert announced(apis) == {}  # review mode: nothing goes out before the admin approves

        # 3. the admin approves both in Chromium
        page = await browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await log_in(page, base, TOKEN)
        section = page.locator("#announcements")
        await page.wait_for_selector("#announcements li.announcement.pending")
        assert await section.locator("li.pending").count() == 2
        assert "2 pengumuman menunggu" in await page.locator("#announce-status").inner_text()
        await page.locator("section[aria-labelledby=h-announcements]").screenshot(
            path=str(screenshot_dir() / "admin-announcements-1200.png"))
        for title in (SCHOLARSHIP[0], SEMINAR[0]):
            item = section.locator("li.announcement", has_text=title)
            await item.get_by_role("button", name="Kirim").click()
            await page.wait_for_function(
                "t => [...document.querySelectorAll('#announcements li.sent')].some(li => li.textContent.includes(t))",
                arg=title)
        assert "Terkirim" in await page.locator("#announce-status").inner_text()
        assert await section.locator("li.sent .counts").count() == 2
        assert errors == []
        await page.close()

        expected = {"telegram:601": sorted([SCHOLARSHIP[0], SEMINAR[0]]), "telegram:602": [SCHOLARSHIP[0]],
                    "telegram:603": sorted([SCHOLARSHIP[0], SEMINAR[0]]),
                    "whatsapp:6281234": sorted([SCHOLARSHIP[0], SEMINAR[0]])}
        assert announced(apis) == expected  # the topic filter holds; WhatsApp got the template, no free text
        template = apis.graph("template")[0].params["template"]
        assert template["name"] == "pengumuman_prodi" and template["language"]["code"] == "id"

        # 4. a second reindex sends nothing new
        calls = len(apis.calls)
        again = await wiring.build_reindex_job(settings).run("schedule")
        assert again.status == "SUCCESS", again.error
        await asyncio.sleep(0.5)
        assert len(apis.calls) == calls and announced(apis) == expected
        assert app.subscriptions.announcements(status="pending") == []
    finally:
        await session.close()
        await app.stop()
        await apis.close()
