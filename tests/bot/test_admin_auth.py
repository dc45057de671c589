"""Admin access: a login form and a short-lived HttpOnly, SameSite=Strict session cookie instead of a token in the
URL; constant-time token check, rate-limited failures, CSRF on state-changing requests, logout."""

from __future__ import annotations

import re

import aiohttp
import pytest

from bot.admin_auth import COOKIE_NAME, AdminAuth
from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.admin import admin_headers
from tests.auxil.answerer import CorpusAnswerer


@pytest.fixture
async def admin(data_dir):
    reindexed: list = []
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, admin_token="adm-token-0123456789"),
        answerer=CorpusAnswerer(), status_provider=lambda: {"index": {"version": "v1"}, "runs": []},
        reindex_trigger=lambda who: reindexed.append(who) or "dimulai", index_ready=lambda: True,
        start_scheduler=False,
    )
    await app.start()
    session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}")
    app.session, app.reindexed = session, reindexed  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await session.close()
        await app.stop()


def _admin_routes(app: ServeApp) -> list[tuple[str, str]]:
    routes = []
    for resource in app.runner.app.router.resources():
        info = resource.get_info()
        path = info.get("path") or info.get("formatter") or ""
        pattern = info.get("pattern")
        if path.startswith("/admin") and path not in ("/admin/login", "/admin/logout"):
            filled = re.sub(r"\{([^}]+)\}", lambda m, p=pattern: _value(m.group(1), p), path)
            for route in resource:
                if route.method in ("GET", "POST"):
                    routes.append((route.method, filled))
    return routes


def _value(name: str, pattern: re.Pattern[str] | None) -> str:
    """A value the route's own pattern accepts for a placeholder: "x-1" ({run_id}, {answer_id}), or the first of
    the alternatives a constrained one lists ({action:send|summary|discard} → "send")."""
    group = re.search(rf"\(\?P<{re.escape(name)}>([^)]*)\)", pattern.pattern) if pattern is not None else None
    if group and "|" in group.group(1):
        return group.group(1).split("|")[0]
    return "x-1"


async def test_no_admin_route_accepts_the_token_in_the_url_or_a_header(admin) -> None:
    routes = _admin_routes(admin)
    assert ("GET", "/admin") in routes and ("POST", "/admin/api/reindex") in routes
    for method, path in routes:
        for kwargs in ({"params": {"token": "adm-token-0123456789"}},
                       {"headers": {"Authorization": "Bearer adm-token-0123456789"}}):
            async with admin.session.request(method, path, allow_redirects=False, **kwargs) as r:
                assert r.status in (303, 401), (method, path, r.status)
                if r.status == 303:
                    assert r.headers["Location"] == "/admin/login"
    assert admin.reindexed == []


async def test_login_sets_a_short_httponly_samesite_strict_cookie(admin) -> None:
    async with admin.session.get("/admin/login") as r:
        page = await r.text()
    assert r.status == 200 and 'method="post"' in page and 'type="password"' in page
    assert r.headers["Cache-Control"] == "no-store"
    async with admin.session.post("/admin/login", data={"token": "adm-token-0123456789"},
                                  allow_redirects=False) as r:
        assert r.status == 303 and r.headers["Location"] == "/admin"
        cookie = r.cookies[COOKIE_NAME]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/admin"
    assert cookie["max-age"] == "1800" and not cookie["secure"]  # ADMIN_SESSION_MINUTES=30; plain http here
    async with admin.session.post("/admin/login", data={"token": "adm-token-0123456789"},
                                  headers={"X-Forwarded-Proto": "https"}, allow_redirects=False) as r:
        assert r.cookies[COOKIE_NAME]["secure"]  # behind the HTTPS reverse proxy


async def test_state_changing_requests_need_the_sessions_csrf_token(admin) -> None:
    headers = await admin_headers(admin.session, "adm-token-0123456789")
    cookie_only = {"Cookie": headers["Cookie"]}
    for bad in (cookie_only, {**cookie_only, "X-CSRF-Token": "forged"}):
        async with admin.session.post("/admin/api/reindex", headers=bad) as r:
            assert r.status == 403 and "CSRF" in (await r.json())["error"]
    assert admin.reindexed == []
    async with admin.session.post("/admin/api/reindex", headers=headers) as r:
        assert r.status == 202
    assert admin.reindexed == [None]


async def test_logout_ends_the_session_for_good(admin) -> None:
    headers = await admin_headers(admin.session, "adm-token-0123456789")
    async with admin.session.post("/admin/logout", data={"csrf": headers["X-CSRF-Token"]},
                                  headers={"Cookie": headers["Cookie"]}, allow_redirects=False) as r:
        assert r.status == 303 and r.headers["Location"] == "/admin/login?keluar=1"
        assert r.cookies[COOKIE_NAME].value == ""  # the browser deletes it
    async with admin.session.get("/admin/api/status", headers=headers) as r:
        assert r.status == 401  # the old cookie, replayed, is revoked
    async with admin.session.get("/admin/login?keluar=1") as r:
        assert "Anda sudah keluar." in await r.text()


async def test_failed_logins_are_rate_limited(admin) -> None:
    for _ in range(5):
        async with admin.session.post("/admin/login", data={"token": "guess"}, allow_redirects=False) as r:
            assert r.status == 401 and "Token admin salah" in await r.text()
    async with admin.session.post("/admin/login", data={"token": "adm-token-0123456789"},
                                  allow_redirects=False) as r:
        assert r.status == 429 and int(r.headers["Retry-After"]) > 0  # even the right token waits now
        assert "Terlalu banyak percobaan" in await r.text()


def test_sessions_expire_cannot_be_forged_and_lockouts_end() -> None:
    now = [1_000_000.0]
    auth = AdminAuth("secret-token", session_minutes=30, clock=lambda: now[0])
    cookie, session = auth.issue()
    assert auth.session(cookie) == session
    expires, nonce, signature = cookie.split(".")
    assert auth.session(f"{int(expires) + 3600}.{nonce}.{signature}") is None  # a longer life is not signed
    assert AdminAuth("other-token", clock=lambda: now[0]).session(cookie) is None  # a new ADMIN_TOKEN logs out
    now[0] += 30 * 60
    assert auth.session(cookie) is None  # expired
    for _ in range(5):
        assert not auth.check_token("10.0.0.1", "nope")
    assert auth.retry_after("10.0.0.1") == 900 and auth.retry_after("10.0.0.2") == 0
    now[0] += 900
    assert auth.retry_after("10.0.0.1") == 0 and auth.check_token("10.0.0.1", "secret-token")
