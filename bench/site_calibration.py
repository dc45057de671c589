"""What ``python -m bot calibrate`` gives a site, measured on questions it was not fitted on.

The learned reader ships with the threshold chosen on the IDK-MRC tune split's dev part. A site refits it (and its
retrieval fusion constants) on its own labelled questions with ``python -m bot calibrate --dataset FILE``. This
script plays that on the bundled sample site:

1. crawl and index the sample site (``ANSWERER=reader``), and answer the dev set, the informal set and both blind
   sets with the shipped threshold;
2. run ``calibrate`` itself (``bot.cmd_answer.cmd_calibrate``, default ``--target-refusal 0.8``) on the dev and
   informal sets together, the sets a site's team would have labelled;
3. answer the four sets again with what it wrote (``DATA_DIR/calibration/reader.json``, the index's
   ``fusion.json``).

The dev and informal figures after the fit are in-sample; the blind sets (A, B) were never used to fit or choose
anything. Every item is scored as ``make eval`` scores it (``generation.evaluation.outcome``).

    python -m bench.site_calibration                    # writes its section of docs/evaluation.md
    python -m bench.site_calibration --limit 5 --out /tmp/x.md   # a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.eval_sets import load_items
from bench.evaluation import (
    ANSWERS_SET,
    INFORMAL_SETS,
    ROOT,
    answer_items,
    build_fresh_index,
    site_settings,
)

__all__ = ["FITTED_ON", "SETS", "counts", "markdown", "run"]

# the sets, in report order: the first two are what calibrate is fitted on
SETS = {"dev": ANSWERS_SET, **INFORMAL_SETS}
FITTED_ON = ("dev", "informal")
NAMES = {"dev": "dev set", "informal": "informal set", "holdout": "blind set A", "final": "blind set B"}
SECTION = "site-calibration"


def counts(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many items had each outcome (``generation.evaluation.outcome_counts``), plus the answerable and
    unanswerable totals."""
    from bench.evaluation import _results
    from generation.evaluation import outcome_counts

    items = _results({"results": list(results)})
    return {**outcome_counts(items), "answerable": sum(r.answerable for r in items),
            "unanswerable": sum(not r.answerable for r in items)}


def _cells(c: Mapping[str, int]) -> str:
    return (f"{c['correct']} / {c['wrong']} / {c['abstained']} of {c['answerable']} | "
            f"{c['refused']} of {c['unanswerable']}")


def markdown(before: Mapping[str, Mapping[str, int]], after: Mapping[str, Mapping[str, int]],
             fit: Mapping[str, Any], *, seconds: float, machine_line: str) -> str:
    """The section: each set with the shipped threshold and with the site's own calibration. Every sentence is
    read from the numbers."""
    lines = [
        "## A site's own calibration (`python -m bot calibrate`), reader", "",
        "The sample site indexed afresh; each set answered by the reader with the threshold it ships with, then "
        "again after `python -m bot calibrate` on the dev and informal sets together (target refusal "
        f"{fit.get('target_refusal', 0.8)}): threshold {fit['before']:.4f} → {fit['after']:.4f}"
        + (", and the index's own fusion constants" if fit.get("fusion") else "")
        + (f" (retrieval fusion: {fit['fusion_message']})" if fit.get("fusion_message") else "")
        + f". Regenerate with `python -m bench.site_calibration` ({seconds:.0f} s).", "",
        machine_line.rstrip(), "",
        "| set | shipped: correct / wrong / abstained | shipped: refused | site's own: correct / wrong / abstained "
        "| site's own: refused |",
        "|---|---|---|---|---|",
    ]
    for key in SETS:
        if key not in before or key not in after:
            continue
        mark = " (fitted on: in-sample)" if key in FITTED_ON else " (held out)"
        lines.append(f"| {NAMES[key]}{mark} | {_cells(before[key])} | {_cells(after[key])} |")
    lines.append("")
    for key in SETS:
        if key in FITTED_ON or key not in before or key not in after:
            continue
        b, a = before[key], after[key]
        name = NAMES[key][:1].upper() + NAMES[key][1:]
        lines.append(f"- {name}: answerable correct {b['correct']} → {a['correct']} of "
                     f"{a['answerable']} ({a['correct'] - b['correct']:+d}), wrong {b['wrong']} → {a['wrong']}, "
                     f"unanswerable refused {b['refused']} → {a['refused']} of {a['unanswerable']} "
                     f"({a['refused'] - b['refused']:+d}).")
    return "\n".join(lines) + "\n"


async def _answer_sets(settings: Any, sets: Mapping[str, list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    from bot import wiring

    manager = wiring.build_index_manager(settings)  # the index as it is on disk now (its fusion.json too)
    pool = wiring.build_llm_pool(settings)
    try:
        pipeline = wiring.build_pipeline(settings, index_manager=manager, pool=pool)  # the site's threshold, if any
        out = {}
        for key, items in sets.items():
            block = await answer_items(pipeline, manager.current, items, key, gold_match="all")
            out[key] = counts(block["results"])
        return out
    finally:
        await asyncio.get_running_loop().run_in_executor(None, pool.close)


def run(limit: int | None = None, out: Path | None = None, target_refusal: float = 0.8) -> dict[str, Any]:
    from bench.__main__ import machine
    from bot.cmd_answer import cmd_calibrate
    from bot.sample_site import SampleSite
    from generation.reader import Reader
    from generation.reader.site import load_threshold

    sets = {key: load_items(path)[:limit] if limit else load_items(path) for key, path in SETS.items()}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prodi-site-calibration-") as tmp, SampleSite() as site:
        settings = site_settings(site.base_url, Path(tmp) / "data", answerer="reader")
        build_fresh_index(settings)
        shipped = Reader(settings.answers.reader_model_dir).config.threshold
        before = asyncio.run(_answer_sets(settings, sets))
        dataset = Path(tmp) / "site-labelled.jsonl"
        dataset.write_text("".join(json.dumps(it, ensure_ascii=False) + "\n" for key in FITTED_ON for it in sets[key]),
                           encoding="utf-8")
        args = argparse.Namespace(dataset=str(dataset), target_refusal=target_refusal, out=None, dry_run=False,
                                  json=True)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):  # --json: one line saying what it fitted
            status = cmd_calibrate(args, settings)
        if status != 0:
            raise RuntimeError("python -m bot calibrate failed on the sample site's dev and informal sets")
        report = json.loads(printed.getvalue().strip().splitlines()[-1])
        fitted = load_threshold(settings.reader_calibration_path)
        after = asyncio.run(_answer_sets(settings, sets))
    seconds = time.perf_counter() - started
    fusion = report.get("fusion") or {}
    fit = {"before": shipped, "after": fitted if fitted is not None else shipped,
           "fusion": bool(fusion.get("changed")), "fusion_message": str(fusion.get("message", "")),
           "target_refusal": target_refusal}
    text = markdown(before, after, fit, seconds=seconds, machine_line=machine())
    if out is not None:
        from bot.cmd_answer import upsert_section

        upsert_section(out, SECTION, text)
    print(text)
    return {"before": before, "after": after, "fit": fit}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.site_calibration", description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N items of each set (a smoke run)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "evaluation.md"))
    parser.add_argument("--target-refusal", type=float, default=0.8)
    args = parser.parse_args(argv)
    run(args.limit, Path(args.out), args.target_refusal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
