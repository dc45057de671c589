"""Composition root: settings, logging, CLI, the HTTP server, channels, scheduler, startup and shutdown."""

__all__: list[str] = []
