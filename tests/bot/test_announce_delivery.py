"""Delivering announcements (issue 32, stage 3) through the real senders to the loopback Bot API and Graph API
stand-ins, on a real store: the topic filter, WhatsApp inside and outside the 24-hour window (template payload, or
skipped and counted), each (announcement, subscriber) at most once across a second run and a restart, retries with
backoff, and a user who blocked the bot unsubscribed."""

from __future__ import annotations

import time

import pytest
from aiohttp import web

from bot.announce_delivery import Deliverer, TelegramAnnouncer, WhatsAppAnnouncer
from handlers.whatsapp import GraphClient, GraphConfig
from storage.announcements import AnnouncementStore
from storage.dedup import UserState
from sync_jobs.announcements import Draft
from tests.auxil.fake_apis import FakeApis

BEASISWA = Draft(key="k-bsw", doc_id="d1", url="https://prodi.example.ac.id/beasiswa-2026/",
                 title="Pendaftaran Beasiswa Prestasi 2026", date="2026-11-26",
                 summary="Pendaftaran beasiswa dibuka mulai 1 Desember 2026.",
                 text="Pendaftaran Beasiswa Prestasi 2026\nPendaftaran beasiswa dibuka.", reason="new")
SEMINAR = Draft(key="k-sem", doc_id="d2", url="https://prodi.example.ac.id/seminar-2026/",
                title="Seminar Nasional Informatika", date="2026-11-26", summary="Seminar diadakan 5 Desember.",
                text="Seminar Nasional Informatika\nSeminar diadakan di aula.", reason="new")


@pytest.fixture
async def apis():
    apis = FakeApis()
    original = apis._telegram
    failures: dict[str, list[int]] = {"13": [403], "14": [502, 502]}  # 13 blocked the bot; 14: two 5xx first

    async def telegram(request: web.Request) -> web.Response:
        if request.match_info["method"].lower() == "sendmessage":
            params = await apis._params(request)
            pending = failures.get(str(params.get("chat_id")))
            if pending:
                code = pending.pop(0)
                apis._record(__import__("tests.auxil.fake_apis", fromlist=["Call"]).Call(
                    "telegram", "sendMessage-failed", params, request.path, status=code))
                text = "Forbidden: bot was blocked by the user" if code == 403 else "Bad Gateway"
                return web.json_response({"ok": False, "error_code": code, "description": text}, status=code)
        return await original(request)

    apis._telegram = telegram
    await apis.start()
    yield apis
    await apis.close()


@pytest.fixture
def store(tmp_path):
    s = AnnouncementStore(tmp_path / "announcements.sqlite3")
    yield s
    s.close()


def senders(apis, state, template=""):
    graph = GraphClient(GraphConfig(base_url=apis.graph_base, phone_number_id="PNID", token="wa-token",
                                    backoff_seconds=0.01))
    return {"telegram": TelegramAnnouncer("123:fake", base_url=apis.telegram_base, timeout_seconds=5),
            "whatsapp": WhatsAppAnnouncer(graph, state.last_inbound, template=template, language="id")}


async def close(senders_by_channel):
    for sender in senders_by_channel.values():
        await sender.close()


async def test_the_right_message_to_the_right_users_once(apis, store):
    state = UserState()
    for user, channel, topic in (("telegram:11", "telegram", "all"), ("telegram:12", "telegram", "beasiswa"),
                                 ("telegram:15", "telegram", "krs"), ("whatsapp:62811", "whatsapp", "all"),
                                 ("whatsapp:62822", "whatsapp", "beasiswa"), ("telegram:11", "telegram", "beasiswa")):
        store.subscribe(user, channel, topic)
    await state.touch_inbound("whatsapp:62822", time.time() - 3600)  # inside the window
    await state.touch_inbound("whatsapp:62811", time.time() - 3 * 86400)  # outside it
    bsw, sem = store.add_announcements([BEASISWA, SEMINAR])
    out = senders(apis, state, template="pengumuman_prodi")
    try:
        deliverer = Deliverer(store, out, backoff_seconds=0.01)
        report = await deliverer.deliver(bsw)
        assert report.counts == {"sent": 4, "skipped": 0, "failed": 0, "already": 0}
        sem_report = await deliverer.deliver(sem)
        assert sem_report.counts["sent"] == 2  # telegram:11 (all) and whatsapp:62811 (all)
    finally:
        await close(out)
    tg = apis.telegram("sendMessage")
    assert sorted(c.params["chat_id"] for c in tg) == [11, 11, 12]
    first = next(c for c in tg if "Beasiswa" in c.params["text"])
    assert first.params["parse_mode"] == "HTML" and "<b>Pendaftaran Beasiswa Prestasi 2026</b>" in first.params["text"]
    assert 'href="https://prodi.example.ac.id/beasiswa-2026/"' in first.params["text"]
    inside = [c for c in apis.graph("text") if c.params["to"] == "62822"]
    assert len(inside) == 1 and "Pendaftaran Beasiswa Prestasi 2026" in inside[0].params["text"]["body"]
    templates = apis.graph("template")
    assert [c.params["to"] for c in templates] == ["62811", "62811"]
    template = templates[0].params["template"]
    assert template["name"] == "pengumuman_prodi" and template["language"]["code"] == "id"
    body = template["components"][0]
    assert body["type"].lower() == "body" and [p["text"] for p in body["parameters"]] == [
        BEASISWA.title, BEASISWA.summary, BEASISWA.url]
    assert store.delivery_counts(bsw.id) == {"sending": 0, "sent": 4, "skipped": 0, "failed": 0}

    # a second delivery, and one after a restart (a new store and senders): nothing is sent twice
    calls = len(apis.calls)
    again = senders(apis, state, template="pengumuman_prodi")
    reopened = AnnouncementStore(store.path)
    try:
        repeat = await Deliverer(reopened, again).deliver(bsw)
    finally:
        await close(again)
        reopened.close()
    assert repeat.counts["already"] == 4 and repeat.counts["sent"] == 0 and len(apis.calls) == calls


async def test_without_a_template_outside_the_window_is_skipped_and_counted(apis, store):
    state = UserState()
    store.subscribe("whatsapp:62811", "whatsapp", "all")
    (bsw,) = store.add_announcements([BEASISWA])
    out = senders(apis, state)
    try:
        report = await Deliverer(store, out).deliver(bsw)
    finally:
        await close(out)
    assert report.counts["skipped"] == 1 and apis.graph() == []
    assert store.delivery_counts(bsw.id)["skipped"] == 1


async def test_a_blocked_user_is_unsubscribed_and_failures_are_retried(apis, store):
    state = UserState()
    for user in ("telegram:13", "telegram:14", "telegram:16"):
        store.subscribe(user, "telegram", "all")
    (bsw,) = store.add_announcements([BEASISWA])
    out = senders(apis, state)
    try:
        report = await Deliverer(store, out, backoff_seconds=0.01).deliver(bsw)
    finally:
        await close(out)
    assert report.counts == {"sent": 2, "skipped": 0, "failed": 1, "already": 0} and report.unsubscribed == 1
    assert store.topics("telegram:13") == [] and store.topics("telegram:14") == ["all"]
    assert [c.status for c in apis.calls if c.params.get("chat_id") == 14] == [502, 502, 200]
    assert store.delivery_counts(bsw.id)["failed"] == 1
