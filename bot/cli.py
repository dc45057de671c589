"""`python -m bot <command>`: the command-line contract (README.md, "Command line"; docs/architecture.md).

Every command takes ``--json``. The parser lists every command from the start; each command's implementation
lives in one ``bot/cmd_*.py`` module and is imported lazily, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from bot.settings import Settings, SettingsError, load_settings

__all__ = ["build_parser", "main", "too_long"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


def too_long(texts: Sequence[str], settings: Settings, what: str = "the question") -> str | None:
    """The error for the first text longer than ``MAX_QUESTION_CHARS`` (the cap every channel and the web API apply
    before the embedder or the LLM sees a text), or None when all fit."""
    limit = settings.channels.max_question_chars
    for text in texts:
        if len(text) > limit:
            return (f"{what} is {len(text)} characters long; at most {limit} are accepted (MAX_QUESTION_CHARS), "
                    f"as on every channel: shorten it")
    return None


# command name -> "module:function". The function takes (args, settings) and returns an exit code.
COMMANDS: dict[str, str] = {
    "chat": "bot.cmd_answer:cmd_chat",
    "serve": "bot.cmd_serve:cmd_serve",
    "crawl": "bot.cmd_ingest:cmd_crawl",
    "index": "bot.cmd_retrieval:cmd_index",
    "reindex": "bot.cmd_ops:cmd_reindex",
    "search": "bot.cmd_retrieval:cmd_search",
    "ask": "bot.cmd_answer:cmd_ask",
    "eval": "bot.cmd_eval:cmd_eval",
    "calibrate": "bot.cmd_answer:cmd_calibrate",
    "sample-site": "bot.cmd_site:cmd_sample_site",
    "docs": "bot.cmd_ingest:cmd_docs",
    "status": "bot.cmd_ops:cmd_status",
    "runs": "bot.cmd_runs:cmd_runs",
    "insights": "bot.cmd_insights:cmd_insights",
    "migrate-store": "bot.cmd_store:cmd_migrate_store",
    "announcements": "bot.cmd_announcements:cmd_announcements",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description="prodi-bot: answers students' questions about a study program from its website.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--json", action="store_true", help="machine-readable JSON output")
        return p

    add("chat", "console chat on the current index (works offline, no tokens, no Redis)")
    p = add("serve", "run every configured channel (Telegram, WhatsApp, web) and the scheduler")
    p.add_argument("--no-scheduler", action="store_true", help="do not start the reindex schedule")
    p.add_argument("--demo", action="store_true",
                   help="without SITE_SEEDS: serve the demo on the bundled sample site (same as DEMO=true)")
    p = add("crawl", "crawl the site into the document store")
    p.add_argument("--seed", action="append", default=[], metavar="URL", help="start URL (repeatable)")
    p.add_argument("--max-pages", type=int, default=None, metavar="N")
    p = add("index", "build or update the search index")
    p.add_argument("--from-jsonl", metavar="FILE", help='documents as JSON lines {"id","url","title","text"}')
    p.add_argument("--full", action="store_true", help="re-embed everything instead of only changed chunks")
    p = add("reindex", "crawl, index, validate and swap (what the schedule runs)")
    p.add_argument("--seed", action="append", default=[], metavar="URL")
    p.add_argument("--max-pages", type=int, default=None, metavar="N")
    p = add("search", "search the index")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--mode", choices=["hybrid", "dense", "bm25"], default="hybrid")
    p = add("ask", "answer one question")
    p.add_argument("question")
    p = add("eval", "evaluate retrieval, answers or consistency")
    p.add_argument("what", choices=["retrieval", "answers", "consistency"])
    p.add_argument("--dataset", metavar="FILE")
    p.add_argument("--mode", choices=["hybrid", "dense", "bm25"], default="hybrid")
    p.add_argument("--compare", action="store_true", help="retrieval: hybrid, dense and bm25 side by side")
    p.add_argument("--dump", metavar="FILE", help="write one JSON line per item")
    p.add_argument("--query", help="consistency: the query to repeat")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--markdown", metavar="FILE", help="also write the metrics as a Markdown table")
    p = add("calibrate", "refit the abstention model on this site's own labelled questions")
    p.add_argument("--dataset", metavar="FILE", required=True,
                   help="JSON lines {query, answers, answerable[, conversation]} (tests/data/eval/README.md)")
    p.add_argument("--target-refusal", type=float, default=0.8, metavar="R",
                   help="refuse at least this share of the unanswerable questions (default 0.8)")
    p.add_argument("--out", metavar="FILE", help="where to write the model (default DATA_DIR/calibration/abstention.json)")
    p.add_argument("--dry-run", action="store_true", help="report the before/after figures without saving")
    p = add("sample-site", "serve the bundled sample prodi website on loopback")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--root", metavar="DIR", help="serve a copy of the site from DIR instead of the bundled one")
    p = add("docs", "dump stored documents (or chunks) as JSON lines")
    p.add_argument("--chunks", action="store_true")
    add("status", "index version, counts and recent job runs")
    p = add("runs", "recent reindex runs, or one run's stages, valves, failed pages and changes (runs show RUN_ID)")
    p.add_argument("action", nargs="?", choices=["show"], help="show one run")
    p.add_argument("run_id", nargs="?", metavar="RUN_ID")
    p.add_argument("--last", type=int, default=10, metavar="N", help="how many runs to list (default 10)")
    p = add("insights", "the questions the bot could not answer (or that got 👎), grouped, for the prodi's admins")
    p.add_argument("--since", default="7d", metavar="PERIOD", help="how far back: 24h, 7d, 4w (default 7d)")
    p.add_argument("--digest", action="store_true", help="print the weekly digest admins get on Telegram")
    p = add("migrate-store", "copy the SQLite stores of DATA_DIR into PostgreSQL and compare the row counts")
    p.add_argument("--to", metavar="URL", help="postgresql://user:password@host:5432/db[?schema=name] "
                                              "(default DATABASE_URL)")
    p = add("announcements", "recent announcements found by the reindex, with their delivery counts")
    p.add_argument("--last", type=int, default=20, metavar="N", help="how many to list (default 20)")
    return parser


def _command(command: str) -> Callable[[argparse.Namespace, Settings], int]:
    module_name, func_name = COMMANDS[command].split(":")
    return getattr(importlib.import_module(module_name), func_name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    try:
        settings = load_settings()
    except SettingsError as error:
        print(str(error), file=sys.stderr)
        return EXIT_USAGE
    from bot.logging_setup import configure_logging

    configure_logging(settings, quiet=bool(getattr(args, "json", False)), command=args.command)
    try:
        return int(_command(args.command)(args, settings) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `python -m bot docs --json | head`: the reader left; that is not an error worth a traceback.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
