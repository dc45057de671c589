"""Which pages of a reindex become announcements (issue 32, stage 2), on the real sample site, the real crawler and
the real reindex job: unchanged pages, a footer-only change and a changed lecturer profile outside the news
section produce none; a new news post produces one, with its title, date, verbatim lead sentences and link; a
second run records nothing twice; a failed run records nothing."""

from __future__ import annotations

from datetime import date

from bot import wiring
from bot.announcements import AnnouncingReindexJob
from tests.auxil.reindex_site import ops_settings
from tests.auxil.sample_news import change_footer_everywhere, edit, news_post, publish

LEAD = ("Pendaftaran Beasiswa Prestasi Akademik 2026 dibuka mulai 1 Desember 2026 untuk mahasiswa aktif semester 3 "
        "sampai 7.")
SECOND = "Berkas diunggah melalui portal beasiswa paling lambat 20 Desember 2026."
THIRD = "Pengumuman penerima dijadwalkan pada 10 Januari 2027."


def announcements(settings):
    store = wiring.open_announcement_store(settings)
    try:
        return store.announcements()
    finally:
        store.close()


def stage(settings, run_id: str) -> dict | None:
    return next((line for line in wiring.build_run_store(settings).logs(run_id)
                 if line.get("stage") == "announcements"), None)


async def test_only_a_new_news_post_becomes_an_announcement(mutable_sample_site, warm_data_dir):
    site = mutable_sample_site
    settings = ops_settings(warm_data_dir, site.base_url)
    job = wiring.build_reindex_job(settings)
    assert isinstance(job, AnnouncingReindexJob)

    first = await job.run("cli")  # the first crawl of an empty store: every page is new, none of it is news
    assert first.status == "SUCCESS" and first.pages_changed > 60
    assert announcements(settings) == [] and stage(settings, first.run_id) is None

    unchanged = await wiring.build_reindex_job(settings).run("cli")
    assert unchanged.status == "SUCCESS" and unchanged.pages_changed == 0 and announcements(settings) == []

    # a footer on every page and a lecturer's profile (outside the news section) change: no announcement
    assert change_footer_everywhere(site.root) > 60
    edit(site.root, "/supriyono-m-kom/", "<dt>Bidang Keahlian</dt><dd>Software Engineering",
         "<dt>Bidang Keahlian</dt><dd>Software Engineering dan DevOps")
    changed = await wiring.build_reindex_job(settings).run("cli")
    assert changed.status == "SUCCESS", changed.error
    docs = wiring.open_docstore(settings)
    try:
        assert any("DevOps" in d.text for d in docs.documents(kind="lecturer"))  # the change was crawled
        assert docs.last_changes().changed  # … and indexed as a changed document
    finally:
        docs.close()
    assert announcements(settings) == []

    # a news post is published: the listings, every page's sidebar and the sitemap change with it; one announcement
    today = wiring.local_today(settings)
    publish(site.root, news_post("pendaftaran-beasiswa-prestasi-akademik-2026",
                                 "Pendaftaran Beasiswa Prestasi Akademik 2026", f"{LEAD} {SECOND} {THIRD}",
                                 "Informasi lengkap tersedia di bagian kemahasiswaan.", day=today))
    published = await wiring.build_reindex_job(settings).run("schedule")
    assert published.status == "SUCCESS", published.error
    found = announcements(settings)
    assert [(a.title, a.date, a.status, a.run_id) for a in found] == [
        ("Pendaftaran Beasiswa Prestasi Akademik 2026", today.isoformat(), "pending", published.run_id)]
    assert found[0].summary == f"{LEAD} {SECOND}"  # two lead sentences, verbatim
    assert found[0].url.endswith("/pendaftaran-beasiswa-prestasi-akademik-2026/")
    line = stage(settings, published.run_id)
    assert line is not None and line["recorded"] == 1 and line["ids"] == [found[0].id]

    again = await wiring.build_reindex_job(settings).run("schedule")  # nothing new: nothing recorded twice
    assert again.status == "SUCCESS" and len(announcements(settings)) == 1


async def test_a_failed_run_records_nothing(mutable_sample_site, warm_data_dir):
    site = mutable_sample_site
    settings = ops_settings(warm_data_dir, site.base_url)
    assert (await wiring.build_reindex_job(settings).run("cli")).status == "SUCCESS"
    publish(site.root, news_post("seminar-nasional-informatika-2026", "Seminar Nasional Informatika 2026",
                                 "Seminar nasional diadakan pada 5 Desember 2026 di aula utama. Pendaftaran gratis.",
                                 day=date.today()))
    job = wiring.build_reindex_job(settings)

    def broken_build(chunks, documents):
        raise OSError("disk full")

    job.index_manager.build = broken_build  # fails after the crawl was read and the announcement found
    failed = await job.run("cli")
    assert failed.status == "FAILED" and "disk full" in failed.error and announcements(settings) == []


async def test_auto_mode_sends_what_a_run_found_at_once(mutable_sample_site, warm_data_dir):
    from tests.auxil.fake_apis import FakeApis

    apis = await FakeApis().start()
    try:
        site = mutable_sample_site
        settings = ops_settings(warm_data_dir, site.base_url, announce_mode="auto", telegram_token="123:fake",
                                telegram_api_base_url=apis.telegram_base)
        assert (await wiring.build_reindex_job(settings).run("cli")).status == "SUCCESS"
        store = wiring.open_announcement_store(settings)
        store.subscribe("telegram:77", "telegram", "beasiswa")
        store.subscribe("telegram:78", "telegram", "wisuda")
        store.close()
        publish(site.root, news_post("pendaftaran-beasiswa-prestasi-akademik-2026",
                                     "Pendaftaran Beasiswa Prestasi Akademik 2026", f"{LEAD} {SECOND}",
                                     day=wiring.local_today(settings)))
        run = await wiring.build_reindex_job(settings).run("schedule")
        assert run.status == "SUCCESS", run.error
        found = announcements(settings)
        assert [a.status for a in found] == ["sent"]
        sent = apis.telegram("sendMessage")
        assert [c.params["chat_id"] for c in sent] == [77] and LEAD.split(" dibuka")[0] in sent[0].params["text"]
    finally:
        await apis.close()
