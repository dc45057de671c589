"""``python -m bot insights [--since 7d] [--json] [--digest]``: the unanswered-question report on SSH."""

from __future__ import annotations

import argparse
import json
import sys
import time

from bot.settings import Settings

__all__ = ["cmd_insights"]


def cmd_insights(args: argparse.Namespace, settings: Settings) -> int:
    """The clusters of questions the bot refused or that got 👎 in the period, largest first; ``--digest``: the
    weekly digest text admins get on Telegram (printed, not sent)."""
    from bot import wiring
    from bot.insights import parse_period

    try:
        seconds = parse_period(args.since)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not wiring.insights_exist(settings):
        report = {"since": args.since, "questions": 0, "clusters": []}
        if args.json:
            print(json.dumps({"period": args.since, "report": report, "answers": []}))
        else:
            print("Belum ada pertanyaan yang tercatat (DATA_DIR/insights.sqlite3 belum ada; `serve` mencatatnya).")
        return 0
    insights = wiring.build_insights(settings)
    try:
        if args.digest:
            # announcements: only a store that exists (printing the digest creates no file)
            have = settings.database_url is not None or (settings.data_dir / "announcements.sqlite3").exists()
            store = wiring.open_announcement_store(settings) if have else None
            try:
                text = insights.digest(wiring.build_run_store(settings).recent(50),
                                       announcements=wiring.digest_announcements(store))
            finally:
                if store is not None:
                    store.close()
            print(json.dumps({"digest": text}, ensure_ascii=False) if args.json else text)
            return 0
        report = insights.report(time.time() - seconds)
        if args.json:
            print(json.dumps({"period": args.since, "report": report, "answers": insights.answers(),
                              "weeks": insights.feedback_weeks(8)}, ensure_ascii=False))
            return 0
        clusters = report["clusters"]
        if not clusters:
            print(f"Tidak ada pertanyaan yang belum terjawab dalam {args.since} terakhir.")
            return 0
        print(f"{report['questions']} pertanyaan belum terjawab dalam {args.since} terakhir, {len(clusters)} kelompok:")
        for i, c in enumerate(clusters, 1):
            channels = ", ".join(f"{k} {v}" for k, v in c["channels"].items())
            note = f"  [dijawab admin #{c['admin_answer']}]" if c["admin_answer"] else ""
            print(f"{i:>3}. {c['representative']}  ({c['count']}x: {channels}; ditolak {c['refused']}, "
                  f"👎 {c['thumbs_down']}){note}")
            for example in c["examples"]:
                if example != c["representative"]:
                    print(f"       - {example}")
        return 0
    finally:
        insights.store.close()
