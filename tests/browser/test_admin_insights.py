"""The admins' insights on /admin in Debian's Chromium: the unanswered-question report (clusters with counts and
channels, phone numbers masked, a period filter), an answer written from a cluster with the form (then edited and
deleted), 👍/👎 per week. Screenshots at 1200 px and 420 px go to docs/img/ for docs/admin_insights.md."""

from __future__ import annotations

import time

import aiohttp
import pytest

from bot import wiring
from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.answerer import SAMPLE_DOCS, CorpusAnswerer
from tests.browser import screenshot_dir
from tests.browser.test_web_pages import browser, log_in  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser

IMG = screenshot_dir()
TOKEN = "adm-insights-token"
WISUDA = ["Kapan jadwal wisuda tahun ini?", "Wisuda periode berikutnya dilaksanakan tanggal berapa?",
          "Tanggal wisuda kapan ya? WA saya 0812-3456-7890"]
ASRAMA = ["Apakah ada asrama untuk mahasiswa baru?", "Dimana saya bisa tinggal di asrama kampus?"]


async def _no_overflow(page) -> None:
    width = await page.evaluate("document.documentElement.scrollWidth")
    viewport = await page.evaluate("window.innerWidth")
    assert width <= viewport, f"the page is {width}px wide in a {viewport}px viewport"


def _crawled_pages(settings: Settings) -> None:
    """The document store as a crawl leaves it: the small test corpus (the answers are indexed next to it)."""
    from sync_jobs.chunking import chunk_document
    from tests.generation.corpus import documents

    docs = documents()
    with wiring.open_docstore(settings) as store:
        store.sync_documents(docs, {d.doc_id: chunk_document(d) for d in docs})


@pytest.fixture
async def served(redis_url, data_dir):
    settings = Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, admin_token=TOKEN,
                        site_seeds=["https://prodi.example.ac.id/"], timezone="Asia/Jakarta")
    _crawled_pages(settings)
    app = ServeApp(settings, answerer=CorpusAnswerer(SAMPLE_DOCS[2:]), index_ready=lambda: True, start_scheduler=False)
    await app.start()
    base = f"http://127.0.0.1:{app.port}"
    async with aiohttp.ClientSession() as session:  # the web chat: the corpus answerer refuses these
        for i, question in enumerate(WISUDA + ASRAMA):
            async with session.post(base + "/api/chat", json={"message": question, "session_id": f"s{i}"}) as r:
                assert r.status == 200 and (await r.json())["abstained"]
    store = app.insights.store
    old = time.time() - 20 * 86400  # an older question: only in the 30-day view
    store.record(trace_id="old-1", channel="telegram", user_key="telegram:9", question="Apakah ada parkir mobil?",
                 answer="", abstained=True, ts=old)
    store.record(trace_id="tg-1", channel="telegram", user_key="telegram:7", question="Kapan wisuda periode ini?",
                 answer="", abstained=True)
    store.record(trace_id="fb-1", channel="whatsapp", user_key="whatsapp:628111", abstained=False,
                 question="Siapa ketua prodi?", answer="Ketua prodi adalah Dr. Supriyono, M.Kom.")
    store.set_feedback("fb-1", "down")
    try:
        yield app, base, settings
    finally:
        await app.stop()


async def test_the_report_and_the_answer_form(browser, served):  # noqa: F811
    app, base, settings = served
    page = await browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        await log_in(page, base, TOKEN)
        await page.locator("body[data-insights=loaded]").wait_for(timeout=30_000)
        clusters = page.locator("#clusters > li.cluster")
        assert await clusters.count() == 3  # wisuda (4), asrama (2), the 👎 answer (1); not the 20-day-old one
        first = clusters.nth(0)
        assert await first.get_attribute("data-count") == "4"
        text = await first.text_content()
        assert "web 3" in text and "Telegram 1" in text
        report = await page.locator("#clusters").text_content()
        assert "0812" not in report and "[nomor telepon]" in report
        assert "Dr. Supriyono" in report  # the answer that got 👎, shown with its question
        assert "1" in await page.locator("#weeks tr").first.text_content()
        assert "Dr. Supriyono" in await page.locator("#worst").text_content()
        await _no_overflow(page)

        await page.select_option("#period", "30d")
        await clusters.nth(3).wait_for(timeout=30_000)
        await page.select_option("#period", "7d")
        await clusters.nth(3).wait_for(state="detached", timeout=30_000)
        await page.screenshot(path=str(IMG / "admin-insights-1200.png"), full_page=True)

        # answer the wisuda cluster from the report
        await clusters.nth(0).get_by_role("button", name="Jawab").click()
        question = await page.locator("#answer-question").input_value()
        assert "wisuda" in question.lower()
        await page.get_by_label("Jawaban", exact=True).fill("Wisuda periode II dilaksanakan pada 12 Oktober 2026.")
        await page.get_by_label("Tautan (opsional)").fill("https://prodi.example.ac.id/berita/wisuda")
        await page.get_by_role("button", name="Simpan jawaban").click()
        await page.locator("#answer-status", has_text="tersimpan").wait_for(timeout=120_000)
        row = page.locator("#answers tr.answer").first
        assert "12 Oktober 2026" in await row.text_content()
        await page.locator("#clusters > li.cluster.covered").first.wait_for(timeout=30_000)
        await page.screenshot(path=str(IMG / "admin-answer-1200.png"), full_page=True)

        # it is in the serving index (no crawl), as its own document titled "Jawaban admin"
        manager = wiring.build_index_manager(settings)
        hits = manager.current().search("Kapan jadwal wisuda?", 3, "hybrid").hits
        assert hits[0].title == "Jawaban admin" and "12 Oktober 2026" in hits[0].text

        # edit it (a new version), then delete it
        await row.get_by_role("button", name="Ubah").click()
        await page.get_by_label("Jawaban", exact=True).fill("Wisuda periode II dilaksanakan pada 19 Oktober 2026.")
        await page.get_by_role("button", name="Simpan perubahan (#1)").click()
        await page.locator("#answer-status", has_text="versi 2").wait_for(timeout=120_000)
        # the status line and the list are updated by separate requests: wait for the list itself
        await page.locator("#answers tr.answer", has_text="19 Oktober 2026").first.wait_for(timeout=120_000)

        await page.set_viewport_size({"width": 420, "height": 900})
        await page.reload()
        await page.locator("body[data-insights=loaded]").wait_for(timeout=30_000)
        await _no_overflow(page)
        await page.screenshot(path=str(IMG / "admin-insights-420.png"), full_page=True)

        await page.locator("#answers tr.answer").first.get_by_role("button", name="Hapus").click()
        await page.locator("#answer-status", has_text="dihapus").wait_for(timeout=120_000)
        await page.locator("#answers tr.answer").first.wait_for(state="detached", timeout=120_000)
        assert await page.locator("#answers tr.answer").count() == 0
        manager.reload_if_changed()
        hits = manager.current().search("Kapan jadwal wisuda?", 3, "hybrid").hits if manager.current() else []
        assert all(h.title != "Jawaban admin" for h in hits)
        assert not errors, errors
    finally:
        await page.close()


async def test_the_insights_api_needs_the_admin_session_and_csrf(served):
    from tests.auxil.admin import admin_headers

    _app, base, _settings = served
    async with aiohttp.ClientSession() as session:
        async with session.get(base + "/admin/api/insights") as r:
            assert r.status == 401
        async with session.post(base + "/admin/api/answers", json={"question": "q", "answer": "a"}) as r:
            assert r.status == 401
        headers = await admin_headers(session, TOKEN, base)
        no_csrf = {k: v for k, v in headers.items() if k != "X-CSRF-Token"}
        async with session.post(base + "/admin/api/answers", json={"question": "q", "answer": "a"},
                                headers=no_csrf) as r:
            assert r.status == 403
        async with session.get(base + "/admin/api/insights?since=kemarin", headers=headers) as r:
            assert r.status == 400 and "7d" in (await r.json())["error"]
        for bad in ({"question": "q"}, {"question": "q", "answer": "a", "expires": "besok"},
                    {"question": "q", "answer": "a", "id": 99}, {"question": 1, "answer": "a"}, ["x"]):
            async with session.post(base + "/admin/api/answers", json=bad, headers=headers) as r:
                assert r.status == 400, bad
        async with session.post(base + "/admin/api/answers/7/delete", headers=headers) as r:
            assert r.status == 404
        async with session.get(base + "/admin/api/insights?since=30d", headers=headers) as r:
            data = await r.json()
        assert r.status == 200 and [c["count"] for c in data["report"]["clusters"]][:1] == [4]
        assert "telegram:7" not in str(data) and "628111" not in str(data)
