"""``python -m bot reindex`` and ``python -m bot status``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from bot import wiring
from bot.settings import Settings

__all__ = ["cmd_reindex", "cmd_status"]


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    """Crawl, index, validate and swap once; print the run record. Exit 0 only on SUCCESS."""
    from bot.ops.summary import format_run_summary
    from bot.settings import SettingsError

    try:
        wiring.require_site(settings, list(args.seed or []))
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from bot.progress import console_progress

    progress = console_progress(args.json)
    try:
        run = asyncio.run(wiring.run_reindex_once(
            settings, "cli", seeds=list(args.seed or []) or None, max_pages=args.max_pages, progress=progress,
            notify=wiring.build_admin_notifier(settings)))
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        print(json.dumps(run.as_json(), ensure_ascii=False))
    else:
        print(format_run_summary(run))
        if run.status != "SUCCESS":
            print("See `python -m bot status` for the run history.", file=sys.stderr)
    return 0 if run.status == "SUCCESS" else 1


def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    """The serving index and the recent job runs (newest first)."""
    from sync_jobs.reindex import status_snapshot

    data = status_snapshot(wiring.build_run_store(settings), settings.index_dir)
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
        return 0
    index = data["index"]
    if index.get("version"):
        print(f"index {index['version']}: {index['chunks']} chunks, {index.get('documents', 0)} documents, "
              f"built {index.get('built_at')}, {index.get('size_bytes', 0) / 1e6:.1f} MB")
    else:
        print("no index yet: run `python -m bot reindex`")
    if index.get("error"):
        print(f"index error: {index['error']}")
    for run in data["runs"]:
        print(f"{run['started_at']}  {run['status']:<8} {run['trigger']:<8} pages {run['pages_fetched']} "
              f"(+{run['pages_changed']} changed, {run['pages_failed']} failed)  chunks {run['chunks_total']} "
              f"(embedded {run['chunks_embedded']})  {run['duration_seconds']:.1f}s"
              + (f"  {run['error']}" if run.get("error") else ""))
    return 0
