"""The one shared aiohttp server: the channels' routes, the admin page, health and metrics.

Each channel in ``bot/channels/`` brings its routes (Telegram ``/telegram/webhook``; WhatsApp ``/whatsapp/webhook``,
GET verify and POST deliveries; the web chat ``/``, ``/api/chat``, ``/api/retrieve``, ``/api/feedback``). Here:
``/admin`` (+ ``/admin/api/status``, ``/admin/api/reindex``, the run page
``/admin/runs/<run_id>`` and its ``/admin/api/runs/<run_id>``, ``/admin/api/overview``, ``/admin/api/live``, the
insights ``/admin/api/insights`` and the admin answers ``/admin/api/answers`` (+ ``/<id>/delete``)), ``/healthz`` (liveness), ``/readyz`` (readiness), ``/metrics``
and ``/static/…``. Every route answers 2xx or a deliberate 4xx for any input; handler bugs are logged and become a
500 without taking the process down.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.admin_auth import COOKIE_NAME, AdminAuth, Session
from handlers.awaitables import resolve
from handlers.web import WebApiError
from storage.errors import StoreError

__all__ = ["PAGE_HEADERS", "ServerParts", "WEB_DIR", "build_server", "client_address", "json_error", "proxy_networks",
           "read_json"]

logger = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent / "web"
MAX_BODY_BYTES = 1_000_000
HEALTH_CHECK_SECONDS = 2.0  # each informational /healthz check gets this long
MAX_ID_DIGITS = 18  # an id with more digits than a signed 64-bit integer can hold is no id of ours
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass
class ServerParts:
    """Everything the routes need, built by ``bot/app.py``. Missing parts disable their routes (404/503)."""

    # the channels' routes: (method, path, handler), from bot/channels/ (bot/app.py collects them)
    channel_routes: list[tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]] = field(
        default_factory=list)
    admin_token: str | None = None
    # TRUSTED_PROXIES as networks: only a peer inside one of them may name the client in X-Forwarded-For
    trusted_proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    admin_session_minutes: float = 30.0  # ADMIN_SESSION_MINUTES: lifetime of an admin login
    admin_status: Callable[[], Awaitable[dict[str, Any]] | dict[str, Any]] | None = None
    feedback_counts: Callable[[], Awaitable[dict[str, int]]] | None = None
    reindex: Callable[[], Awaitable[Any] | Any] | None = None
    admin_runs: Any = None  # bot.run_views.RunViews: the run pages, live progress and trends
    admin_insights: Any = None  # bot.insights.Insights: the unanswered-question report and the admin answers
    announcements: Any = None  # bot.announcements.AnnouncementDesk: "Pengumuman baru" (send / edit / discard)
    site_url: str = ""  # the prodi's site (the Atom feed's alternate link and entry ids)
    health_checks: dict[str, Callable[[], Awaitable[bool] | bool]] = field(default_factory=dict)
    readiness: Any = None  # bot.readiness.Readiness: /readyz
    metrics: Any = None
    before_metrics: Callable[[], Any] | None = None  # refreshes gauges (LLM queue depth) before a scrape


def proxy_networks(items: Sequence[str]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """``TRUSTED_PROXIES`` entries (addresses or CIDRs, validated by the settings) as networks."""
    return tuple(ipaddress.ip_network(item, strict=False) for item in items)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def client_address(request: web.Request, trusted: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> str:
    """The address the request came from: the peer, or, when the peer is a trusted proxy, the right-most address in
    ``X-Forwarded-For`` that is not itself a trusted proxy (what a client writes into the header further left is
    never believed). An IPv6 client is its /64, the block one subscriber gets, so it cannot rotate through it."""
    peer = _address(request.remote or "")
    if peer is None:
        return request.remote or "unknown"
    client = peer
    if trusted and any(peer in net for net in trusted):
        hops = [hop for value in request.headers.getall("X-Forwarded-For", []) for hop in value.split(",")]
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                break  # garbage: keep the last hop a trusted proxy vouched for
            client = address
            if not any(address in net for net in trusted):
                break
    if client.version == 6:
        return str(ipaddress.ip_network(f"{client}/64", strict=False))
    return str(client)


def _drop_surrogates(value: Any) -> Any:
    """``value`` (parsed JSON) with lone surrogates (``"\\ud800"``, valid JSON but not text) removed from every string."""
    if isinstance(value, str):
        return value.encode("utf-8", "ignore").decode("utf-8") if not value.isascii() else value
    if isinstance(value, list):
        return [_drop_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_drop_surrogates(key): _drop_surrogates(item) for key, item in value.items()}
    return value


async def read_json(request: web.Request) -> Any:
    """The request's JSON body (strings without lone surrogates); a body that is not JSON is a 400 (``WebApiError``)."""
    try:
        return _drop_surrogates(json.loads(await request.read()))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise WebApiError(400, 'the body must be JSON, e.g. {"message": "Siapa ketua prodi?"}') from None


def json_error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


@web.middleware
async def _errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except StoreError as error:  # the database is away or refused: say so (admins get the store's message)
        logger.error("%s %s: %s", request.method, request.path, error)
        if request.path.startswith("/admin"):
            return json_error(503, f"the store is unavailable: {error}")
        return json_error(503, "the database is unavailable right now; try again in a moment")
    except Exception:  # boundary: the outermost HTTP middleware; any handler error is a logged 500
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return json_error(500, "internal error; see the server log")


class _Routes:
    def __init__(self, parts: ServerParts) -> None:
        self.parts = parts
        self.auth = AdminAuth(parts.admin_token, session_minutes=parts.admin_session_minutes) \
            if parts.admin_token else None
        self._templates: dict[str, str] = {}

    # --- admin -----------------------------------------------------------------------------------------------
    def _admin_ok(self, request: web.Request) -> web.StreamResponse | None:
        """The one admin check every /admin route calls: None when the request carries a live admin session (and,
        for a state-changing request, that session's CSRF token in ``X-CSRF-Token``); otherwise the refusal: a
        redirect to the login form for a page, 401/403 JSON for the API. A token in the URL is never accepted."""
        if self.auth is None:
            return json_error(404, "the admin page is disabled; set ADMIN_TOKEN to enable it")
        session = self._session(request)
        if session is None:
            if request.method == "GET" and not request.path.startswith("/admin/api/"):
                raise web.HTTPSeeOther(location="/admin/login")
            return json_error(401, "not logged in: log in at /admin/login (the admin session expired or is missing)")
        if request.method not in ("GET", "HEAD", "OPTIONS") and \
                not self.auth.csrf_ok(session, request.headers.get("X-CSRF-Token")):
            return json_error(403, "CSRF token missing or wrong; reload /admin and try again")
        return None

    def _session(self, request: web.Request) -> Session | None:
        return self.auth.session(request.cookies.get(COOKIE_NAME)) if self.auth is not None else None

    def _page(self, name: str, status: int = 200, **values: str) -> web.Response:
        """A page from bot/web with ``{{NAME}}`` placeholders filled (values are HTML-escaped)."""
        import html

        text = self._templates.get(name)
        if text is None:  # a few KB, read once per process
            text = self._templates[name] = (WEB_DIR / name).read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", html.escape(value, quote=True))
        return web.Response(text=text, status=status, content_type="text/html", charset="utf-8",
                            headers={**PAGE_HEADERS, "Cache-Control": "no-store"})

    async def admin_page(self, request: web.Request) -> web.StreamResponse:
        refused = self._admin_ok(request)
        if refused is not None:
            return refused
        session = self._session(request)
        assert session is not None
        return self._page("admin.html", CSRF_TOKEN=session.csrf)

    async def admin_login_form(self, request: web.Request) -> web.StreamResponse:
        if self.auth is None:
            return json_error(404, "the admin page is disabled; set ADMIN_TOKEN to enable it")
        if self._session(request) is not None:
            raise web.HTTPSeeOther(location="/admin")
        note = "Anda sudah keluar." if "keluar" in request.query else ""
        return self._page("login.html", MESSAGE=note)

    async def admin_login(self, request: web.Request) -> web.StreamResponse:
        """POST /admin/login (form field ``token``): a session cookie and a redirect to /admin, or the form again."""
        if self.auth is None:
            return json_error(404, "the admin page is disabled; set ADMIN_TOKEN to enable it")
        client = client_address(request, self.parts.trusted_proxies)
        attempt = self.auth.begin(client)  # reserved before the body is read: slow bodies cannot race the limit
        if attempt is None:
            wait = self.auth.retry_after(client)
            minutes = max(1, (wait + 59) // 60)
            page = self._page("login.html", 429, MESSAGE=f"Terlalu banyak percobaan masuk yang gagal. Silakan coba "
                                                         f"lagi dalam {minutes} menit.")
            page.headers["Retry-After"] = str(max(1, wait))
            return page
        try:
            form = await request.post()
        except Exception:  # boundary: the login handler; an unreadable form (too large, bad encoding) is a failed login
            form = {}
        given = form.get("token", "") if hasattr(form, "get") else ""
        if not isinstance(given, str) or not self.auth.finish(attempt, given.strip()):
            logger.warning("admin login failed from %s", client)
            return self._page("login.html", 401, MESSAGE="Token admin salah. Silakan coba lagi.")
        cookie, session = self.auth.issue()
        response = web.HTTPSeeOther(location="/admin")
        secure = request.secure or request.headers.get("X-Forwarded-Proto", "").lower() == "https"
        response.set_cookie(COOKIE_NAME, cookie, max_age=self.auth.session_seconds, path="/admin", httponly=True,
                            samesite="Strict", secure=secure)
        logger.info("admin logged in from %s (session until %s)", client, session.expires)
        raise response

    async def admin_logout(self, request: web.Request) -> web.StreamResponse:
        """POST /admin/logout (form field ``csrf``): revoke the session, delete the cookie, back to the form."""
        if self.auth is None:
            return json_error(404, "the admin page is disabled; set ADMIN_TOKEN to enable it")
        session = self._session(request)
        try:
            form = await request.post()
        except Exception:  # boundary: the logout handler; an unreadable form means no CSRF token
            form = {}
        given = form.get("csrf") if hasattr(form, "get") else None
        if session is not None and self.auth.csrf_ok(session, given if isinstance(given, str) else None):
            self.auth.revoke(session)
        response = web.HTTPSeeOther(location="/admin/login?keluar=1")
        response.del_cookie(COOKIE_NAME, path="/admin")
        raise response

    async def admin_status(self, request: web.Request) -> web.Response:
        refused = self._admin_ok(request)
        if refused is not None:
            return refused
        data: dict[str, Any] = {"index": {}, "runs": []}
        if self.parts.admin_status is not None:
            try:
                status = await resolve(self.parts.admin_status())
                if isinstance(status, dict):
                    data.update(status)
            except Exception as error:  # boundary: the admin status page renders with the provider's error shown
                logger.exception("admin status provider failed")
                data["error"] = f"status unavailable: {error}"
        if self.parts.feedback_counts is not None:
            data["feedback"] = await self.parts.feedback_counts()
        return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False, default=str))

    async def admin_reindex(self, request: web.Request) -> web.Response:
        refused = self._admin_ok(request)
        if refused is not None:
            return refused
        if self.parts.reindex is None:
            return json_error(503, "reindex is not available in this process")
        try:
            result = await resolve(self.parts.reindex())
        except Exception as error:  # boundary: the admin handler answers 409 with why the reindex could not start
            logger.exception("reindex from the admin page failed")
            return json_error(409, f"reindex could not start: {error}")
        return web.json_response({"started": True, "detail": str(result) if result else ""}, status=202)

    # --- admin: run pages, live progress, trends (bot.run_views) ------------------------------------------------
    def _admin_runs(self, request: web.Request) -> web.Response | None:
        refused = self._admin_ok(request)
        if refused is not None:
            return refused
        if self.parts.admin_runs is None:
            return json_error(503, "run history is not available in this process")
        return None

    async def admin_run_page(self, request: web.Request) -> web.StreamResponse:
        refused = self._admin_ok(request)
        if refused is not None:
            return refused
        return web.FileResponse(WEB_DIR / "run.html", headers=PAGE_HEADERS)

    async def admin_overview(self, request: web.Request) -> web.Response:
        refused = self._admin_runs(request)
        if refused is not None:
            return refused
        data = await self.parts.admin_runs.overview()
        return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False, default=str))

    async def admin_live(self, request: web.Request) -> web.Response:
        refused = self._admin_runs(request)
        if refused is not None:
            return refused
        data = {"live": await self.parts.admin_runs.live()}
        return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False, default=str))

    async def admin_run(self, request: web.Request) -> web.Response:
        refused = self._admin_runs(request)
        if refused is not None:
            return refused
        run_id = request.match_info["run_id"]
        data = await self.parts.admin_runs.detail(run_id)
        if data is None:
            return json_error(404, f"no run {run_id!r}; see /admin for the run history")
        if request.query.get("download"):
            raw = {"run": data["run"], "log": data["log"]}
            return web.Response(text=json.dumps(raw, ensure_ascii=False, indent=2, default=str),
                                content_type="application/json", headers={
                                    "Content-Disposition": f'attachment; filename="run-{data["run"]["run_id"]}.json"'})
        return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False, default=str))

    # --- admin: unanswered-question report, feedback, admin answers (bot.insights) ---------------------------------
    def _admin_insights(self, request: web.Request) -> web.StreamResponse | None:
        refused = self._admin_ok(request)
        if refused is not None:
            return refused
        if self.parts.admin_insights is None:
            return json_error(503, "insights are not available in this process")
        return None

    async def _blocking(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import asyncio
        import functools

        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))

    async def admin_insights(self, request: web.Request) -> web.StreamResponse:
        """GET ?since=7d (or 24h, 4w): the report's clusters, 👍/👎 per week, the most 👎 answers, admin answers."""
        import time

        from bot.insights import parse_period

        refused = self._admin_insights(request)
        if refused is not None:
            return refused
        insights = self.parts.admin_insights
        period = request.query.get("since", "7d")
        try:
            seconds = parse_period(period)
        except ValueError as error:
            return json_error(400, str(error))
        since = time.time() - seconds
        data = {
            "period": period,
            "timezone": str(getattr(insights, "zone", "") or ""),
            "report": await self._blocking(insights.report, since),
            "weeks": await self._blocking(insights.feedback_weeks, 8),
            "worst": await self._blocking(insights.worst_answers, since, 5),
            "answers": await self._blocking(insights.answers),
        }
        return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False, default=str))

    async def admin_answer_save(self, request: web.Request) -> web.StreamResponse:
        """POST JSON {question, answer, link?, expires?, id?}: a new admin answer, or a new version of ``id``."""
        refused = self._admin_insights(request)
        if refused is not None:
            return refused
        try:
            body = await read_json(request)
        except WebApiError as error:
            return json_error(error.status, error.message)
        if not isinstance(body, dict):
            return json_error(400, 'send a JSON object: {"question": "...", "answer": "..."}')
        fields = {k: body.get(k) for k in ("question", "answer", "link", "expires")}
        if not all(isinstance(v, str) or v is None for v in fields.values()):
            return json_error(400, "question, answer, link and expires must be text")
        answer_id = body.get("id")
        if answer_id is not None and (isinstance(answer_id, bool) or not isinstance(answer_id, int)
                                      or not 0 < answer_id < 10 ** MAX_ID_DIGITS):
            return json_error(400, "id must be the number of an existing admin answer")
        try:
            saved = await self._blocking(
                self.parts.admin_insights.save_answer, question=fields["question"] or "",
                answer=fields["answer"] or "", link=fields["link"] or "", expires=fields["expires"] or "",
                author="admin (web)", answer_id=answer_id)
        except ValueError as error:
            return json_error(400, str(error))
        except RuntimeError as error:
            return json_error(409, f"saved, but the index could not be rebuilt: {error}")
        pending = getattr(self.parts.admin_insights, "last_rebuild", None) == "pending"
        return web.json_response({"answer": saved.as_json(), "indexed": not pending}, status=201,
                                 dumps=lambda d: json.dumps(d, ensure_ascii=False))

    async def admin_answer_delete(self, request: web.Request) -> web.StreamResponse:
        refused = self._admin_insights(request)
        if refused is not None:
            return refused
        raw = request.match_info["answer_id"]
        if not (raw.isascii() and raw.isdigit()) or len(raw) > MAX_ID_DIGITS:
            return json_error(404, f"no admin answer {raw[:40]!r}")
        deleted = await self._blocking(self.parts.admin_insights.delete_answer, int(raw), "admin (web)")
        if not deleted:
            return json_error(404, f"no admin answer {raw} (or it was already deleted)")
        return web.json_response({"deleted": int(raw)})

    # --- announcements (issue 32) -----------------------------------------------------------------------------
    def _announcement(self, request: web.Request) -> tuple[web.StreamResponse | None, int]:
        refused = self._admin_ok(request)
        if refused is not None:
            return refused, 0
        if self.parts.announcements is None:
            return json_error(503, "announcements are not available in this process"), 0
        raw = request.match_info.get("announcement_id", "0")
        if not (raw.isascii() and raw.isdigit()) or len(raw) > MAX_ID_DIGITS:
            return json_error(404, f"no announcement {raw[:40]!r}"), 0
        return None, int(raw)

    async def admin_announcements(self, request: web.Request) -> web.StreamResponse:
        """GET: the recent announcements, newest first, with their delivery counts."""
        refused, _ = self._announcement(request)
        if refused is not None:
            return refused
        items = await self._blocking(self.parts.announcements.listing, 50)
        return web.json_response({"announcements": items}, dumps=lambda d: json.dumps(d, ensure_ascii=False))

    async def admin_announcement_action(self, request: web.Request) -> web.StreamResponse:
        """POST …/{id}/send | /summary {"summary"} | /discard. 409 when it is no longer waiting."""
        refused, announcement_id = self._announcement(request)
        if refused is not None:
            return refused
        desk, action = self.parts.announcements, request.match_info["action"]
        try:
            if action == "send":
                result: Any = await desk.send(announcement_id)
            elif action == "discard":
                await desk.discard(announcement_id)
                result = {"discarded": announcement_id}
            else:
                try:
                    body = await read_json(request)
                except WebApiError as error:
                    return json_error(error.status, error.message)
                summary = body.get("summary") if isinstance(body, dict) else None
                if not isinstance(summary, str):
                    return json_error(400, 'send {"summary": "..."}: the new summary as text')
                try:
                    result = {"announcement": (await desk.edit(announcement_id, summary)).as_json()}
                except ValueError as error:
                    if "not waiting" not in str(error):
                        return json_error(400, str(error))
                    raise
        except ValueError as error:
            return json_error(409, str(error))
        return web.json_response(result, dumps=lambda d: json.dumps(d, ensure_ascii=False))

    async def feed(self, request: web.Request) -> web.StreamResponse:
        """GET /feed.xml[?topik=…]: the sent announcements as Atom (public: what was announced to students)."""
        from bot.feed import FeedError, atom_feed

        if self.parts.announcements is None:
            return web.Response(status=404, text="Mohon maaf, pengumuman belum tersedia.", charset="utf-8")
        topic = request.query.get("topik", "")
        items = await self._blocking(self.parts.announcements.store.announcements, status="sent", limit=50)
        self_url = str(request.url.with_query({"topik": topic} if topic.strip() else {}))
        try:
            body = atom_feed(items, site_url=self.parts.site_url or str(request.url.origin()), self_url=self_url,
                             topic=topic)
        except FeedError as error:
            return web.Response(status=400, text=str(error), charset="utf-8")
        return web.Response(text=body, content_type="application/atom+xml", charset="utf-8",
                            headers={"Cache-Control": "public, max-age=300"})

    # --- health and metrics ----------------------------------------------------------------------------------
    async def healthz(self, request: web.Request) -> web.Response:
        """Liveness: 200 whenever this process answers. The checks (index, Redis) are listed for people, but a
        restart fixes neither, and the bot serves without Redis, so they never turn liveness red: /readyz does."""
        checks: dict[str, bool] = {"process": True}
        for name, check in self.parts.health_checks.items():
            try:
                checks[name] = bool(await asyncio.wait_for(resolve(check()), HEALTH_CHECK_SECONDS))
            except Exception:  # boundary: /healthz lists a failing check as False; liveness never fails on a check
                checks[name] = False
        return web.json_response({"status": "ok", "checks": checks})

    async def readyz(self, request: web.Request) -> web.Response:
        """Readiness: 200 only with an index loaded and an LLM that answered its warm-up; each component listed."""
        if self.parts.readiness is None:
            return web.json_response({"status": "not ready", "components": {}}, status=503)
        ready, body = await self.parts.readiness.report()
        return web.json_response(body, status=200 if ready else 503,
                                 dumps=lambda d: json.dumps(d, ensure_ascii=False, default=str))

    async def metrics(self, request: web.Request) -> web.Response:
        if self.parts.metrics is None:
            return json_error(404, "metrics are not enabled")
        if self.parts.before_metrics is not None:
            try:
                self.parts.before_metrics()
            except Exception:  # boundary: a metrics scrape still answers with the gauges as they were
                logger.warning("refreshing gauges before a metrics scrape failed", exc_info=True)
        body, content_type = self.parts.metrics.render()
        response = web.Response(body=body)
        response.headers["Content-Type"] = content_type
        return response


def build_server(parts: ServerParts) -> web.Application:
    """The aiohttp Application with every route (run it with ``web.AppRunner``)."""
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[_errors])
    routes = _Routes(parts)
    for method, path, handler in parts.channel_routes:
        app.router.add_route(method, path, handler)
    app.router.add_get("/admin", routes.admin_page)
    app.router.add_get("/admin/login", routes.admin_login_form)
    app.router.add_post("/admin/login", routes.admin_login)
    app.router.add_post("/admin/logout", routes.admin_logout)
    app.router.add_get("/admin/api/status", routes.admin_status)
    app.router.add_post("/admin/api/reindex", routes.admin_reindex)
    app.router.add_get("/admin/runs/{run_id}", routes.admin_run_page)
    app.router.add_get("/admin/api/overview", routes.admin_overview)
    app.router.add_get("/admin/api/live", routes.admin_live)
    app.router.add_get("/admin/api/runs/{run_id}", routes.admin_run)
    app.router.add_get("/admin/api/insights", routes.admin_insights)
    app.router.add_post("/admin/api/answers", routes.admin_answer_save)
    app.router.add_post("/admin/api/answers/{answer_id}/delete", routes.admin_answer_delete)
    app.router.add_get("/admin/api/announcements", routes.admin_announcements)
    app.router.add_post("/admin/api/announcements/{announcement_id}/{action:send|summary|discard}",
                        routes.admin_announcement_action)
    app.router.add_get("/feed.xml", routes.feed)
    app.router.add_get("/healthz", routes.healthz)
    app.router.add_get("/readyz", routes.readyz)
    app.router.add_get("/metrics", routes.metrics)
    app.router.add_static("/static/", WEB_DIR, show_index=False)
    return app
