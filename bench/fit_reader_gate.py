"""Choose the reader gate's shipped threshold where the pipeline uses it: after retrieval, over several chunks.

``bench/train_reader.py`` calibrates the reader on gold passages. In the pipeline the reader reads the top chunks of a
search and the best of them decides, so the operating point moves. This script measures it on data the reader was
not trained on and the report never reads: the IDK-MRC tune split's *dev* part (``train_reader._is_dev``, about 10% of
the tune passages). Those passages, plus a fixed-seed sample of other tune passages as distractors (so the index is
about the size of the check split's), are indexed as their own corpus; every dev question is answered by the reader
pipeline with the gate off and labelled (``generation.calibration.label_replies``). The threshold kept is the one that
makes the two shares most even: max over t of min(answerable answered correctly, unanswerable refused).

    python -m bench.fit_reader_gate                 # writes the threshold into generation/data/reader/reader.json

The IDK-MRC check split and the sample-site sets are not used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import idkmrc
from bench.train_reader import _is_dev
from generation.calibration import operating_point
from generation.reader.reader import CONFIG_FILE, DEFAULT_DIR

SEED = 20261125
DISTRACTORS = 430  # with the ~290 dev passages, about the check split's 722


def balanced_threshold(p: list[float], answerable: list[bool], correct: list[bool]) -> tuple[float, dict]:
    best_t, best_v, best = 0.5, -1.0, None
    for t in np.unique(np.round(np.asarray(p, dtype=np.float64), 5)):
        point = operating_point(p, answerable, correct, float(t))
        v = min(point.correct_answerable, point.refused_unanswerable)
        if v > best_v:
            best_t, best_v, best = float(t), v, point
    return best_t, best.as_json() if best else {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=str(DEFAULT_DIR))
    ap.add_argument("--distractors", type=int, default=DISTRACTORS)
    ap.add_argument("--limit", type=int, default=0, help="only N dev questions (a smoke run)")
    ap.add_argument("--dry-run", action="store_true", help="report without writing the threshold")
    args = ap.parse_args(argv)

    from bench.evaluation import build_jsonl_index
    from bot import wiring
    from bot.settings import Settings
    from generation.calibration import label_replies
    from generation.pipeline import AnswerPipeline, PipelineConfig

    tune, _ = idkmrc.split(idkmrc.load_passages())
    dev = [p for p in tune if _is_dev(p.context)]
    rest = [p for p in tune if not _is_dev(p.context)]
    distractors = random.Random(SEED).sample(rest, min(args.distractors, len(rest)))
    items = idkmrc.items(dev)
    if args.limit:
        items = random.Random(SEED).sample(items, min(args.limit, len(items)))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prodi-reader-gate-") as tmp:
        settings = Settings(_env_file=None, data_dir=Path(tmp) / "data", redis_url=None)
        manager, _ = build_jsonl_index(settings, idkmrc.documents(dev + distractors))
        pool = wiring.build_llm_pool(settings)
        config = PipelineConfig(answerer="reader", reader_model_dir=args.model_dir,
                                top_k=settings.retrieval.similarity_top_k)
        pipeline = AnswerPipeline(manager.current, pool, config, manager.embedder)

        async def label() -> list:
            done = [0]

            def progress(_reply) -> None:
                done[0] += 1
                if done[0] % 50 == 0:
                    print(f"  {done[0]}/{len(items)}", file=sys.stderr, flush=True)

            return await label_replies(pipeline, items, progress)

        try:
            replies = asyncio.run(label())
        finally:
            pool.close()
    p = [r.reader_probability() for r in replies]
    answerable = [r.answerable for r in replies]
    correct = [r.correct for r in replies]
    threshold, figures = balanced_threshold(p, answerable, correct)
    cfg_path = Path(args.model_dir) / CONFIG_FILE
    meta = json.loads(cfg_path.read_text(encoding="utf-8"))
    gold_passage = meta["config"]["threshold"]
    report = {"questions": len(replies), "answerable": sum(answerable), "passages": len(dev),
              "distractors": len(distractors), "threshold": round(threshold, 5), "figures": figures,
              "figures_at_gold_passage_threshold": operating_point(p, answerable, correct, gold_passage).as_json(),
              "gold_passage_threshold": gold_passage, "seconds": round(time.perf_counter() - started, 1),
              "fitted_on": "IDK-MRC tune split, dev part (bench/train_reader.py _is_dev), after retrieval"}
    print(json.dumps(report, indent=2))
    if not args.dry_run:
        meta["config"]["threshold"] = round(threshold, 5)
        meta["gate"] = report
        cfg_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        print(f"wrote the threshold {threshold:.4f} into {cfg_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
