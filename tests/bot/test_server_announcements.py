"""The admin's control over announcements (issue 32, stage 3) through ``ServeApp`` over real HTTP: the list, edit
summary, send (delivered through the loopback Bot API stand-in; a second click sends nothing), discard, the admin
session and CSRF checks; and ``python -m bot announcements --json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.auxil.admin import admin_headers
from tests.bot.test_announce_delivery import BEASISWA, SEMINAR
from tests.bot.test_server_channels import apis, served  # noqa: F401  (fixtures)


async def test_admin_lists_edits_sends_and_discards(served, apis):  # noqa: F811
    store = served.subscriptions
    store.subscribe("telegram:501", "telegram", "beasiswa")
    store.subscribe("telegram:502", "telegram", "krs")
    bsw, sem = store.add_announcements([BEASISWA, SEMINAR])
    s = served.test_session
    async with s.get("/admin/api/announcements") as r:
        assert r.status == 401  # no session
    headers = await admin_headers(s, "adm")
    async with s.post(f"/admin/api/announcements/{bsw.id}/send", headers={"Cookie": headers["Cookie"]}) as r:
        assert r.status == 403  # no CSRF token
    async with s.get("/admin/api/announcements", headers=headers) as r:
        listed = (await r.json())["announcements"]
    assert [(a["id"], a["status"]) for a in listed] == [(sem.id, "pending"), (bsw.id, "pending")]

    async with s.post(f"/admin/api/announcements/{bsw.id}/summary", headers=headers, json={"summary": " "}) as r:
        assert r.status == 400 and "empty" in (await r.json())["error"]
    async with s.post(f"/admin/api/announcements/{bsw.id}/summary", headers=headers,
                      json={"summary": "Beasiswa dibuka 1 Desember; berkas paling lambat 20 Desember."}) as r:
        assert r.status == 200 and (await r.json())["announcement"]["summary"].startswith("Beasiswa dibuka")
    async with s.post(f"/admin/api/announcements/{bsw.id}/send", headers=headers) as r:
        result = await r.json()
        assert r.status == 200 and result["sent"] == 1 and result["delivered"] is True
    sent = apis.telegram("sendMessage")
    assert [c.params["chat_id"] for c in sent] == [501] and "berkas paling lambat 20 Desember" in sent[0].params["text"]
    async with s.post(f"/admin/api/announcements/{bsw.id}/send", headers=headers) as r:
        assert r.status == 409  # two clicks: one send
    async with s.post(f"/admin/api/announcements/{sem.id}/discard", headers=headers) as r:
        assert r.status == 200
    async with s.post(f"/admin/api/announcements/{sem.id}/send", headers=headers) as r:
        assert r.status == 409
    async with s.post("/admin/api/announcements/99999/send", headers=headers) as r:
        assert r.status == 409
    async with s.get("/admin/api/announcements", headers=headers) as r:
        listed = (await r.json())["announcements"]
    assert [(a["status"], a["deliveries"]["sent"]) for a in listed] == [("discarded", 0), ("sent", 1)]
    assert len(apis.telegram("sendMessage")) == 1


def test_the_cli_lists_announcements_with_their_counts(tmp_path):
    from storage.announcements import AnnouncementStore

    with AnnouncementStore(tmp_path / "announcements.sqlite3") as store:
        a, _ = store.add_announcements([BEASISWA, SEMINAR])
        store.set_status(a.id, "sent")
        store.claim_delivery(a.id, "telegram:1", "telegram")
        store.finish_delivery(a.id, "telegram:1", "sent")
        store.claim_delivery(a.id, "whatsapp:62", "whatsapp")
        store.finish_delivery(a.id, "whatsapp:62", "skipped")
    env = {**os.environ, "DATA_DIR": str(tmp_path), "DATABASE_URL": ""}
    run = subprocess.run([sys.executable, "-m", "bot", "announcements", "--json"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    items = json.loads(run.stdout)["announcements"]
    assert [(i["title"], i["status"]) for i in items] == [(SEMINAR.title, "pending"), (BEASISWA.title, "sent")]
    assert items[1]["deliveries"] == {"sent": 1, "skipped": 1, "failed": 0, "sending": 0}
    text = subprocess.run([sys.executable, "-m", "bot", "announcements"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert "terkirim 1, dilewati 1, gagal 0" in text.stdout and BEASISWA.url in text.stdout


async def test_the_run_page_shows_the_runs_announcements_with_delivery_counts(served, apis):  # noqa: F811
    """GET /admin/api/runs/<id> over real HTTP: the announcements the run's log names, each with its status and
    sent / skipped / failed (one sent through the Bot API stand-in, one WhatsApp user outside the window without a
    template skipped, one failed delivery); a run that found none has an empty list; the page has the section."""
    from bot import wiring

    store = served.subscriptions
    store.subscribe("telegram:501", "telegram", "all")
    store.subscribe("whatsapp:62811", "whatsapp", "all")
    bsw, sem = store.add_announcements([BEASISWA, SEMINAR])
    store.claim_delivery(bsw.id, "telegram:777", "telegram")  # a delivery that failed (e.g. a 400)
    store.finish_delivery(bsw.id, "telegram:777", "failed", detail="BadRequest")
    runs = wiring.build_run_store(served.settings)
    found = runs.start("schedule").run_id
    runs.log(found, {"run_id": found, "stage": "announcements", "duration_s": 0.01, "found": 2, "recorded": 2,
                     "ids": [bsw.id, sem.id]})
    runs.finish(found, "SUCCESS")
    quiet = runs.start("schedule").run_id
    runs.finish(quiet, "SUCCESS")
    s = served.test_session
    headers = await admin_headers(s, "adm")
    async with s.post(f"/admin/api/announcements/{bsw.id}/send", headers=headers) as r:
        assert r.status == 200
    async with s.get(f"/admin/api/runs/{found}") as r:
        assert r.status == 401  # the admin session is needed
    async with s.get(f"/admin/api/runs/{found}", headers=headers) as r:
        assert r.status == 200
        shown = (await r.json())["announcements"]
    assert shown["available"] is True and shown["found"] == 2 and shown["error"] is None
    by_id = {a["id"]: a for a in shown["items"]}
    assert list(by_id) == [bsw.id, sem.id]
    assert by_id[bsw.id]["title"] == BEASISWA.title and by_id[bsw.id]["url"] == BEASISWA.url
    assert by_id[bsw.id]["status_label"] == "dikirim"
    assert by_id[bsw.id]["deliveries"] == {"sent": 1, "skipped": 1, "failed": 1, "sending": 0}
    assert by_id[sem.id]["status_label"] == "menunggu" and by_id[sem.id]["deliveries"]["sent"] == 0
    async with s.get(f"/admin/api/runs/{quiet}", headers=headers) as r:
        assert (await r.json())["announcements"] == {"available": True, "found": 0, "items": [], "error": None}
    async with s.get(f"/admin/runs/{found}", headers=headers) as r:
        assert r.status == 200 and 'id="announcements"' in await r.text()
