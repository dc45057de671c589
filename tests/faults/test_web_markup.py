"""HTML and Markdown typed into the web chat are shown as the literal text the student typed, never rendered or run
(Chromium via Playwright, the real pipeline behind the page). Also: a 10,000-character and an emoji-only message get
polite replies on the page."""

from __future__ import annotations

import pytest

from tests.browser.test_web_pages import browser  # noqa: F401  (the shared Chromium fixture)

pytestmark = [pytest.mark.faults, pytest.mark.browser]

XSS = "<img src=x onerror=\"window.__pwned=1\"><b>Siapa</b> ketua **program studi** informatika? <script>window.__pwned=2</script>"


async def _ask(page, text: str, n: int) -> str:
    box = page.get_by_label("Pertanyaan Anda")
    await box.fill(text)
    await box.press("Enter")
    bot = page.locator(".msg.bot")
    await bot.nth(n).wait_for(timeout=30_000)
    return await bot.nth(n).text_content() or ""


async def test_markup_in_a_web_question_is_shown_as_text_and_never_runs(browser, make_served, generator):  # noqa: F811
    app = await make_served(generator)
    page = await browser.new_page()
    try:
        await page.goto(f"http://127.0.0.1:{app.port}/")
        answer = await _ask(page, XSS, 0)
        assert answer.strip()  # a reply (an abstention: the markup's words are not in the evidence)
        user = page.locator(".msg.user").first
        assert await user.text_content() == XSS  # the literal text, markup and all
        assert await page.locator("#log img").count() == 0
        assert await page.locator("#log script").count() == 0
        assert await page.locator("#log b, #log strong").count() == 0
        assert await page.evaluate("window.__pwned === undefined")

        long_reply = await _ask(page, "kurikulum " * 1000, 1)  # the page's textarea caps a message at 1000 chars
        assert long_reply.strip()
        assert len(await page.locator(".msg.user").nth(1).text_content() or "") <= 1000
        emoji_reply = await _ask(page, "😀🙏🔥", 2)
        assert emoji_reply.strip() and ("maaf" in emoji_reply.lower() or "silakan" in emoji_reply.lower())
    finally:
        await page.close()
    # a client that bypasses the page gets the polite limit notice from the JSON API
    async with app.session.post("/api/chat", json={"message": "kurikulum " * 1000, "session_id": "s-long"}) as r:
        body = await r.json()
    assert "terlalu panjang" in body.get("reply", "") + body.get("error", ""), body
