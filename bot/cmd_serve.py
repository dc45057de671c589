"""``python -m bot serve``: every configured channel, the web chat and the reindex schedule in one process."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal

from bot import channels
from bot.settings import Settings

__all__ = ["cmd_serve"]

logger = logging.getLogger(__name__)


async def _serve(settings: Settings, *, scheduler: bool, as_json: bool) -> None:
    from bot.app import ServeApp

    app = ServeApp(settings, start_scheduler=scheduler)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    await app.start()
    try:
        if as_json:
            running = {c.name: c.state() for c in app.channels}
            print(json.dumps({"serving": f"http://{settings.channels.http_host}:{app.port}",
                              **{kind.name: running.get(kind.name, False) for kind in channels.CHANNELS}}), flush=True)
        else:
            print(f"prodi-bot serving on http://{settings.channels.http_host}:{app.port} (Ctrl+C to stop)", flush=True)
        await stop.wait()
        logger.info("stopping")
    finally:
        await app.stop()


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    """Run until SIGINT/SIGTERM; exit 0 after a clean shutdown. Without SITE_SEEDS only as the demo (``--demo``
    or DEMO=true), which serves and indexes the bundled sample site under its fake public URLs."""
    import sys

    from bot import wiring
    from bot.settings import SettingsError

    if getattr(args, "demo", False):
        settings = settings.model_copy(update={"demo": True})
    try:
        wiring.require_site(settings)
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    try:
        asyncio.run(_serve(settings, scheduler=not args.no_scheduler, as_json=bool(args.json)))
    except OSError as error:
        print(f"error: cannot serve on {settings.channels.http_host}:{settings.channels.http_port}: {error}. "
              "Set HTTP_HOST/HTTP_PORT to a free address.", flush=True)
        return 1
    return 0
