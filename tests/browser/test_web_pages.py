"""The web chat and admin pages in Debian's Chromium (Playwright, no browser download)."""

from __future__ import annotations

import os

import pytest

from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.answerer import ASK_BACK_CHOICES, ASK_BACK_TEXT, AskBackAnswerer, CorpusAnswerer

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


async def log_in(page, base_url: str, token: str) -> None:
    """The admin login form, as an admin uses it: /admin sends a visitor without a session to it."""
    await page.goto(base_url + "/admin")
    await page.get_by_label("Token admin").fill(token)
    await page.get_by_role("button", name="Masuk").click()
    await page.wait_for_url(base_url + "/admin")


def _require_chromium() -> None:
    if not os.path.exists(CHROMIUM):
        pytest.fail("Chromium is missing: apt-get install -y chromium (never download a browser)")


@pytest.fixture
async def browser():
    _require_chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
async def served(redis_url, data_dir):
    def status() -> dict:
        return {
            "index": {"version": "v42", "chunks": 99},
            "runs": [
                {"run_id": "run-newest", "status": "SUCCESS", "started_at": "2026-03-01T02:00:00Z",
                 "ended_at": "2026-03-01T02:04:00Z", "log": [{"stage": "crawl", "msg": "14 halaman diambil"}]},
                {"run_id": "run-older", "status": "FAILED", "started_at": "2026-02-28T02:00:00Z",
                 "ended_at": "2026-02-28T02:01:00Z", "log": ["situs tidak dapat dihubungi"]},
            ],
        }

    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, admin_token="adm-token"),
        answerer=CorpusAnswerer(), status_provider=status, reindex_trigger=lambda who: "dimulai",
        index_ready=lambda: True, start_scheduler=False,
    )
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


async def test_ask_on_the_web_page_and_see_the_answer_with_its_source_link(browser, served):
    page = await browser.new_page()
    try:
        await page.goto(f"http://127.0.0.1:{served.port}/")
        box = page.get_by_label("Pertanyaan Anda")
        await box.fill("Siapa ketua program studi?")
        await box.press("Enter")
        link = page.locator(".msg.bot .sources a")
        await link.first.wait_for(timeout=15_000)
        assert await link.first.get_attribute("href") == "http://prodi.test/profil/ketua"
        assert await link.first.text_content() == "Ketua Program Studi"
        assert "Supriyono" in await page.locator(".msg.bot").first.text_content()
        # the answer span in bold, as text (never markup): the answerer marks "program" in its sentence
        strong = page.locator(".msg.bot p strong")
        assert await strong.count() == 1 and (await strong.first.text_content()).lower() == "program"
        assert await page.locator("#log").get_attribute("aria-live") == "polite"
        # keyboard only: the send button is reachable and the box is cleared for the next question
        assert await box.input_value() == ""
        await page.get_by_role("button", name="Jawaban membantu").click()
        await page.locator(".feedback [role=status]").filter(has_text="Terima kasih").wait_for(timeout=10_000)
        assert await served.stores.feedback.counts() == {"up": 1, "down": 0}
    finally:
        await page.close()


@pytest.fixture
async def served_askback(redis_url, data_dir):
    """``serve`` whose answerer asks back on "emailnya apa?" (tests/auxil/answerer.py)."""
    answerer = AskBackAnswerer()
    app = ServeApp(Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url),
                   answerer=answerer, status_provider=lambda: {"index": {}, "runs": []},
                   reindex_trigger=lambda who: "dimulai", index_ready=lambda: True, start_scheduler=False)
    await app.start()
    app.test_answerer = answerer  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await app.stop()


async def test_ask_back_choices_are_chips_and_a_click_sends_the_choice(browser, served_askback):
    answerer = served_askback.test_answerer
    page = await browser.new_page()
    try:
        await page.goto(f"http://127.0.0.1:{served_askback.port}/")
        box = page.get_by_label("Pertanyaan Anda")
        await box.fill("emailnya apa?")
        await box.press("Enter")
        chips = page.locator(".msg.bot .choices button")
        await chips.first.wait_for(timeout=15_000)
        assert await chips.all_text_contents() == list(ASK_BACK_CHOICES)
        assert ASK_BACK_TEXT in await page.locator(".msg.bot").first.text_content()
        assert await page.locator(".msg.bot .feedback").count() == 0  # asking back is not an answer to rate
        # keyboard: the chip is a focusable button with its text as its name
        await page.get_by_role("button", name=ASK_BACK_CHOICES[1]).focus()
        await page.keyboard.press("Enter")
        await page.locator(".msg.bot").nth(1).wait_for(timeout=15_000)
        assert "santoso@prodi.test" in await page.locator(".msg.bot").nth(1).text_content()
        assert answerer.calls[-1][0] == ASK_BACK_CHOICES[1]
        assert await page.locator(".msg.user").nth(1).text_content() == ASK_BACK_CHOICES[1]  # as if typed
        assert [await chips.nth(i).is_disabled() for i in range(2)] == [True, True]
        assert await page.locator(".msg.bot").nth(1).locator(".feedback button").count() == 2
    finally:
        await page.close()


@pytest.fixture
async def served_with_ops(redis_url, data_dir):
    """``serve`` with the real operations side: runs come from the real RunStore."""
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, admin_token="adm-token",
                 site_seeds=["https://prodi.example.invalid/"]),  # never crawled: no schedule
        answerer=CorpusAnswerer(), index_ready=lambda: True, start_scheduler=False,
    )
    await app.start()
    runs = app.ops.runs
    failed = runs.start("schedule")
    runs.log(failed.run_id, {"stage": "crawl", "msg": "situs tidak dapat dihubungi"})
    runs.finish(failed.run_id, "FAILED", error="site down")
    ok = runs.start("admin", requested_by="telegram:1")
    runs.log(ok.run_id, {"stage": "crawl", "msg": "14 halaman diambil"})
    runs.finish(ok.run_id, "SUCCESS")
    app.run_ids = (ok.run_id, failed.run_id)  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await app.stop()


async def test_admin_page_shows_the_job_runs(browser, served_with_ops):
    newest, older = served_with_ops.run_ids
    page = await browser.new_page()
    try:
        await log_in(page, f"http://127.0.0.1:{served_with_ops.port}", "adm-token")
        rows = page.locator("#runs tr.run")
        await rows.first.wait_for(timeout=15_000)
        assert await rows.count() == 2
        first = await rows.nth(0).text_content()
        assert newest in first and "Berhasil" in first and "14 halaman diambil" in first
        second = await rows.nth(1).text_content()
        assert older in second and "Gagal" in second and "site down" in second  # the run's error
        assert "Jadwal berikutnya" in await page.locator("#index").text_content()  # the index in words
        assert "👍 0" in await page.locator("#feedback").text_content()
    finally:
        await page.close()


async def test_admin_page_reindex_button(browser, served):
    page = await browser.new_page()
    try:
        await log_in(page, f"http://127.0.0.1:{served.port}", "adm-token")
        await page.locator("#runs tr.run").first.wait_for(timeout=15_000)
        assert "v42" in await page.locator("#index").text_content()
        await page.get_by_role("button", name="Perbarui indeks sekarang").click()
        await page.locator("#reindex-status").filter(has_text="dimulai").wait_for(timeout=10_000)
    finally:
        await page.close()
