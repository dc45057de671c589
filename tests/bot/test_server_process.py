"""``python -m bot serve`` as a real process: configured from the environment, both webhooks replayed, clean stop.

Uses the real default model and pipeline (integration tier); with no index built yet the bot answers by abstaining
politely, which is what a fresh installation does.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.auxil.fake_apis import FakeApis
from tests.auxil.platform_payloads import WHATSAPP_PAYLOADS, telegram_updates, wa_text

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_serve_process_handles_every_payload_and_stops_cleanly(redis_url, data_dir):
    apis = await FakeApis().start()
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WHATSAPP_"))},
        "DATA_DIR": str(data_dir),
        "HTTP_PORT": str(port),
        "REDIS_URL": redis_url,
        "TELEGRAM_TOKEN": "123:proc",
        "TELEGRAM_WEBHOOK_URL": "https://bot.example.invalid/telegram/webhook",
        "TELEGRAM_SECRET_TOKEN": "proc-secret",
        "TELEGRAM_API_BASE_URL": apis.telegram_base,
        "WHATSAPP_TOKEN": "t",
        "WHATSAPP_PHONE_NUMBER_ID": "PNID",
        "WHATSAPP_VERIFY_TOKEN": "v",
        "WHATSAPP_APP_SECRET": "app-secret",
        "WHATSAPP_GRAPH_BASE_URL": apis.graph_base,
        "USER_RATE_LIMIT_PER_MINUTE": "1000",
        "LLM_THREADS": "1",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", "--no-scheduler", "--json", cwd=str(ROOT), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout=120)
        assert json.loads(line) == {"serving": f"http://127.0.0.1:{port}", "telegram": "webhook", "whatsapp": True}
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession(base_url=base) as s:
            statuses = []
            for update in telegram_updates():
                async with s.post("/telegram/webhook", json=update,
                                  headers={"X-Telegram-Bot-Api-Secret-Token": "proc-secret"}) as r:
                    statuses.append(r.status)
            for payload in [*WHATSAPP_PAYLOADS, wa_text("Siapa ketua program studi?", msg_id="wamid.P")]:
                body = json.dumps(payload).encode()
                sig = "sha256=" + hmac.new(b"app-secret", body, hashlib.sha256).hexdigest()
                async with s.post("/whatsapp/webhook", data=body, headers={"X-Hub-Signature-256": sig}) as r:
                    statuses.append(r.status)
            assert all(200 <= st < 300 or 400 <= st < 500 for st in statuses), statuses
            # the question from 6281234 gets an answer (a polite abstention: no index was built yet)
            await apis.wait_for(lambda: any(c.params.get("to") == "6281234" for c in apis.graph("text")), within=60)
            answer = next(c for c in apis.graph("text") if c.params.get("to") == "6281234").params["text"]["body"]
            assert answer.startswith(("Maaf", "Mohon maaf"))
            async with s.get("/healthz") as r:
                assert (await r.json())["checks"]["process"] is True
        assert proc.returncode is None  # still running
        assert apis.telegram("setWebhook")[0].params["secret_token"] == "proc-secret"
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        rc = await asyncio.wait_for(proc.wait(), timeout=60)
        err = (await proc.stderr.read()).decode(errors="replace")
        await apis.close()
    assert rc == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
