"""The admin login flow in Debian's Chromium: log in with the form, reindex, log out; afterwards the admin JSON
routes refuse, and the token never appears in a URL."""

from __future__ import annotations

import pytest

from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.answerer import CorpusAnswerer
from tests.browser.test_web_pages import browser, log_in  # noqa: F401  (the browser fixture)

pytestmark = pytest.mark.browser

TOKEN = "adm-token-for-the-browser"


@pytest.fixture
async def served(data_dir):
    reindexed: list = []
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, admin_token=TOKEN),
        answerer=CorpusAnswerer(),
        status_provider=lambda: {"index": {"version": "v9", "chunks": 12}, "runs": []},
        reindex_trigger=lambda who: reindexed.append(who) or "dimulai", index_ready=lambda: True,
        start_scheduler=False,
    )
    await app.start()
    app.reindexed = reindexed  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await app.stop()


async def test_log_in_reindex_log_out(browser, served):  # noqa: F811
    base = f"http://127.0.0.1:{served.port}"
    context = await browser.new_context()
    page = await context.new_page()
    visited: list[str] = []
    page.on("request", lambda request: visited.append(request.url))
    try:
        # a wrong token first: the form says so, no session
        await page.goto(base + "/admin")
        assert page.url == base + "/admin/login"
        await page.get_by_label("Token admin").fill("salah")
        await page.get_by_role("button", name="Masuk").click()
        assert "Token admin salah" in await page.locator("#message").text_content()

        await log_in(page, base, TOKEN)
        cookie = next(c for c in await context.cookies() if c["name"] == "prodibot_admin")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/admin"
        assert await page.evaluate("document.cookie") == ""  # invisible to scripts
        assert "Riwayat pembaruan" in await page.content()

        await page.get_by_role("button", name="Perbarui indeks sekarang").click()
        await page.locator("#reindex-status").filter(has_text="dimulai").wait_for(timeout=10_000)
        assert served.reindexed == [None]

        await page.get_by_role("button", name="Keluar").click()
        await page.wait_for_url(base + "/admin/login?keluar=1")
        assert "Anda sudah keluar." in await page.locator("#message").text_content()
        assert not [c for c in await context.cookies() if c["name"] == "prodibot_admin"]
        # the admin JSON routes refuse without the session, from the same browser
        status = await page.evaluate("fetch('/admin/api/status').then(r => r.status)")
        reindex = await page.evaluate("fetch('/admin/api/reindex', {method: 'POST'}).then(r => r.status)")
        assert (status, reindex) == (401, 401) and served.reindexed == [None]
        await page.goto(base + "/admin")
        assert page.url == base + "/admin/login"
        assert not any(TOKEN in url for url in visited)  # never in a URL: history, logs and referrers stay clean
    finally:
        await context.close()
