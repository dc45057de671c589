"""What a security probe of ``serve`` found on the HTTP side, each kept fixed as a class (issue: hardening):

- every text that reaches the embedder or the LLM is capped at the boundary, ``/api/retrieve`` included;
- the web rate limit is keyed on the client address (``X-Forwarded-For`` only from ``TRUSTED_PROXIES``) and covers
  ``/api/chat``, ``/api/retrieve`` and ``/api/feedback``; a client with too many requests in progress is shed;
- the admin login limit cannot be raced with slow bodies, and the global brake never locks out a clean address;
- inputs that used to raise (non-finite ``k``, lone surrogates, non-ASCII cookies and CSRF tokens, huge periods and
  ids) get a deliberate 4xx;
- ``/healthz`` (liveness) does not depend on Redis or the index.
"""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest

from bot.admin_auth import COOKIE_NAME, AdminAuth
from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.admin import admin_headers
from tests.auxil.answerer import CorpusAnswerer

TOKEN = "adm-token-0123456789"


class GatedAnswerer(CorpusAnswerer):
    """The corpus answerer, held at a gate until the test opens it: requests stay in progress on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.waiting = 0
        self.arrived = asyncio.Condition()

    async def answer(self, question, history, *, on_position=None):
        async with self.arrived:
            self.waiting += 1
            self.arrived.notify_all()
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1
        return await super().answer(question, history, on_position=on_position)

    async def until_waiting(self, count: int) -> None:
        async with self.arrived:
            await self.arrived.wait_for(lambda: self.waiting >= count)


async def _search(query: str, k: int) -> list[dict]:
    words = set(query.lower().split())
    hits = [{"chunk_id": f"c{i}", "doc_id": f"d{i}", "url": d.url, "title": d.title, "text": d.text,
             "score": float(len(words & set(d.text.lower().split())))} for i, d in enumerate(CorpusAnswerer().docs)]
    return sorted(hits, key=lambda h: -h["score"])[:k]


async def _serve(data_dir, redis_url=None, answerer=None, **extra) -> ServeApp:
    settings = Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, admin_token=TOKEN,
                        **extra)
    app = ServeApp(settings, answerer=answerer or CorpusAnswerer(), search=_search,
                   status_provider=lambda: {"index": {"version": "v1"}, "runs": []},
                   reindex_trigger=lambda who: "dimulai", index_ready=lambda: True, start_scheduler=False)
    await app.start()
    return app


@pytest.fixture
async def served(data_dir, redis_url):
    app = await _serve(data_dir, redis_url, web_rate_limit_per_minute=5, trusted_proxies="127.0.0.1")
    async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as session:
        app.session = session  # type: ignore[attr-defined]
        try:
            yield app
        finally:
            await app.stop()


# --- 1. caps at the boundary ------------------------------------------------------------------------------------
async def test_retrieve_caps_the_query_like_chat_does(served) -> None:
    limit = served.settings.channels.max_question_chars
    async with served.session.post("/api/retrieve", json={"query": "jadwal " * 2000}) as r:
        body = await r.json()
    assert r.status == 413 and str(limit) in body["error"]
    async with served.session.post("/api/retrieve", json={"query": "j" * limit}) as r:
        assert r.status == 200


async def test_chat_caps_the_question_with_the_same_setting(data_dir) -> None:
    app = await _serve(data_dir, max_question_chars=200)
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as s:
            async with s.post("/api/chat", json={"message": "a" * 201, "session_id": "s1"}) as r:
                body = await r.json()
        assert r.status == 200 and body["kind"] == "notice" and "200 karakter" in body["reply"]
        assert app.answerer.calls == []  # never reached the answerer
    finally:
        await app.stop()


# --- 2. the web rate limit keys on the client address -------------------------------------------------------------
async def _inside_one_minute_window(seconds_needed: float = 15.0) -> None:
    """The rate limit counts per clock minute: start a counting test where the window will not roll over under it."""
    into = time.time() % 60
    if into > 60 - seconds_needed:
        await asyncio.sleep(60 - into + 0.1)


async def test_leaving_out_the_session_does_not_escape_the_rate_limit(served) -> None:
    await _inside_one_minute_window()
    statuses = []
    for _ in range(7):
        async with served.session.post("/api/chat", json={"message": "Siapa ketua program studi?"}) as r:
            statuses.append(r.status)
            if r.status == 429:
                body = await r.json()
                assert "tunggu" in body["reply"] and int(r.headers["Retry-After"]) >= 1
    assert statuses[:5] == [200] * 5 and statuses[5:] == [429, 429]


@pytest.mark.parametrize("path,body", [
    ("/api/retrieve", {"query": "ketua program studi", "k": 1}),
    ("/api/feedback", {"session_id": "s-1", "feedback_id": "t", "value": "up"}),
])
async def test_retrieve_and_feedback_share_the_address_limit(served, path, body) -> None:
    await _inside_one_minute_window()
    statuses = []
    for _ in range(7):
        async with served.session.post(path, json=body) as r:
            statuses.append(r.status)
    assert statuses.count(429) == 2 and 429 not in statuses[:5]


async def test_forwarded_for_counts_only_behind_a_trusted_proxy(served, data_dir, redis_url) -> None:
    await _inside_one_minute_window()
    # behind the trusted proxy (127.0.0.1 here) each student's own address has its own budget
    for student in ("10.1.0.1", "10.1.0.2"):
        for _ in range(5):
            async with served.session.post("/api/chat", json={"message": "Siapa ketua program studi?"},
                                           headers={"X-Forwarded-For": f"203.0.113.9, {student}"}) as r:
                assert r.status == 200
    # a spoofed chain cannot pick a fresh address when the peer is not a trusted proxy
    untrusted = await _serve(data_dir / "u", redis_url, web_rate_limit_per_minute=5)
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{untrusted.port}") as s:
            statuses = []
            for i in range(7):
                async with s.post("/api/chat", json={"message": "Siapa ketua program studi?"},
                                  headers={"X-Forwarded-For": f"10.9.0.{i}"}) as r:
                    statuses.append(r.status)
        assert statuses.count(429) == 2
    finally:
        await untrusted.stop()


async def test_a_client_with_too_many_requests_in_progress_is_shed(data_dir, redis_url) -> None:
    answerer = GatedAnswerer()
    app = await _serve(data_dir, redis_url, answerer=answerer, web_max_in_flight_per_client=2,
                       trusted_proxies="127.0.0.1")
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as s:
            answerer.gate.clear()

            async def ask(address: str, session_id: str) -> int:
                async with s.post("/api/chat", json={"message": "Siapa ketua program studi?",
                                                     "session_id": session_id},
                                  headers={"X-Forwarded-For": address}) as r:
                    return r.status

            held = [asyncio.create_task(ask("10.2.0.1", f"a{i}")) for i in range(2)]
            await asyncio.wait_for(answerer.until_waiting(2), 30)
            assert await ask("10.2.0.1", "a3") == 429  # a third one from the same client: shed at once
            other = asyncio.create_task(ask("10.2.0.2", "b1"))  # another client is still served
            await asyncio.wait_for(answerer.until_waiting(3), 30)
            answerer.gate.set()
            assert await asyncio.gather(*held, other) == [200, 200, 200]
            assert await ask("10.2.0.1", "a4") == 200  # the slots were given back
    finally:
        await app.stop()


# --- 3. admin login: no race, and the global brake spares clean addresses ------------------------------------------
async def _slow_logins(port: int, count: int, token: str) -> list[int]:
    """``count`` logins whose headers all arrive before any body does; the HTTP status of each."""
    body = f"token={token}".encode()
    streams = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /admin/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/x-www-form-urlencoded\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n")
        await writer.drain()
        streams.append((reader, writer))
    await asyncio.sleep(0.5)  # every handler has started and waits for its body
    for _, writer in streams:
        writer.write(body)
        await writer.drain()
    statuses = []
    for reader, writer in streams:
        status_line = await asyncio.wait_for(reader.readline(), 30)
        statuses.append(int(status_line.split()[1]))
        writer.close()
    return statuses


async def test_concurrent_slow_logins_cannot_race_the_limit(data_dir) -> None:
    app = await _serve(data_dir)
    try:
        statuses = await _slow_logins(app.port, 40, "wrong-token")
    finally:
        await app.stop()
    assert statuses.count(401) == 5 and statuses.count(429) == 35


def test_the_global_brake_never_locks_out_an_address_that_has_not_failed() -> None:
    now = [1000.0]
    auth = AdminAuth(TOKEN, clock=lambda: now[0])
    for i in range(30):  # 30 failures spread over 6 addresses
        attempt = auth.begin(f"10.3.0.{i % 6}")
        assert attempt is not None and not auth.finish(attempt, "wrong")
    assert auth.retry_after("10.3.0.1") > 0
    assert auth.retry_after("10.3.0.200") == 0  # never failed: the admin at home can still log in
    attempt = auth.begin("10.3.0.200")
    assert attempt is not None and auth.finish(attempt, TOKEN)
    failed_once = auth.begin("10.3.0.201")
    assert failed_once is not None and not auth.finish(failed_once, "wrong")
    assert auth.retry_after("10.3.0.201") > 0  # one failure while the brake is on: braked
    now[0] += 901
    assert auth.retry_after("10.3.0.201") == 0 and auth.retry_after("10.3.0.1") == 0


def test_a_successful_login_does_not_count_as_a_failure() -> None:
    auth = AdminAuth(TOKEN)
    for _ in range(10):
        attempt = auth.begin("10.4.0.1")
        assert attempt is not None and auth.finish(attempt, TOKEN)
    assert auth.retry_after("10.4.0.1") == 0


async def test_login_limit_uses_the_forwarded_address_behind_a_trusted_proxy(data_dir) -> None:
    app = await _serve(data_dir, trusted_proxies="127.0.0.1/32")
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as s:
            for _ in range(5):
                async with s.post("/admin/login", data={"token": "wrong"},
                                  headers={"X-Forwarded-For": "198.51.100.7"}) as r:
                    assert r.status == 401
            async with s.post("/admin/login", data={"token": "wrong"},
                              headers={"X-Forwarded-For": "198.51.100.7"}) as r:
                assert r.status == 429
            async with s.post("/admin/login", data={"token": TOKEN}, allow_redirects=False,
                              headers={"X-Forwarded-For": "198.51.100.8"}) as r:
                assert r.status == 303  # the admin behind the same proxy is not locked out
    finally:
        await app.stop()


# --- 4. inputs that used to answer 500 ------------------------------------------------------------------------------
async def _status(session: aiohttp.ClientSession, method: str, path: str, **kwargs) -> int:
    async with session.request(method, path, allow_redirects=False, **kwargs) as r:
        await r.read()
        return r.status


@pytest.mark.parametrize("raw", [b'{"query": "jadwal", "k": Infinity}', b'{"query": "jadwal", "k": 1e400}',
                                 b'{"query": "jadwal", "k": -Infinity}', b'{"query": "jadwal", "k": NaN}',
                                 b'{"query": "jadwal", "k": 2.5}', b'{"query": "jadwal", "k": "\\u0663"}'],
                         ids=["inf", "1e400", "-inf", "nan", "fraction", "arabic-digit"])
async def test_retrieve_rejects_a_k_that_is_not_a_whole_number(served, raw) -> None:
    async with served.session.post("/api/retrieve", data=raw) as r:
        assert r.status == 400 and '"k"' in (await r.json())["error"]


@pytest.mark.parametrize("path,raw", [
    ("/api/retrieve", b'{"query": "jadwal \\ud800 kuliah", "k": 2}'),
    ("/api/chat", b'{"message": "siapa \\udfff ketua prodi?", "session_id": "s-sur"}'),
])
async def test_a_lone_surrogate_is_dropped_at_the_boundary(served, path, raw) -> None:
    async with served.session.post(path, data=raw) as r:
        text = await r.text()
        assert r.status == 200, text
    json.loads(text)  # valid UTF-8 JSON back


@pytest.mark.parametrize("cookie", ["1" * 10 + ".abc.def", "\u0661\u0662\u0663.nonce.sig", "9999999999.é.sig",
                                    "٣٣٣٣٣٣٣٣٣٣.n.s"])
async def test_a_forged_cookie_with_odd_characters_is_just_not_logged_in(served, cookie) -> None:
    headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
    assert await _status(served.session, "GET", "/admin/api/status", headers=headers) == 401
    assert await _status(served.session, "GET", "/admin", headers=headers) == 303


async def test_a_non_ascii_csrf_token_is_a_403(served) -> None:
    headers = await admin_headers(served.session, TOKEN)
    headers["X-CSRF-Token"] = "tökén"
    assert await _status(served.session, "POST", "/admin/api/reindex", headers=headers) == 403


@pytest.mark.parametrize("since", ["9" * 400 + "d", "9" * 20 + "w", "٧d"])
async def test_an_absurd_period_is_a_400(served, since) -> None:
    headers = await admin_headers(served.session, TOKEN)
    async with served.session.get("/admin/api/insights", params={"since": since}, headers=headers) as r:
        assert r.status == 400 and "7d" in (await r.json())["error"]


@pytest.mark.parametrize("answer_id", ["1" * 30, "²", "٣"])
async def test_an_answer_id_that_no_answer_can_have_is_a_404(served, answer_id) -> None:
    headers = await admin_headers(served.session, TOKEN)
    assert await _status(served.session, "POST", f"/admin/api/answers/{answer_id}/delete", headers=headers) == 404


async def test_saving_an_answer_under_a_huge_id_is_a_400(served) -> None:
    headers = await admin_headers(served.session, TOKEN)
    body = {"question": "Kapan wisuda?", "answer": "Oktober.", "id": 10 ** 30}
    assert await _status(served.session, "POST", "/admin/api/answers", json=body, headers=headers) == 400


# --- 7. liveness does not depend on Redis ----------------------------------------------------------------------------
async def test_healthz_stays_200_when_redis_is_down(data_dir) -> None:
    app = await _serve(data_dir, "redis://127.0.0.1:1/0")  # nothing listens there
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as s:
            async with s.get("/healthz") as r:
                body = await r.json()
        assert r.status == 200 and body["checks"]["redis"] is False and body["status"] == "ok"
    finally:
        await app.stop()


async def test_a_retrieve_query_is_cleaned_like_a_question(served) -> None:
    raw = {"query": "jadwal\x00 kuliah\u202e hubungi 0812-3456-7891", "k": 1}
    async with served.session.post("/api/retrieve", json=raw) as r:
        body = await r.json()
    assert r.status == 200 and "\x00" not in body["query"] and "\u202e" not in body["query"]
    assert "3456" not in body["query"] and "jadwal kuliah" in body["query"]
