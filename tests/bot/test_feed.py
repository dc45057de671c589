"""``/feed.xml`` (issue 32, stage 4) through ``ServeApp`` over real HTTP, validated by parsing it with feedparser
(a test dependency, pinned): Atom 1.0, only the announcements that were sent, the topic filter (normalised like a
subscription: "bsw" is "beasiswa"), polite Indonesian 400s for a bad topic, and the web page links it."""

from __future__ import annotations

import feedparser

from sync_jobs.announcements import Draft
from tests.bot.test_announce_delivery import BEASISWA, SEMINAR
from tests.bot.test_server_channels import apis, served  # noqa: F401  (fixtures)

KRS = Draft(key="k-krs", doc_id="d3", url="https://prodi.example.ac.id/jadwal-krs/", title="Jadwal Pengisian KRS",
            date="2026-11-25", summary="Pengisian Kartu Rencana Studi 1–10 Januari 2027 <online> & luring.",
            text="Jadwal Pengisian KRS\nKartu Rencana Studi", reason="new")


async def fetch(session, path: str):
    async with session.get(path) as r:
        return r.status, r.headers.get("Content-Type", ""), await r.text()


async def test_the_feed_is_atom_with_the_sent_announcements_and_filters_by_topic(served):  # noqa: F811
    store = served.subscriptions
    bsw, sem, krs = store.add_announcements([BEASISWA, SEMINAR, KRS])
    status, kind, body = await fetch(served.test_session, "/feed.xml")
    assert status == 200 and kind.startswith("application/atom+xml")
    empty = feedparser.parse(body)
    assert not empty.bozo and empty.version == "atom10" and empty.entries == []  # pending ones are not public

    store.set_status(bsw.id, "sent")
    store.set_status(krs.id, "sent")
    store.set_status(sem.id, "discarded")
    feed = feedparser.parse((await fetch(served.test_session, "/feed.xml"))[2])
    assert not feed.bozo, feed.bozo_exception
    assert feed.version == "atom10" and feed.feed.title == "Pengumuman Program Studi"
    assert [e.title for e in feed.entries] == [KRS.title, BEASISWA.title]  # newest first; the discarded one absent
    entry = feed.entries[1]
    assert entry.link == BEASISWA.url and entry.summary == BEASISWA.summary
    assert entry.id == f"tag:prodi.example.ac.id,2026-11-26:announcement/{bsw.id}"  # the site's host (demo origin)
    assert entry.published_parsed[:3] == (2026, 11, 26) and entry.updated_parsed is not None
    assert feed.entries[0].summary == KRS.summary  # escaped in the XML, intact after parsing
    assert any(link.rel == "self" for link in feed.feed.links)

    for topic in ("bsw", "beasiswa", "Beasiswa%20dong"):
        only = feedparser.parse((await fetch(served.test_session, f"/feed.xml?topik={topic}"))[2])
        assert not only.bozo and [e.title for e in only.entries] == [BEASISWA.title], topic
        assert only.feed.title == "Pengumuman Program Studi: beasiswa"
    krs_only = feedparser.parse((await fetch(served.test_session, "/feed.xml?topik=krs"))[2])
    assert [e.title for e in krs_only.entries] == [KRS.title]
    none = feedparser.parse((await fetch(served.test_session, "/feed.xml?topik=wisuda"))[2])
    assert not none.bozo and none.entries == []

    status, _, text = await fetch(served.test_session, "/feed.xml?topik=" + "x" * 80)
    assert status == 400 and "terlalu panjang" in text
    status, _, text = await fetch(served.test_session, "/feed.xml?topik=dong")
    assert status == 400 and "tidak dapat dikenali" in text
    status, _, page = await fetch(served.test_session, "/")
    assert 'type="application/atom+xml"' in page and 'href="/feed.xml"' in page
