"""The admin run views in Debian's Chromium: a finished run's page (stages with durations, a failed page with its
HTTP status), the trend chart of seeded runs, and a reindex started from the admin page whose stage changes on the
page without a reload. Screenshots at 1200 px and at phone width (420 px) go to docs/img/; nothing overflows."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import ServeApp
from bot.settings import Settings
from storage.runs import RunStore
from tests.auxil.answerer import CorpusAnswerer
from tests.auxil.reindex_site import ops_settings
from tests.bot.test_run_views import seed_failed_run
from tests.browser import screenshot_dir
from tests.browser.test_web_pages import browser, log_in  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser

IMG = screenshot_dir()
TOKEN = "adm-runs-token"


def seed_runs(store: RunStore) -> tuple[list[str], str]:
    """Two good scheduled runs and one run the error-ratio valve stopped (newest)."""
    good = []
    for n, (fetched, chunks) in enumerate(((70, 480), (72, 486))):
        run = store.start("schedule")
        rid = run.run_id
        for stage, seconds in (("prepare", 0.02), ("crawl", 31.4 + n), ("chunk", 0.4), ("validate", 0.01),
                               ("embed", 12.2), ("index", 2.1), ("promote", 0.3)):
            store.log(rid, {"run_id": rid, "stage": stage, "duration_s": seconds, "pages_fetched": fetched,
                            "chunks_total": chunks})
        store.finish(rid, "SUCCESS", pages_fetched=fetched, pages_failed=n, chunks_total=chunks,
                     index_version=f"v{n + 1}")
        good.append(rid)
    return good, seed_failed_run(store)


def _settings(data_dir: Path, redis_url: str, seeds: list[str] | None = None, **extra: object) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, admin_token=TOKEN,
                    site_seeds=seeds or ["https://prodi.example.invalid/"], timezone="Asia/Jakarta", **extra)


async def _no_overflow(page) -> None:
    width = await page.evaluate("document.documentElement.scrollWidth")
    viewport = await page.evaluate("window.innerWidth")
    assert width <= viewport, f"the page is {width}px wide in a {viewport}px viewport"


@pytest.fixture
async def served_runs(redis_url, data_dir):
    app = ServeApp(_settings(data_dir, redis_url), answerer=CorpusAnswerer(), index_ready=lambda: True,
                   start_scheduler=False)
    await app.start()
    app.good_runs, app.failed_run = seed_runs(app.ops.runs)  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await app.stop()


async def test_a_failed_runs_page_shows_stages_valves_and_the_failed_page(browser, served_runs):  # noqa: F811
    base = f"http://127.0.0.1:{served_runs.port}"
    page = await browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    try:
        await log_in(page, base, TOKEN)
        # the history links to the run page
        link = page.locator("#runs tr.run a", has_text=served_runs.failed_run)
        await link.wait_for(timeout=15_000)
        # the trend chart of the three seeded runs, drawn by uPlot (a canvas and its legend)
        chart = page.locator("#trend")
        await page.locator('#trend[data-runs="3"]').wait_for(timeout=15_000)  # a selector: the page's CSP forbids eval
        assert await chart.locator("canvas").count() >= 1
        legend = await chart.locator(".u-legend").text_content()
        for label in ("Durasi (s)", "Halaman diambil", "Halaman gagal", "Potongan teks"):
            assert label in legend
        facts = await page.locator("#index").text_content()
        assert "Jadwal berikutnya" in facts and "WIB" in facts
        await _no_overflow(page)
        await page.screenshot(path=str(IMG / "admin-1200.png"), full_page=True)

        await link.click()
        await page.wait_for_url(f"{base}/admin/runs/{served_runs.failed_run}")
        crawl = page.locator("#stages tr[data-stage=crawl]")
        await crawl.wait_for(timeout=15_000)
        assert "4,2 s" in await crawl.text_content() and "selesai" in await crawl.text_content()
        assert "gagal" in await page.locator("#stages tr[data-stage=validate]").text_content()
        failed = page.locator("#failed tr.failed-page").first
        text = await failed.text_content()
        assert "https://prodi.example.ac.id/akademik/" in text and "HTTP 503" in text and "2" in text
        checks = await page.locator("#checks").text_content()
        assert "≤ 20%" in checks and "27%" in checks
        summary = await page.locator("#summary").text_content()
        assert "telegram:42" in summary and "WIB" in summary
        # a failed run records no announcements: the section says so
        assert await page.locator("#announcements-empty").text_content() == "Proses ini tidak menemukan pengumuman."
        assert "download=1" in await page.locator("#download").get_attribute("href")
        await _no_overflow(page)
        await page.screenshot(path=str(IMG / "admin-run-1200.png"), full_page=True)

        await page.set_viewport_size({"width": 420, "height": 900})
        await page.reload()
        await page.locator("#failed tr.failed-page").first.wait_for(timeout=15_000)
        await _no_overflow(page)
        await page.screenshot(path=str(IMG / "admin-run-420.png"), full_page=True)
        await page.goto(base + "/admin")
        await page.locator('#trend[data-runs="3"]').wait_for(timeout=15_000)  # a selector: the page's CSP forbids eval
        await _no_overflow(page)
        await page.screenshot(path=str(IMG / "admin-420.png"), full_page=True)
        assert not errors, errors
    finally:
        await page.close()


async def test_the_raw_json_download_needs_the_admin_session(browser, served_runs):  # noqa: F811
    base = f"http://127.0.0.1:{served_runs.port}"
    context = await browser.new_context()
    try:
        anonymous = await context.request.get(f"{base}/admin/api/runs/{served_runs.failed_run}?download=1")
        assert anonymous.status == 401
        for path in ("/admin/api/overview", "/admin/api/live"):  # every run view goes through the one admin check
            assert (await context.request.get(base + path)).status == 401
        page_without_login = await context.request.get(f"{base}/admin/runs/{served_runs.failed_run}", max_redirects=0)
        assert page_without_login.status == 303 and page_without_login.headers["location"] == "/admin/login"
        page = await context.new_page()
        await log_in(page, base, TOKEN)
        raw = await context.request.get(f"{base}/admin/api/runs/{served_runs.failed_run}?download=1")
        assert raw.status == 200 and "attachment" in raw.headers["content-disposition"]
        data = await raw.json()
        assert data["run"]["status"] == "FAILED" and data["log"][1]["failed_pages"][0]["status"] == 503
        missing = await context.request.get(f"{base}/admin/api/runs/nope")
        assert missing.status == 404
    finally:
        await context.close()


@pytest.fixture
async def served_reindex(redis_url, sample_site, data_dir):
    """``serve`` whose reindex crawls the bundled sample site in a child process (the default). A fresh DATA_DIR:
    the run embeds every chunk, and a small politeness delay spreads the crawl over a few seconds, so both stages
    last long enough to be watched."""
    settings = ops_settings(data_dir, sample_site, redis_url=redis_url, admin_token=TOKEN,
                            timezone="Asia/Jakarta", http_port=0, crawl_delay_seconds=0.03)
    app = ServeApp(settings, answerer=CorpusAnswerer(), index_ready=lambda: True, start_scheduler=False)
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


async def test_a_reindex_started_on_the_admin_page_shows_its_stage_live(browser, served_reindex):  # noqa: F811
    base = f"http://127.0.0.1:{served_reindex.port}"
    page = await browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        await log_in(page, base, TOKEN)
        await page.locator("#index dt").first.wait_for(timeout=15_000)
        await page.evaluate("window.__loaded = true")  # gone if the page reloads
        await page.get_by_role("button", name="Perbarui indeks sekarang").click()
        live = page.locator("#live")
        await live.wait_for(state="visible", timeout=60_000)
        stages: list[str] = []
        counts: set[str] = set()
        while await live.is_visible():
            stage = await live.get_attribute("data-stage")
            if stage and (not stages or stages[-1] != stage):
                stages.append(stage)
            if stage in ("crawl", "embed"):
                count = await page.locator("#live-count").text_content()
                if stage == "embed" and "dari" in count and count not in counts:
                    await page.screenshot(path=str(IMG / "admin-live-1200.png"))
                counts.add(count)
            await page.wait_for_timeout(100)
        # the stage changed on the page, with pages and chunks done out of those known
        assert stages.index("crawl") < stages.index("embed"), stages
        assert any(" dari " in c and "halaman" in c for c in counts), counts  # "(37 dari 74 halaman)"
        assert any(" dari " in c and "potongan teks" in c for c in counts), counts
        assert await page.evaluate("window.__loaded === true")  # without a reload
        row = page.locator("#runs tr.run").first
        await row.filter(has_text="Berhasil").wait_for(timeout=30_000)
        assert "admin" in await row.text_content()
    finally:
        await page.close()


async def test_a_runs_page_lists_its_announcements_with_delivery_counts(browser, served_runs):  # noqa: F811
    """The announcements a good run found (its log's ids), each a link with its status and sent / skipped / failed
    read from the announcement store (issue 32)."""
    from tests.bot.test_announce_delivery import BEASISWA, SEMINAR

    store = served_runs.subscriptions
    bsw, sem = store.add_announcements([BEASISWA, SEMINAR])
    store.set_status(bsw.id, "sent", expect="pending")
    for user, status in (("telegram:1", "sent"), ("telegram:2", "sent"), ("whatsapp:62811", "skipped"),
                         ("telegram:3", "failed")):
        store.claim_delivery(bsw.id, user, user.split(":")[0])
        store.finish_delivery(bsw.id, user, status)
    rid = served_runs.good_runs[-1]
    served_runs.ops.runs.log(rid, {"run_id": rid, "stage": "announcements", "duration_s": 0.01, "found": 2,
                                   "recorded": 2, "ids": [bsw.id, sem.id]})
    base = f"http://127.0.0.1:{served_runs.port}"
    page = await browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        await log_in(page, base, TOKEN)
        await page.goto(f"{base}/admin/runs/{rid}")
        row = page.locator(f"#announcements tr.announcement[data-id='{bsw.id}']")
        await row.wait_for(timeout=15_000)
        cells = [c.strip() for c in await row.locator("td").all_text_contents()]
        assert cells == [BEASISWA.title, "dikirim", "2", "1", "1"]
        assert await row.locator("a").get_attribute("href") == BEASISWA.url
        pending = [c.strip() for c in await page.locator(f"tr[data-id='{sem.id}'] td").all_text_contents()]
        assert pending == [SEMINAR.title, "menunggu", "0", "0", "0"]
        assert await page.locator("#announcements-empty").is_hidden()
        await page.set_viewport_size({"width": 420, "height": 900})
        await _no_overflow(page)
        assert not errors, errors
    finally:
        await page.close()
