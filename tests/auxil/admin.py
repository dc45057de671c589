"""Log in to /admin the way a browser does (the login form), for tests of admin routes."""

from __future__ import annotations

import re

import aiohttp

from bot.admin_auth import COOKIE_NAME


async def admin_headers(session: aiohttp.ClientSession, token: str, base_url: str = "") -> dict[str, str]:
    """POST the token to /admin/login; returns the headers of a logged-in admin: the session cookie and the CSRF
    token that state-changing admin requests need (``X-CSRF-Token``). Independent of the session's cookie jar
    (aiohttp's default jar ignores cookies from IP addresses such as 127.0.0.1)."""
    async with session.post(f"{base_url}/admin/login", data={"token": token}, allow_redirects=False) as r:
        assert r.status == 303, f"login failed: HTTP {r.status}"
        cookie = r.cookies[COOKIE_NAME].value
    headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
    async with session.get(f"{base_url}/admin", headers=headers, allow_redirects=False) as r:
        assert r.status == 200, f"/admin after login: HTTP {r.status}"
        found = re.search(r'data-csrf="([^"]+)"', await r.text())
    assert found, "the admin page carries no CSRF token"
    return {**headers, "X-CSRF-Token": found.group(1)}
