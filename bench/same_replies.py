"""A refactor must not change what the bot says: the same 50 questions (the first 25 of the dev set and of the informal
set, multi-turn items played with the bot's own replies) through both answerers, each reply and stop reason written
as JSON lines, so two runs can be compared byte for byte.

    python -m bench.same_replies --out before.jsonl      # on the commit before the change
    python -m bench.same_replies --out after.jsonl       # after it
    python -m bench.same_replies --compare before.jsonl after.jsonl

The sample site is served on a random loopback port each run; ``--compare`` masks it and nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.eval_sets import load_set
from bench.evaluation import answer_item, build_fresh_index, site_settings

ITEMS = (("answers.jsonl", 25), ("informal.jsonl", 25))
_PORT = re.compile(r"127\.0\.0\.1:\d+")


def questions() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, n in ITEMS:
        out += load_set(name)[:n]
    return out


async def _answer_all(manager: Any, settings: Any, out: Path) -> int:
    from bot import wiring
    from generation.pipeline import AnswerPipeline

    pool = wiring.build_llm_pool(settings)
    rows = 0
    try:
        with out.open("w", encoding="utf-8") as f:
            for answerer in ("reader", "rules"):
                cfg = dataclasses.replace(wiring.build_pipeline_config(settings), answerer=answerer)
                pipeline = AnswerPipeline(manager.current, pool, cfg, manager.embedder,
                                          calibrator=wiring.build_calibrator(settings))
                for item in questions():
                    r = await answer_item(pipeline, manager.current, item)
                    f.write(json.dumps({"answerer": answerer, "id": r.id, "answer": r.answer, "stop": r.stop_reason,
                                        "previous": r.previous}, ensure_ascii=False) + "\n")
                    rows += 1
    finally:
        pool.close()
    return rows


def record(out: Path) -> int:
    from bot.sample_site import SampleSite

    with tempfile.TemporaryDirectory(prefix="prodi-same-") as tmp, SampleSite() as site:
        settings = site_settings(site.base_url, Path(tmp) / "data")
        manager, _, _ = build_fresh_index(settings)
        return asyncio.run(_answer_all(manager, settings, out))


def compare(before: Path, after: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The rows that differ (the loopback port masked); a missing or extra row counts as a difference."""
    def load(path: Path) -> list[dict[str, Any]]:
        return [json.loads(_PORT.sub("SITE", line)) for line in path.read_text(encoding="utf-8").splitlines() if line]

    a, b = load(before), load(after)
    diff = [(x, y) for x, y in zip(a, b, strict=False) if x != y]
    longer = a[len(b):] or b[len(a):]
    return diff + [(x, {}) for x in longer]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="answer the 50 questions with both answerers into this file")
    group.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.out:
        print(f"{record(args.out)} replies written to {args.out}")
        return 0
    diff = compare(*args.compare)
    for x, y in diff:
        print(f"differs: {x.get('answerer')} {x.get('id')}: {x.get('answer', '')[:100]!r} -> {y.get('answer', '')[:100]!r}")
    print(f"{len(diff)} of the replies differ" if diff else "identical: every reply and stop reason")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
