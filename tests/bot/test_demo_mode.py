"""The bundled sample site is only ever a demo: `serve`, `crawl` and `reindex` refuse to start without SITE_SEEDS
(one message naming the variable and the demo), the demo is served by the process itself on a port it chose, its
pages are stored under a fixed fake public origin, and a foreign HTTP server on port 8000 is never crawled."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import aiohttp
import pytest

from bot.wiring import DEMO_ORIGIN

pytestmark = pytest.mark.slow  # crawls the sample site and runs CLI subprocesses

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_", "ADMIN_")) and k != "DEMO"}
    env.update({"DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT), **extra})
    return env


def _bot(*args: str, env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


class _Foreign(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).hits.append(self.path)
        body = b"<html><body><h1>Some other dev server</h1><p>Rahasia internal: jangan diindeks.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def foreign_8000() -> Iterator[list[str]]:
    """Another HTTP service on 127.0.0.1:8000 (a common dev-server port); yields the paths it was asked for."""
    try:
        server = ThreadingHTTPServer(("127.0.0.1", 8000), _Foreign)
    except OSError:
        pytest.skip("port 8000 is taken by something else; this test needs to own it")
    _Foreign.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield _Foreign.hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("command", [["serve"], ["serve", "--no-scheduler"], ["crawl"], ["reindex"]])
def test_without_site_seeds_serve_crawl_and_reindex_refuse_with_one_clear_message(command, tmp_path) -> None:
    result = _bot(*command, env=_env(tmp_path), cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "SITE_SEEDS is not set" in lines[0] and "DEMO=true" in lines[0] and "serve --demo" in lines[0]
    assert not (tmp_path / "data" / "index").exists()  # nothing was crawled or indexed


def test_the_demo_crawl_stores_fake_public_urls_and_never_touches_port_8000(foreign_8000, tmp_path) -> None:
    env = _env(tmp_path, DEMO="true")
    first = _bot("crawl", "--json", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["pages"]["fetched"] > 50
    docs = [json.loads(line) for line in _bot("docs", "--json", env=env, cwd=tmp_path).stdout.splitlines()]
    assert len(docs) > 50
    assert all(url.startswith(DEMO_ORIGIN + "/") for doc in docs for url in [doc["url"], *doc["urls"]])
    # another run serves the site on another free port: the same URLs, nothing changed
    again = _bot("crawl", "--json", env=env, cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout)["pages"]["changed"] == 0
    assert foreign_8000 == []  # the service that happened to listen on 8000 was never asked for anything
    # the real site never goes into (or is served from) the demo's DATA_DIR
    for command in (["crawl"], ["reindex"], ["serve"]):
        refused = _bot(*command, env={**env, "DEMO": "false", "SITE_SEEDS": "https://prodi.example.invalid/"},
                       cwd=tmp_path, timeout=120)
        assert refused.returncode == 2 and "holds the demo's pages" in refused.stderr, refused.stderr


@pytest.mark.integration
async def test_serve_demo_builds_its_index_from_the_bundled_site_only(foreign_8000, tmp_path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = _env(tmp_path, HTTP_PORT=str(port), LLM_THREADS="1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", "--demo", "--json", cwd=str(tmp_path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        # a hang guard, not a speed goal: on a loaded 2-core machine the model load alone can take a minute
        line = await asyncio.wait_for(proc.stdout.readline(), timeout=300)
        assert json.loads(line)["serving"] == f"http://127.0.0.1:{port}"
        hits: list[dict] = []
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{port}") as session:
            for _ in range(600):  # the first demo index is built in the background
                async with session.post("/api/retrieve", json={"query": "ketua program studi", "k": 3}) as r:
                    if r.status == 200:
                        hits = (await r.json()).get("hits") or []
                        if hits:
                            break
                await asyncio.sleep(1)
        assert hits, "the demo index was not built"
        assert all(hit["url"].startswith(DEMO_ORIGIN + "/") for hit in hits)
        assert foreign_8000 == []
    finally:
        if proc.returncode is None:
            proc.terminate()
        # communicate() drains and closes both pipes, so a failure here leaves no open transport behind to turn a
        # later test's teardown into an error
        await asyncio.wait_for(proc.communicate(), timeout=60)
