"""Serve an aiohttp Application on 127.0.0.1 at an ephemeral port: the shared base of the tests' stand-ins."""

from __future__ import annotations

from aiohttp import web


class LoopbackApp:
    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def serve(self, app: web.Application, *, shutdown_timeout: float = 1.0) -> int:
        """Start serving ``app``; returns the port."""
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]
        return self.port

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
