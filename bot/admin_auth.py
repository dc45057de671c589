"""Admin sessions for ``/admin``: a login form instead of a token in the URL.

``ADMIN_TOKEN`` is typed once into the login form (POST body, never a URL: no browser history, no proxy logs). A
correct token gives a session cookie: HttpOnly, SameSite=Strict, Path=/admin, a short Max-Age
(``ADMIN_SESSION_MINUTES``), Secure behind HTTPS. The cookie is signed with a key derived from ADMIN_TOKEN, so every
replica that shares the token accepts it and changing the token logs everybody out. Logging out deletes the cookie
and revokes the session in this process until it would have expired.

Tokens are compared in constant time. A login attempt is reserved (counted as a failure) before its body is read and
released only when the token is right, so slow concurrent bodies cannot race the limit: ``max_failures_per_client``
per client address in ``failure_window_seconds``. A global brake (``max_failures_total`` failures from anywhere)
stops addresses that have failed too, never one that has not, so an attack cannot lock the real admin out. Every
state-changing admin request carries the session's CSRF token (``X-CSRF-Token``, or the ``csrf`` form field).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["AdminAuth", "Attempt", "Session", "COOKIE_NAME"]

COOKIE_NAME = "prodibot_admin"


@dataclass(frozen=True)
class Attempt:
    """A login attempt reserved by :meth:`AdminAuth.begin`: already counted as a failure until it succeeds."""

    client: str
    at: float


@dataclass(frozen=True)
class Session:
    nonce: str
    expires: int
    csrf: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class AdminAuth:
    """Checks login attempts, issues and verifies session cookies and CSRF tokens. No I/O; ``clock`` is
    injectable (seconds since the epoch) so that expiry can be checked without waiting."""

    def __init__(self, token: str, *, session_minutes: float = 30.0, max_failures_per_client: int = 5,
                 max_failures_total: int = 30, failure_window_seconds: float = 900.0,
                 clock: Callable[[], float] = time.time) -> None:
        if not token:
            raise ValueError("AdminAuth needs ADMIN_TOKEN")
        self._digest = hashlib.sha256(token.encode("utf-8")).digest()
        self._key = hashlib.sha256(b"prodi-bot admin session\0" + token.encode("utf-8")).digest()
        self.session_seconds = int(session_minutes * 60)
        self.max_failures_per_client = max_failures_per_client
        self.max_failures_total = max_failures_total
        self.window = failure_window_seconds
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._all_failures: deque[float] = deque()
        self._revoked: dict[str, int] = {}  # nonce -> expiry

    # --- login ---------------------------------------------------------------------------------------------------
    def _prune(self, now: float) -> None:
        while self._all_failures and self._all_failures[0] <= now - self.window:
            self._all_failures.popleft()
        for client in list(self._failures):
            times = self._failures[client]
            while times and times[0] <= now - self.window:
                times.popleft()
            if not times:
                del self._failures[client]

    def retry_after(self, client: str) -> int:
        """Seconds until ``client`` may try again (0: now). The global brake only holds addresses that failed."""
        now = self.clock()
        self._prune(now)
        waits = []
        times = self._failures.get(client)
        if times and len(times) >= self.max_failures_per_client:
            waits.append(times[0] + self.window - now)
        if times and len(self._all_failures) >= self.max_failures_total:
            waits.append(self._all_failures[0] + self.window - now)
        return max(0, int(max(waits) + 0.999)) if waits else 0

    def begin(self, client: str) -> Attempt | None:
        """Reserve one login attempt for ``client`` before its body is read; None while it must wait
        (:meth:`retry_after` says how long). The reservation counts as a failure until :meth:`finish` succeeds."""
        if self.retry_after(client):
            return None
        now = self.clock()
        self._failures.setdefault(client, deque()).append(now)
        self._all_failures.append(now)
        return Attempt(client, now)

    def finish(self, attempt: Attempt, given: str) -> bool:
        """Check the token of a reserved attempt in constant time; a right token gives its reservation back."""
        ok = hmac.compare_digest(hashlib.sha256(given.encode("utf-8", "replace")).digest(), self._digest)
        if ok:
            for times in (self._failures.get(attempt.client), self._all_failures):
                if times is not None and attempt.at in times:
                    times.remove(attempt.at)
        return ok

    def check_token(self, client: str, given: str) -> bool:
        """One whole login attempt (``begin`` + ``finish``); False also while ``client`` must wait."""
        attempt = self.begin(client)
        return attempt is not None and self.finish(attempt, given)

    # --- sessions ------------------------------------------------------------------------------------------------
    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode("ascii"), hashlib.sha256).digest())

    def _csrf_for(self, nonce: str) -> str:
        return hmac.new(self._key, b"csrf:" + nonce.encode("ascii"), hashlib.sha256).hexdigest()[:40]

    def issue(self) -> tuple[str, Session]:
        """A new session: (cookie value, session)."""
        nonce = secrets.token_urlsafe(18)
        expires = int(self.clock()) + self.session_seconds
        payload = f"{expires}.{nonce}"
        return f"{payload}.{self._sign(payload)}", Session(nonce, expires, self._csrf_for(nonce))

    def session(self, cookie: str | None) -> Session | None:
        """The session a cookie value stands for, or None (missing, forged, expired or logged out)."""
        if not cookie or not cookie.isascii() or cookie.count(".") != 2:
            return None
        expires_text, nonce, signature = cookie.split(".")
        payload = f"{expires_text}.{nonce}"
        if not hmac.compare_digest(signature, self._sign(payload)) or not expires_text.isdigit() \
                or len(expires_text) > 12:
            return None
        expires = int(expires_text)
        now = self.clock()
        if expires <= now or nonce in self._revoked:
            return None
        return Session(nonce, expires, self._csrf_for(nonce))

    def csrf_ok(self, session: Session, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode("utf-8", "replace"), session.csrf.encode())

    def revoke(self, session: Session) -> None:
        now = self.clock()
        self._revoked = {n: e for n, e in self._revoked.items() if e > now}
        self._revoked[session.nonce] = session.expires
