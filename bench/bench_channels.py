"""Channel overhead: how fast a webhook is acknowledged and how long the channel layer adds around an answer.

The answerer is the small word-overlap answerer from the test stand-ins (about a millisecond), so the numbers show
the channel layer itself: HTTP, signature check, JSON parsing, dedup/rate-limit/history in Redis or memory, PTB's
update processing, and the loopback Bot API / Graph API stand-in. Real answers add the pipeline's latency (see the
answer section). Acknowledging a WhatsApp delivery must not wait for the answer: compare "ack" with "reply".
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
APP_SECRET = "bench-secret"
TG_SECRET = "bench-tg"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _row(name: str, values_ms: list[float]) -> tuple[str, float, float, int]:
    return name, statistics.median(values_ms), _pct(values_ms, 0.95), len(values_ms)


async def _redis_url() -> str | None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/14", socket_timeout=1, socket_connect_timeout=1)
    try:
        await client.ping()
        await client.flushdb()
        return "redis://127.0.0.1:6379/14"
    except Exception:
        return None
    finally:
        await client.aclose()


async def _measure(n: int, redis_url: str | None) -> list[tuple[str, float, float, int]]:
    from bot.app import ServeApp
    from bot.settings import Settings
    from tests.auxil.answerer import CorpusAnswerer
    from tests.auxil.fake_apis import FakeApis
    from tests.auxil.platform_payloads import wa_text
    from tests.auxil.telegram_offline import text_update

    apis = await FakeApis().start()
    tmp = tempfile.TemporaryDirectory()
    settings = Settings(
        _env_file=None, data_dir=Path(tmp.name), http_port=0, redis_url=redis_url, user_rate_limit_per_minute=10_000,
        telegram_token="1:bench", telegram_webhook_url="https://x.invalid/telegram/webhook",
        telegram_secret_token=TG_SECRET, telegram_api_base_url=apis.telegram_base,
        whatsapp_token="t", whatsapp_phone_number_id="PNID", whatsapp_verify_token="v",
        whatsapp_app_secret=APP_SECRET, whatsapp_graph_base_url=apis.graph_base,
    )
    app = ServeApp(settings, answerer=CorpusAnswerer(), status_provider=dict, reindex_trigger=lambda who: None,
                   index_ready=lambda: True, start_scheduler=False)
    await app.start()
    rows = []
    try:
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as s:
            ack, reply = [], []
            for i in range(n):
                body = json.dumps(wa_text("Siapa ketua program studi?", msg_id=f"wamid.b{i}", sender=f"62{i}")).encode()
                sig = "sha256=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
                before = len(apis.graph("interactive"))
                t0 = time.perf_counter()
                async with s.post("/whatsapp/webhook", data=body, headers={"X-Hub-Signature-256": sig}) as r:
                    await r.read()
                ack.append((time.perf_counter() - t0) * 1000)
                await apis.wait_for(lambda before=before: len(apis.graph("interactive")) > before)
                reply.append((time.perf_counter() - t0) * 1000)
            rows += [_row("WhatsApp webhook: ack (200)", ack), _row("WhatsApp webhook: reply sent", reply)]

            ack, reply = [], []
            for i in range(n):
                update = text_update("Siapa ketua program studi?", user_id=10_000 + i)
                before = len(apis.telegram("sendMessage"))
                t0 = time.perf_counter()
                async with s.post("/telegram/webhook", json=update,
                                  headers={"X-Telegram-Bot-Api-Secret-Token": TG_SECRET}) as r:
                    await r.read()
                ack.append((time.perf_counter() - t0) * 1000)
                await apis.wait_for(lambda before=before: len(apis.telegram("sendMessage")) > before)
                reply.append((time.perf_counter() - t0) * 1000)
            rows += [_row("Telegram webhook: ack (200)", ack), _row("Telegram webhook: reply sent", reply)]

            web = []
            for i in range(n):
                t0 = time.perf_counter()
                async with s.post("/api/chat", json={"message": "Siapa ketua program studi?",
                                                     "session_id": f"b{i % 5}"}) as r:
                    await r.read()
                web.append((time.perf_counter() - t0) * 1000)
            rows.append(_row("Web /api/chat round trip", web))

        store = app.stores.conversations
        from storage.models import Message

        ops = []
        for i in range(n * 4):
            t0 = time.perf_counter()
            await store.append(f"bench:{i % 10}", Message("user", "pertanyaan contoh", ts=1.0))
            await store.history(f"bench:{i % 10}")
            ops.append((time.perf_counter() - t0) * 1000)
        rows.append(_row("Conversation store: append + read window", ops))
    finally:
        await app.stop()
        await apis.close()
        tmp.cleanup()
    return rows


def _plot(results: dict[str, list[tuple[str, float, float, int]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r[0] for r in next(iter(results.values()))]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(results)
    for j, (label, rows) in enumerate(results.items()):
        ax.barh([i + j * width for i in range(len(names))], [r[1] for r in rows], height=width, label=label)
    ax.set_yticks([i + width * (len(results) - 1) / 2 for i in range(len(names))], names, fontsize=8)
    ax.set_xlabel("median latency (ms)")
    ax.set_title("Channel layer overhead (answerer ~1 ms)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(quick: bool = False) -> str:
    n = 15 if quick else 60

    async def main() -> dict[str, list[tuple[str, float, float, int]]]:
        out = {"memory stores": await _measure(n, None)}
        url = await _redis_url()
        if url:
            out["Redis stores"] = await _measure(n, url)
        return out

    results = asyncio.run(main())
    img = ROOT / "docs" / "img" / "channels_latency.png"
    img.parent.mkdir(parents=True, exist_ok=True)
    _plot(results, img)
    lines = [
        "## Channels: webhook acknowledgement and channel overhead\n",
        (__doc__ or "").strip() + "\n",
        "| path | stores | median ms | p95 ms | n |",
        "|---|---|---:|---:|---:|",
    ]
    for label, rows in results.items():
        for name, p50, p95, count in rows:
            lines.append(f"| {name} | {label} | {p50:.3f} | {p95:.3f} | {count} |")
    if "Redis stores" in results:
        mem = dict((r[0], r[1]) for r in results["memory stores"])
        red = dict((r[0], r[1]) for r in results["Redis stores"])
        key = "Conversation store: append + read window"
        lines.append(f"\nRedis vs memory for the conversation window: {red[key] / max(mem[key], 1e-6):.1f}× the time "
                     "(two round trips to a local Redis per message).")
    lines.append("\n![channel latency](img/channels_latency.png)\n")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run(quick=True))
