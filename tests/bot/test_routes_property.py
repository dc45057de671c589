"""No input makes any route answer 5xx: a property-based test over every route of a real ``serve``.

The server is the production wiring (``answerer=None``: the real index built from two documents, the learned reader,
real Redis, the admin page, both webhooks against the loopback platform stand-ins), run in its own thread and
event loop like a real process. Hypothesis sends arbitrary JSON (non-finite numbers and lone surrogates included)
or raw bytes, arbitrary headers (as raw UTF-8 bytes), cookies, query strings and path parameters to every route,
sometimes with a valid admin session and CSRF token, a valid Telegram secret or a valid WhatsApp signature, so
the handlers behind each check are reached too. The budget is fixed and the seed fixed: the same examples
every time, on every checkout.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import http.client
import json
import re
import threading
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from bot.admin_auth import COOKIE_NAME
from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.fake_apis import FakeApis

pytestmark = pytest.mark.integration

ADMIN_TOKEN = "adm-token-property-0123"
SEED = 20261126
EXAMPLES_PER_ROUTE = 60  # the fixed budget: 60 seeded examples for each of the ~24 routes
TG_SECRET = "tg-secret-property"
WA_SECRET = "wa-app-secret-property"
DOCS = [
    {"id": "ketua", "url": "https://prodi.example.ac.id/profil/ketua", "title": "Ketua Program Studi",
     "text": "Ketua Program Studi Teknik Informatika adalah Dr. Supriyono, M.Kom. Beliau menjabat sejak 2021."},
    {"id": "basis-data", "url": "https://prodi.example.ac.id/kurikulum/basis-data", "title": "Basis Data",
     "text": "Mata kuliah Basis Data berbobot 3 SKS dan diambil pada semester 3."},
]


class ServedApp:
    """``serve`` with the fake platform APIs, in a thread of its own; ``request`` talks raw HTTP to it."""

    def __init__(self, data_dir: Path, redis_url: str) -> None:
        self.data_dir, self.redis_url = data_dir, redis_url
        data_dir.mkdir(parents=True, exist_ok=True)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.run(self._start())

    def run(self, coroutine, timeout: float = 300):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _start(self) -> None:
        from bot import wiring
        from bot.cmd_retrieval import load_jsonl_corpus

        self.apis = await FakeApis().start()
        self.settings = Settings(
            _env_file=None, data_dir=self.data_dir, http_port=0, redis_url=self.redis_url, llm_threads=1,
            answerer="reader", site_seeds=["https://prodi.example.invalid/"], reindex_in_subprocess=False,
            admin_token=ADMIN_TOKEN, admin_ids="1", web_rate_limit_per_minute=100_000,
            user_rate_limit_per_minute=100_000,
            telegram_token="123:fake", telegram_webhook_url="https://bot.example.invalid/telegram/webhook",
            telegram_secret_token=TG_SECRET, telegram_api_base_url=self.apis.telegram_base,
            whatsapp_token="wa-token", whatsapp_phone_number_id="PNID", whatsapp_verify_token="verify-me",
            whatsapp_app_secret=WA_SECRET, whatsapp_graph_base_url=self.apis.graph_base)
        corpus = self.data_dir / "docs.jsonl"
        corpus.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS) + "\n", encoding="utf-8")
        documents, chunks = load_jsonl_corpus(corpus, self.settings)
        wiring.build_index_manager(self.settings).build(chunks, documents)
        self.app = ServeApp(self.settings, start_scheduler=False)
        await self.app.start()
        await self.app.readiness.wait()  # the LLM warmed up: from here on even /readyz has no reason for a 503
        self.port = self.app.port

    async def _stop(self) -> None:
        await self.app.stop()
        await self.apis.close()

    def close(self) -> None:
        try:
            self.run(self._stop(), timeout=60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)

    def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, bytes] | None = None
                ) -> tuple[int, bytes, dict[str, str]]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            connection.putrequest(method, path, skip_accept_encoding=True)
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            if body or method == "POST":
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body or None)
            response = connection.getresponse()
            return response.status, response.read(), dict(response.getheaders())
        finally:
            connection.close()

    def routes(self) -> list[tuple[str, str]]:
        found = []
        for resource in self.app.runner.app.router.resources():
            info = resource.get_info()
            pattern = info.get("formatter") or info.get("path") or info.get("prefix")
            for route in resource:
                if route.method in ("GET", "POST") and pattern:
                    found.append((route.method, pattern))
        return sorted(set(found))

    def admin_login(self) -> tuple[str, str]:
        status, _, headers = self.request("POST", "/admin/login", f"token={ADMIN_TOKEN}".encode(),
                                          {"Content-Type": b"application/x-www-form-urlencoded"})
        assert status == 303
        cookie = re.search(rf"{COOKIE_NAME}=([^;]+)", headers["Set-Cookie"]).group(1)
        status, page, _ = self.request("GET", "/admin", headers={"Cookie": f"{COOKIE_NAME}={cookie}".encode()})
        assert status == 200
        return cookie, re.search(r'data-csrf="([^"]+)"', page.decode()).group(1)


# --- strategies ---------------------------------------------------------------------------------------------------
# values that broke servers before (here or elsewhere): odd digits, lone surrogates, huge numbers, overlong text
NASTY = ["", " ", "\x00", "\ud800", "\udfff", "é", "\u0663\u0663", "\u00b2", "9" * 400 + "d", "1" * 30, "Infinity",
         "NaN", "-1", "0", "1e400", "../../etc/passwd", "%00", "<script>alert(1)</script>", "' OR 1=1 --", "a" * 5000,
         "\u202e", "null", "7d", "\u0667d", "99999999999999999999w"]
_text = st.one_of(st.text(st.characters(codec=None, exclude_categories=()), max_size=40),  # surrogates, controls
                  st.sampled_from(NASTY))
_json = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 40), max_value=10 ** 40)
    | st.floats(allow_nan=True, allow_infinity=True) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["message", "query", "question", "text", "k", "top_k", "session_id", "feedback_id", "value",
                         "id", "answer", "link", "expires", "token", "csrf", "object", "entry", "update_id",
                         "message_id", "chat", "from"]) | _text, inner, max_size=5),
    max_leaves=12)
_edge_scalar = st.sampled_from([float("inf"), float("-inf"), float("nan"), 10 ** 30, -(2 ** 63), 2.5, -1, 0, True,
                                 None, "\u0663", "\ud800", "9" * 400, "", "1" * 30])
_scalar = st.one_of(_edge_scalar, _edge_scalar, st.none() | st.booleans(),
                    st.integers(min_value=-(10 ** 40), max_value=10 ** 40),
                    st.floats(allow_nan=True, allow_infinity=True), _text)
_id = st.integers(min_value=-(10 ** 30), max_value=10 ** 30) | _scalar
_telegram_update = st.fixed_dictionaries({"update_id": st.integers(0, 2 ** 31) | _id}, optional={
    "message": st.fixed_dictionaries(
        {"message_id": _id, "date": _id, "chat": st.fixed_dictionaries({"id": _id, "type": st.just("private")})},
        optional={"text": _text | _scalar, "from": st.fixed_dictionaries(
            {"id": _id, "is_bot": st.booleans(), "first_name": _text})}),
    "callback_query": st.fixed_dictionaries({"id": _text, "data": _text, "chat_instance": _text,
                                             "from": st.fixed_dictionaries({"id": _id, "is_bot": st.booleans(),
                                                                            "first_name": _text})})})
_whatsapp_delivery = st.fixed_dictionaries({"object": st.just("whatsapp_business_account") | _text, "entry": st.lists(
    st.fixed_dictionaries({"id": _text, "changes": st.lists(st.fixed_dictionaries({"field": st.just("messages"),
        "value": st.fixed_dictionaries({"messaging_product": st.just("whatsapp")}, optional={
            "metadata": st.fixed_dictionaries({"phone_number_id": st.just("PNID") | _text,
                                               "display_phone_number": _text}),
            "contacts": st.lists(st.fixed_dictionaries({"wa_id": _text, "profile": st.fixed_dictionaries(
                {"name": _text})}), max_size=2),
            "messages": st.lists(st.fixed_dictionaries(
                {"from": _text | st.just("6281234567890"), "id": _text, "timestamp": _text | st.just("1767000000"),
                 "type": st.sampled_from(["text", "interactive", "image", "button"]) | _text},
                optional={"text": st.fixed_dictionaries({"body": _text | _scalar})}), max_size=2)})}),
        max_size=2)}), max_size=2)})
# a real question with arbitrary text (controls, surrogates, anything) around it: reaches the answer pipeline
_question = st.builds(lambda a, q, b: a + q + b, _text, st.sampled_from(
    ["Siapa ketua program studi?", "berapa sks basis data", "kalo mau daftar beasiswa syaratnya apa aja?",
     "/status", "/sumber", "/hapus", "/jawab a | b", "/feedback up x"]), _text)
# bodies shaped like what each route reads, with arbitrary values where the fields go
SHAPED = {
    "/api/chat": st.one_of(
        st.fixed_dictionaries({"message": _question, "session_id": st.just("s-1") | _text}),
        st.fixed_dictionaries({"message": _text | _scalar}, optional={"query": _scalar, "session_id": _scalar})),
    "/api/retrieve": st.one_of(
        st.fixed_dictionaries({"query": _question, "k": st.one_of(st.integers(1, 20), st.integers(1, 20), _scalar)}),
        st.fixed_dictionaries({"query": _text | _scalar}, optional={"k": _scalar, "top_k": _scalar})),
    "/api/feedback": st.fixed_dictionaries({}, optional={"session_id": st.just("s-1") | _scalar,
                                                          "feedback_id": _scalar, "value": st.just("up") | _scalar}),
    "/admin/api/answers": st.fixed_dictionaries({}, optional={
        "question": _text | _scalar, "answer": _text | _scalar, "link": _scalar, "expires": _text | _scalar,
        "id": _id}),
    "/telegram/webhook": _telegram_update,
    "/whatsapp/webhook": _whatsapp_delivery,
}
_header_names = st.sampled_from(["X-CSRF-Token", "X-Forwarded-For", "X-Forwarded-Proto", "Content-Type",
                                 "X-Telegram-Bot-Api-Secret-Token", "X-Hub-Signature-256", "Accept-Language",
                                 "Authorization", "Origin", "Referer"])
# mostly what a parser lets through (text without control characters, sent as raw UTF-8), now and then raw bytes
_header_values = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), max_size=40).map(str.encode),
    st.text(st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=40).map(str.encode),
    st.sampled_from(NASTY).map(lambda t: t.encode("utf-8", "surrogatepass").replace(b"\x00", b"")),
    st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")))
_path_values = _text | st.from_regex(r"[0-9]{1,40}", fullmatch=True) | st.sampled_from(["run-1", "1", "0", "-1"])


AUTH_MIX = {"telegram": ["telegram", "telegram", "telegram", "none"], "whatsapp": ["whatsapp", "whatsapp", "whatsapp", "none"],
            "admin": ["admin", "admin", "none"]}


@st.composite
def requests(draw, route):  # type: ignore[no-untyped-def]
    method, pattern = route
    path = re.sub(r"\{[^}]+\}", lambda _: urllib.parse.quote(draw(_path_values).encode("utf-8", "surrogatepass"),
                                                              safe=""), pattern)
    if pattern.startswith("/static"):
        path = "/static/" + draw(st.sampled_from(["app.js", "style.css", "../settings.py", "%2e%2e/x", "nope"]))
    query = draw(st.dictionaries(st.sampled_from(["since", "download", "keluar", "hub.mode", "hub.verify_token",
                                                  "hub.challenge", "k"]) | _text, _text, max_size=3))
    if query:
        path += "?" + urllib.parse.urlencode({k.encode("utf-8", "surrogatepass"): v.encode("utf-8", "surrogatepass")
                                              for k, v in query.items()})
    kind = draw(st.sampled_from(["shaped", "shaped", "shaped", "shaped", "json", "bytes", "form", "none"]))
    if kind == "shaped" and pattern in SHAPED:
        body = json.dumps(draw(SHAPED[pattern]), allow_nan=True).encode()
    elif kind in ("json", "shaped"):
        body = json.dumps(draw(_json), allow_nan=True).encode()
    elif kind == "bytes":
        body = draw(st.binary(max_size=200))
    elif kind == "form":
        body = urllib.parse.urlencode(list(draw(st.dictionaries(_text, _text, max_size=3)).items()),
                                      encoding="utf-8", errors="surrogatepass").encode()
    else:
        body = b""
    headers = {name: value for name, value in draw(st.dictionaries(_header_names, _header_values, max_size=2)).items()}
    if kind == "form" and draw(st.booleans()):
        headers["Content-Type"] = b"application/x-www-form-urlencoded"
    cookie = draw(st.sampled_from(["none", "valid", "random", "forged"]))
    # mostly the credentials the route checks, so the examples get past the check to the handler behind it
    auth = draw(st.sampled_from(AUTH_MIX.get(pattern.split("/")[1], ["none", "admin", "telegram", "whatsapp"])))
    return method, pattern, path, body, headers, cookie, auth, draw(_header_values)


def test_no_input_makes_any_route_answer_5xx(redis_url, tmp_path) -> None:
    served = ServedApp(tmp_path / "data", redis_url)
    try:
        _probe_every_route(served)
    finally:
        served.close()


def _probe_every_route(served: ServedApp) -> None:
    routes = served.routes()
    assert len(routes) >= 20 and ("POST", "/api/retrieve") in routes and ("POST", "/telegram/webhook") in routes
    cookie, csrf = served.admin_login()
    answered: dict[tuple[str, str], set[int]] = {}
    for route in routes:
        _probe_route(served, route, cookie, csrf, answered.setdefault(route, set()))
    # the examples got past the checks: the answering routes and the webhooks saw more than their refusals
    for route in [("POST", "/api/chat"), ("POST", "/api/retrieve"), ("POST", "/telegram/webhook"),
                  ("POST", "/whatsapp/webhook"), ("GET", "/admin/api/insights")]:
        assert 200 in answered[route], f"{route} never answered 200: {sorted(answered[route])}"


def _probe_route(served: ServedApp, route: tuple[str, str], cookie: str, csrf: str, seen: set[int]) -> None:
    # a fixed seed, not derandomize: derandomize seeds from the test's code and place, so another checkout path
    # would draw other examples; this way every checkout runs the same ones
    @seed(SEED)
    @settings(max_examples=EXAMPLES_PER_ROUTE, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(requests(route))
    def probe(request) -> None:  # type: ignore[no-untyped-def]
        method, _, path, body, headers, cookie_kind, auth, random_cookie = request
        headers = dict(headers)
        if cookie_kind == "valid":
            headers["Cookie"] = f"{COOKIE_NAME}={cookie}".encode()
        elif cookie_kind == "random":
            headers["Cookie"] = COOKIE_NAME.encode() + b"=" + random_cookie.replace(b";", b"")
        elif cookie_kind == "forged":  # the cookie's own shape, expiry.nonce.signature, with odd parts
            part = random_cookie.replace(b";", b"").replace(b".", b"")
            headers["Cookie"] = COOKIE_NAME.encode() + b"=" + b".".join([part, part[:3] or b"n", b"sig"])
        if auth == "admin":
            headers["Cookie"] = f"{COOKIE_NAME}={cookie}".encode()
            headers["X-CSRF-Token"] = csrf.encode()
        elif auth == "telegram":
            headers["X-Telegram-Bot-Api-Secret-Token"] = TG_SECRET.encode()
        elif auth == "whatsapp":
            headers["X-Hub-Signature-256"] = ("sha256=" + hmac.new(WA_SECRET.encode(), body, hashlib.sha256)
                                              .hexdigest()).encode()
        status, payload, _ = served.request(method, path, body, headers)
        seen.add(status)
        assert status < 500, f"{method} {path} answered {status}: {payload[:300]!r}"

    probe()
