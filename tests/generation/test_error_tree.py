"""One error tree (issue 30, item 4): every error the project raises on purpose is a ``ProdiBotError``, each layer
has its own base, and lower-layer errors are mapped where they arise, so the pipeline catches its own types.

A backend that raises ``KeyError`` or ``ValueError``, or an OpenAI-compatible server whose 200 reply is malformed,
must give the designed extractive fallback (not the generic error), and the log must not hold the reply body.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bot.feed import FeedError
from bot.settings import SettingsError
from generation.errors import GenerationError
from generation.llama_backend import LlamaConfig, LlamaGenerator, ModelError
from generation.openai_backend import OpenAIBackendError, OpenAIConfig, OpenAIGenerator
from generation.pipeline import StopReason
from generation.pool import LLMPool, LLMTimeout, PoolClosed
from generation.reader.reader import ReaderError
from handlers.errors import ChannelError
from handlers.web import WebApiError
from handlers.whatsapp import GraphSendError
from retrieval.errors import RetrievalError
from retrieval.index import IndexUnavailable
from storage.errors import ProdiBotError, StoreError, StoreUnavailable
from sync_jobs.errors import CrawlError
from sync_jobs.fetch import BlockedAddress

QUESTION = "Berapa bobot SKS skripsi?"  # answered through the LLM path; its extractive fallback says "6 SKS"
API_KEY = "sk-test-0123456789-never-logged"
BODY_MARKER = "ISI-BALASAN-SERVER"  # in every malformed reply body: must reach neither the log nor the trace


# --- the hierarchy ----------------------------------------------------------------------------------------------

LAYER_BASES = [
    (StoreError, "storage."),
    (RetrievalError, "retrieval."),
    (GenerationError, "generation."),
    (CrawlError, "sync_jobs."),
    (ChannelError, "handlers."),
]

# (class, its layer's base, the built-in base it had before the tree, an instance)
MEMBERS = [
    (StoreUnavailable, StoreError, Exception, StoreUnavailable("db down")),
    (IndexUnavailable, RetrievalError, RuntimeError, IndexUnavailable("no index")),
    (LLMTimeout, GenerationError, TimeoutError, LLMTimeout("slow")),
    (PoolClosed, GenerationError, RuntimeError, PoolClosed("closed")),
    (OpenAIBackendError, GenerationError, RuntimeError, OpenAIBackendError("bad reply")),
    (ModelError, GenerationError, RuntimeError, ModelError("no model")),
    (ReaderError, GenerationError, RuntimeError, ReaderError("no weights")),
    (BlockedAddress, CrawlError, OSError, BlockedAddress("private address")),
    (SettingsError, ProdiBotError, Exception, SettingsError("LLM_WORKERS must be at least 1")),
    (FeedError, ProdiBotError, ValueError, FeedError("topik tidak dikenal")),
    (WebApiError, ChannelError, Exception, WebApiError(400, "bad request")),
    (GraphSendError, ChannelError, Exception, GraphSendError("refused")),
]


@pytest.mark.parametrize(("base", "package"), LAYER_BASES, ids=lambda v: getattr(v, "__name__", v))
def test_each_layer_has_one_base_in_its_own_package(base, package):
    assert issubclass(base, ProdiBotError)
    assert base.__module__.startswith(package)


@pytest.mark.parametrize(("cls", "base", "builtin", "instance"), MEMBERS, ids=lambda v: getattr(v, "__name__", None))
def test_every_named_error_is_a_prodibot_error_and_keeps_its_old_base(cls, base, builtin, instance):
    assert issubclass(cls, base) and issubclass(cls, ProdiBotError)
    assert isinstance(instance, ProdiBotError) and isinstance(instance, base)
    assert isinstance(instance, builtin)  # existing `except RuntimeError` (and the like) callers still work


def test_the_root_lives_in_the_lowest_layer():
    assert ProdiBotError.__module__ == "storage.errors"
    assert ProdiBotError.__bases__ == (Exception,)
    assert "Indonesian" in (ProdiBotError.__doc__ or "")


# --- the pool maps a backend's unexpected errors ----------------------------------------------------------------


class _Raising:
    prompt_format = "completion"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def generate(self, prompt, *, max_tokens, stop=()):
        raise self.error


@pytest.mark.parametrize("error", [KeyError("choices"), ValueError("bad logits"), IndexError("list index")])
async def test_the_pool_wraps_an_unexpected_backend_error_into_generation_error(error):
    pool = LLMPool(lambda: _Raising(error), workers=1, timeout_s=10)
    try:
        with pytest.raises(GenerationError) as caught:
            await pool.submit("q", max_tokens=1)
        assert caught.value.__cause__ is error
        assert type(error).__name__ in str(caught.value)
    finally:
        pool.close()


async def test_the_pool_passes_the_projects_own_errors_through_unchanged():
    error = ModelError("the model was closed")
    pool = LLMPool(lambda: _Raising(error), workers=1, timeout_s=10)
    try:
        with pytest.raises(ModelError) as caught:
            await pool.submit("q", max_tokens=1)
        assert caught.value is error
    finally:
        pool.close()


async def test_cancellation_from_the_backend_is_not_wrapped():
    pool = LLMPool(lambda: _Raising(asyncio.CancelledError()), workers=1, timeout_s=10)
    try:
        with pytest.raises(asyncio.CancelledError):
            await pool.submit("q", max_tokens=1)
    finally:
        pool.close()


# --- the llama.cpp backend (the real bundled model) -------------------------------------------------------------


def _assert_extractive_fallback(answer, injected: str) -> None:
    assert answer.stop_reason == StopReason.FALLBACK_EXTRACTIVE, answer.stop_reason
    assert not answer.abstained and "6 SKS" in answer.answer
    assert answer.sources, "the fallback cites its source"
    errors = [s["error"] for s in answer.trace.steps if s["step"] == "generate" and "error" in s]
    assert errors and injected in errors[0]


@pytest.mark.integration
@pytest.mark.parametrize("error", [KeyError("logits"), ValueError("bad token")], ids=["KeyError", "ValueError"])
async def test_llama_backend_error_gives_the_extractive_fallback(make_pipeline, default_model_path, error):
    generator = LlamaGenerator(LlamaConfig(model_path=default_model_path, models_dir=default_model_path.parent))
    calls = []

    def failing_generate(*args, **kwargs):  # the real llama_cpp call, failing as a broken build might
        calls.append(1)
        raise error

    generator._llm.generate = failing_generate  # instance attribute over llama_cpp.Llama.generate
    answer = await make_pipeline(generator).answer(QUESTION)
    assert calls, "the model was asked"
    _assert_extractive_fallback(answer, type(error).__name__)


# --- the OpenAI-compatible backend (a real HTTP server on loopback) --------------------------------------------


class _Server:
    """Answers every POST with status 200 and ``body``; records the paths and request bodies it saw."""

    def __init__(self) -> None:
        self.body = b"{}"
        self.requests: list[tuple[str, dict]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                server.requests.append((self.path, json.loads(self.rfile.read(length) or b"{}")))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(server.body)))
                self.end_headers()
                self.wfile.write(server.body)

            def log_message(self, *args) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture(scope="module")
def openai_server() -> Iterator[_Server]:
    server = _Server()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=10)


_USER_TEXT = "Berapa bobot SKS skripsi? " * 20  # a server that echoes the prompt would leak user text this long
MALFORMED = [
    ("completion", b"{}"),
    ("completion", f"<html>502 {BODY_MARKER} {_USER_TEXT}</html>".encode()),  # not JSON
    ("completion", json.dumps({"choices": [], "note": BODY_MARKER}).encode()),
    ("completion", json.dumps({"choices": [{"token": BODY_MARKER}]}).encode()),  # no text
    ("chat", b"{}"),
    ("chat", f"not json {BODY_MARKER} {_USER_TEXT}".encode()),
    ("chat", json.dumps({"choices": [{"finish_reason": "stop", "x": BODY_MARKER}]}).encode()),  # no message
    ("chat", json.dumps({"choices": [{"message": {"role": "assistant", "x": BODY_MARKER}}]}).encode()),  # no content
    ("chat", json.dumps([BODY_MARKER]).encode()),  # JSON, but not an object
]


def _remote(server: _Server, fmt: str) -> OpenAIGenerator:
    return OpenAIGenerator(OpenAIConfig(endpoint=server.endpoint, api_key=API_KEY, prompt_format=fmt, timeout_s=10))


@pytest.mark.parametrize(("fmt", "body"), MALFORMED)
def test_a_malformed_200_reply_raises_openai_backend_error(openai_server, fmt, body):
    openai_server.body = body
    with pytest.raises(OpenAIBackendError) as caught:
        _remote(openai_server, fmt).generate("Berapa bobot SKS skripsi?", max_tokens=8)
    message = str(caught.value)
    assert caught.value.__cause__ is not None
    assert isinstance(caught.value.__cause__, (KeyError, IndexError, TypeError, ValueError, AttributeError))
    assert "200" in message and openai_server.endpoint in message
    assert BODY_MARKER not in message and API_KEY not in message and "skripsi" not in message


@pytest.mark.parametrize(("fmt", "body"), MALFORMED)
async def test_a_malformed_200_reply_gives_the_extractive_fallback(make_pipeline, openai_server, caplog, fmt, body):
    openai_server.body = body
    openai_server.requests.clear()
    caplog.set_level(logging.DEBUG)
    answer = await make_pipeline(_remote(openai_server, fmt)).answer(QUESTION)
    assert openai_server.requests, "the server was asked"
    assert openai_server.requests[0][0] == ("/v1/chat/completions" if fmt == "chat" else "/v1/completions")
    _assert_extractive_fallback(answer, "OpenAIBackendError")
    logged = caplog.text + json.dumps(answer.as_json(), ensure_ascii=False)
    assert BODY_MARKER not in logged and _USER_TEXT.strip() not in logged
    assert API_KEY not in logged


@pytest.mark.parametrize("error", [KeyError("choices"), ValueError("bad float")], ids=["KeyError", "ValueError"])
async def test_openai_backend_error_gives_the_extractive_fallback(make_pipeline, openai_server, error):
    generator = _remote(openai_server, "completion")
    calls = []

    def failing_post(path, body):  # the backend's HTTP call, failing the way a surprising server library might
        calls.append(path)
        raise error

    generator._post = failing_post  # type: ignore[method-assign]
    answer = await make_pipeline(generator).answer(QUESTION)
    assert calls == ["/completions"]
    _assert_extractive_fallback(answer, type(error).__name__)
