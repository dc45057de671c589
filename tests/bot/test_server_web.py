"""The web side of the shared server: /api/chat (both request bodies), /api/retrieve, /admin, /healthz, /metrics."""

from __future__ import annotations

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.admin import admin_headers
from tests.auxil.answerer import CorpusAnswerer


@pytest.fixture
async def web(redis_url, data_dir):
    healthy = {"index": True}
    reindexed: list = []

    async def search(query: str, k: int) -> list[dict]:
        words = set(query.lower().split())
        hits = [
            {"chunk_id": f"c{i}", "doc_id": f"d{i}", "url": d.url, "title": d.title, "score": float(len(words & set(d.text.lower().split()))), "text": d.text}
            for i, d in enumerate(CorpusAnswerer().docs)
        ]
        return sorted(hits, key=lambda h: -h["score"])[:k]

    def status() -> dict:
        return {
            "index": {"version": "v7", "chunks": 12},
            "runs": [{"run_id": "run-abc", "status": "SUCCESS", "started_at": "2026-01-01T02:00:00Z",
                      "ended_at": "2026-01-01T02:03:00Z", "log": [{"stage": "crawl", "pages": 14}]}],
        }

    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, admin_token="adm-token"),
        answerer=CorpusAnswerer(),
        search=search,
        status_provider=status,
        reindex_trigger=lambda who: reindexed.append(who) or "dimulai",
        index_ready=lambda: healthy["index"],
        start_scheduler=False,
    )
    await app.start()
    session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}")
    app.session, app.healthy, app.reindexed = session, healthy, reindexed  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await session.close()
        await app.stop()


async def test_api_chat_accepts_message_and_session(web):
    async with web.session.post("/api/chat", json={"message": "Siapa ketua program studi?", "session_id": "abc"}) as r:
        assert r.status == 200
        data = await r.json()
    assert "Supriyono" in data["answer"]
    assert data["sources"] == [{"url": "http://prodi.test/profil/ketua", "title": "Ketua Program Studi"}]
    assert data["session_id"] == "abc" and data["abstained"] is False
    assert set(data["usage"]) >= {"prompt_tokens", "completion_tokens", "total_tokens", "latency_ms"}
    assert data["trace"]["trace_id"] == data["feedback_id"]


async def test_api_chat_accepts_the_thesis_query_body(web):
    async with web.session.post("/api/chat", json={"query": "Berapa SKS mata kuliah Basis Data?"}) as r:
        data = await r.json()
    assert r.status == 200 and "3 SKS" in data["answer"]
    assert data["session_id"].startswith("anon-")


async def test_api_chat_keeps_history_per_session(web):
    for text in ("Siapa ketua program studi?", "Berapa SKS mata kuliah Basis Data?"):
        async with web.session.post("/api/chat", json={"message": text, "session_id": "s-1"}) as r:
            assert r.status == 200
    question, history = web.answerer.calls[-1]
    assert [m.text for m in history][0] == "Siapa ketua program studi?"


@pytest.mark.parametrize(
    "body", [b"not json", b"[]", b'{"message": ""}', b'{"message": 5}', b"{}"], ids=["junk", "list", "empty", "num", "none"]
)
async def test_api_chat_bad_bodies_are_400(web, body):
    async with web.session.post("/api/chat", data=body) as r:
        assert r.status == 400
        assert "error" in await r.json()


async def test_api_retrieve_with_k_and_top_k(web):
    async with web.session.post("/api/retrieve", json={"query": "ketua program studi", "k": 2}) as r:
        data = await r.json()
    assert r.status == 200 and len(data["hits"]) == 2
    assert data["hits"][0]["url"] == "http://prodi.test/profil/ketua"
    async with web.session.post("/api/retrieve", json={"query": "laboratorium", "top_k": 1}) as r:
        assert len((await r.json())["hits"]) == 1
    for bad in ({"query": "x", "k": 0}, {"query": "x", "k": "lima"}, {"k": 3}, {"query": "x", "k": True}):
        async with web.session.post("/api/retrieve", json=bad) as r:
            assert r.status == 400


async def test_admin_needs_a_session_and_shows_runs_feedback_and_reindex(web):
    async with web.session.get("/admin", allow_redirects=False) as r:
        assert r.status == 303 and r.headers["Location"] == "/admin/login"
    for refused in ({"params": {"token": "adm-token"}}, {"headers": {"Authorization": "Bearer adm-token"}}):
        async with web.session.get("/admin/api/status", **refused) as r:
            assert r.status == 401  # the token is only ever typed into the login form
    headers = await admin_headers(web.session, "adm-token")
    async with web.session.get("/admin", headers=headers) as r:
        assert r.status == 200 and "Riwayat pembaruan" in await r.text()
    await web.stores.feedback.add("web:s", "t1", "up")
    async with web.session.get("/admin/api/status", headers=headers) as r:
        data = await r.json()
    assert data["runs"][0]["run_id"] == "run-abc" and data["feedback"] == {"up": 1, "down": 0}
    async with web.session.post("/admin/api/reindex") as r:
        assert r.status == 401
    async with web.session.post("/admin/api/reindex", headers=headers) as r:
        assert r.status == 202
    assert web.reindexed == [None]


async def test_healthz_lists_index_and_redis_but_only_liveness_decides(web):
    async with web.session.get("/healthz") as r:
        data = await r.json()
        assert r.status == 200 and data["checks"] == {"process": True, "index": True, "redis": True}
    web.healthy["index"] = False
    async with web.session.get("/healthz") as r:  # no index: /readyz is 503, but a restart would not help
        assert r.status == 200 and (await r.json())["checks"]["index"] is False


async def test_metrics_count_messages_by_channel(web):
    async with web.session.post("/api/chat", json={"message": "Siapa ketua program studi?"}) as r:
        assert r.status == 200
    async with web.session.get("/metrics") as r:
        body = await r.text()
    assert r.status == 200
    assert 'prodibot_messages_total{channel="web"} 1.0' in body
    assert 'prodibot_answers_total{channel="web"} 1.0' in body
    assert 'prodibot_answer_latency_seconds_count{stage="total"} 1.0' in body


async def test_index_page_and_static_assets(web):
    async with web.session.get("/") as r:
        html = await r.text()
        assert r.status == 200 and 'aria-live="polite"' in html and '<label for="message">' in html
        assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    async with web.session.get("/static/app.js") as r:
        assert r.status == 200
    async with web.session.get("/static/../settings.py") as r:
        assert r.status in (403, 404)


async def test_admin_disabled_without_token(redis_url, data_dir):
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0),
        answerer=CorpusAnswerer(), status_provider=dict, reindex_trigger=lambda who: None,
        index_ready=lambda: True, start_scheduler=False,
    )
    await app.start()
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as s:
            async with s.get("/admin/login") as r:
                assert r.status == 404 and "ADMIN_TOKEN" in (await r.json())["error"]
            async with s.get("/healthz") as r:
                assert (await r.json())["checks"] == {"process": True, "index": True}  # no Redis configured
            async with s.post("/api/retrieve", json={"query": "x"}) as r:
                assert r.status == 503 and "index" in (await r.json())["error"]
    finally:
        await app.stop()


async def test_api_feedback_stores_the_vote_for_the_session(web):
    async with web.session.post("/api/chat", json={"message": "Siapa ketua program studi?", "session_id": "f1"}) as r:
        trace = (await r.json())["feedback_id"]
    async with web.session.post("/api/feedback", json={"session_id": "f1", "feedback_id": trace, "value": "down"}) as r:
        assert r.status == 200 and (await r.json())["stored"] is True
    assert [(e.trace_id, e.value) for e in await web.stores.feedback.entries("web:f1")] == [(trace, "down")]
    for bad in ({"session_id": "f1", "value": "meh"}, {"value": "up"}, []):
        async with web.session.post("/api/feedback", json=bad) as r:
            assert r.status == 400
