"""The real reindex job records what the run page shows: the safety valves with thresholds and measured values,
each failed page with its HTTP status and retries, the pages added/changed/removed, and live progress (stage,
pages done of pages known, chunks embedded of all) that another process can read while the run goes on."""

from __future__ import annotations

import pytest

from bot import wiring
from bot.run_views import run_detail
from tests.auxil.reindex_site import ops_settings

pytestmark = pytest.mark.slow  # real reindex runs


async def test_a_failed_run_records_valves_and_failed_pages_with_status_and_retries(mini_site, data_dir) -> None:
    for i in range(8):
        mini_site.set_page(f"/halaman-{i}/", f"Halaman {i}", [f"Informasi akademik nomor {i} untuk mahasiswa."],
                           status=503 if i < 3 else 200)
    settings = ops_settings(data_dir, mini_site.base_url, crawl_retries=1)
    job = wiring.build_reindex_job(settings)
    run = await job.run("cli")
    assert run.status == "FAILED" and run.pages_failed == 3

    detail = run_detail(job.runs, run.run_id, settings.timezone)
    failed = sorted(detail["failed_pages"], key=lambda p: p["url"])
    assert [p["url"] for p in failed] == [f"{mini_site.base_url}/halaman-{i}/" for i in range(3)]
    assert all(p["status"] == 503 and p["retries"] == 1 and "503" in p["error"] for p in failed)
    checks = {c["name"]: c for c in detail["checks"]}
    assert checks["max_error_ratio"]["ok"] is False
    assert checks["max_error_ratio"]["threshold"] == settings.ops.max_error_ratio
    assert checks["max_error_ratio"]["measured"] == round(3 / 9, 4)  # 3 failed of 9 pages tried (8 + home)
    assert checks["pages_fetched"]["ok"] is True and checks["pages_fetched"]["measured"] == 6
    stages = {s["name"]: s["status"] for s in detail["stages"]}
    assert stages["crawl"] == "done" and stages["validate"] == "failed" and stages["index"] == "not_reached"
    assert run.error == checks["max_error_ratio"]["error"]


async def test_a_good_run_records_changes_and_progress(mini_site, data_dir) -> None:
    for i in range(5):
        mini_site.set_page(f"/halaman-{i}/", f"Halaman {i}", [f"Informasi akademik nomor {i} untuk mahasiswa."])
    seen: list[tuple[str, int, int | None]] = []
    settings = ops_settings(data_dir, mini_site.base_url)
    job = wiring.build_reindex_job(settings, progress=lambda stage, done, total: seen.append((stage, done, total)))
    first = await job.run("cli")
    assert first.status == "SUCCESS", first.error

    stages = [s for s, _, _ in seen]
    assert stages.index("crawl") < stages.index("embed") < stages.index("index")
    crawl = [(done, total) for s, done, total in seen if s == "crawl" and total]
    assert crawl[-1] == (6, 6)  # home + 5 pages, all known by the end
    assert all(done <= total for done, total in crawl)
    embed = [(done, total) for s, done, total in seen if s == "embed"]
    assert embed[-1][0] == embed[-1][1] == first.chunks_total
    # the run store kept the last position, for the admin page in another process
    assert job.runs.progress(first.run_id)["stage"] in ("promote", "announce", "index")

    detail = run_detail(job.runs, first.run_id, settings.timezone)
    assert sorted(detail["changes"]["added"]) == sorted(
        [f"{mini_site.base_url}/"] + [f"{mini_site.base_url}/halaman-{i}/" for i in range(5)])
    assert detail["failed_pages"] == [] and all(c["ok"] for c in detail["checks"])

    mini_site.set_page("/halaman-1/", "Halaman 1", ["Informasi akademik yang sudah diperbarui untuk mahasiswa."])
    del mini_site.pages["/halaman-4/"]
    second = await job.run("cli")
    third = await job.run("cli")  # a page is removed only after it is missing at two consecutive crawls
    assert second.status == third.status == "SUCCESS"
    changes = run_detail(job.runs, second.run_id, settings.timezone)["changes"]
    # the edited page, and the home page whose list of links lost halaman-4
    assert sorted(changes["changed"]) == [f"{mini_site.base_url}/", f"{mini_site.base_url}/halaman-1/"]
    assert changes["added"] == []
    assert run_detail(job.runs, third.run_id, settings.timezone)["changes"]["removed"] == [
        f"{mini_site.base_url}/halaman-4/"]
