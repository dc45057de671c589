"""/readyz (readiness) vs /healthz (liveness), with the real index and the real default LLM.

503 while no index is loaded, 503 while the LLM cannot load, 200 once both are there and the LLM answered its
one-token warm-up; the body lists each component."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from bot import wiring
from bot.app import ServeApp
from bot.cmd_retrieval import load_jsonl_corpus
from bot.settings import Settings

pytestmark = pytest.mark.integration

DOCS = [
    {"id": "ketua", "url": "https://prodi.example.ac.id/profil/ketua", "title": "Ketua Program Studi",
     "text": "Ketua Program Studi Teknik Informatika adalah Dr. Supriyono, M.Kom. Beliau menjabat sejak 2021."},
    {"id": "basis-data", "url": "https://prodi.example.ac.id/kurikulum/basis-data", "title": "Basis Data",
     "text": "Mata kuliah Basis Data berbobot 3 SKS dan diambil pada semester 3."},
]


def _settings(data_dir: Path, **extra: object) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, http_port=0, llm_threads=1,
                    site_seeds=["https://prodi.example.invalid/"], **extra)  # never crawled: no scheduler


def _build_index(settings: Settings, tmp_path: Path) -> str:
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS) + "\n", encoding="utf-8")
    documents, chunks = load_jsonl_corpus(path, settings)
    return wiring.build_index_manager(settings).build(chunks, documents).version


async def _probe(app: ServeApp) -> tuple[int, dict, int]:
    async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as session:
        async with session.get("/readyz") as r:
            ready_status, body = r.status, await r.json()
        async with session.get("/healthz") as r:
            live_status = r.status
    return ready_status, body, live_status


async def test_readyz_is_503_without_an_index_even_with_a_warm_llm(data_dir) -> None:
    app = ServeApp(_settings(data_dir), start_scheduler=False)
    await app.start()
    try:
        await app.readiness.wait()
        status, body, _ = await _probe(app)
    finally:
        await app.stop()
    assert status == 503 and body["status"] == "not ready"
    components = body["components"]
    assert components["index"]["ok"] is False and "reindex" in components["index"]["detail"]
    assert components["llm"]["ok"] is True and components["llm"]["state"] == "ready"
    assert components["redis"] == "not configured" and components["last_reindex"] is None


async def test_readyz_is_503_while_the_llm_cannot_load_and_healthz_stays_live(data_dir, tmp_path) -> None:
    settings = _settings(data_dir, llm_model_path=tmp_path / "missing.gguf")
    _build_index(settings, tmp_path)
    app = ServeApp(settings, start_scheduler=False)
    await app.start()
    try:
        await app.readiness.wait()
        status, body, live = await _probe(app)
    finally:
        await app.stop()
    assert status == 503 and live == 200  # alive, but not ready for students
    assert body["components"]["index"]["ok"] is True
    llm = body["components"]["llm"]
    assert llm["ok"] is False and llm["state"] == "failed" and "missing.gguf" in llm["detail"]


async def test_readyz_is_200_after_the_warm_up_and_lists_every_component(data_dir, tmp_path, redis_url) -> None:
    settings = _settings(data_dir, redis_url=redis_url)
    version = _build_index(settings, tmp_path)
    app = ServeApp(settings, start_scheduler=False)
    await app.start()
    try:
        await app.readiness.wait()
        status, body, _ = await _probe(app)
    finally:
        await app.stop()
    assert status == 200 and body["status"] == "ready", body
    components = body["components"]
    assert components["index"] == {"ok": True, "version": version, "chunks": components["index"]["chunks"]}
    assert components["index"]["chunks"] >= 2
    assert components["llm"]["state"] == "ready" and "warm-up" in components["llm"]["detail"]
    assert components["redis"] == "ok"
    assert components["last_reindex"] is None  # `index --from-jsonl` is not a reindex run
