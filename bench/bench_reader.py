"""The learned reader's cost, side by side with the previous pipeline in one run: reader time per question over the
chunks it reads, whole-answer latency of both pipelines (the same questions, interleaved, so both see the same load),
and the resident memory the reader adds (measured while the reader pipeline alone answers, after the previous
pipeline is warm, so the LLM's growth is not counted as the reader's). On the bundled sample site (crawled and indexed as `make eval` does) with
the dev set's and the informal set's questions."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# the goals (docs/benchmarks.md states each as met or missed from the numbers)
READER_P50_MS, READER_P95_MS, ANSWER_P50_MS, EXTRA_RSS_MB = 300.0, 600.0, 2000.0, 300.0


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _questions(limit: int) -> list[str]:
    from bench.eval_sets import load_set  # after the sys.path line above: this file also runs as a script

    out: list[str] = []
    for name in ("answers.jsonl", "informal.jsonl"):
        for item in load_set(name):
            if not item.get("conversation"):
                out.append(str(item["query"]))
    step = max(1, len(out) // limit)
    return out[::step][:limit]


def run(quick: bool = False) -> str:
    import dataclasses

    from bench.evaluation import build_fresh_index, site_settings
    from bot import wiring
    from bot.sample_site import SampleSite
    from generation.pipeline import AnswerPipeline

    questions = _questions(8 if quick else 60)
    with tempfile.TemporaryDirectory(prefix="prodi-bench-reader-") as tmp, SampleSite() as site:
        settings = site_settings(site.base_url, Path(tmp) / "data")
        manager, _, _ = build_fresh_index(settings)
        pool = wiring.build_llm_pool(settings)
        base = wiring.build_pipeline_config(settings)
        calibrator = wiring.build_calibrator(settings)
        previous = AnswerPipeline(manager.current, pool, dataclasses.replace(base, answerer="rules"),
                                  manager.embedder, calibrator=calibrator)
        reader_pipe = AnswerPipeline(manager.current, pool, dataclasses.replace(base, answerer="reader"),
                                     manager.embedder, calibrator=calibrator)

        async def measure() -> dict[str, object]:
            await pool.ready()
            for q in questions[:5]:  # warm: the LLM, the embedder, the index, the previous pipeline's caches
                await previous.answer(q)
            rss_before = _rss_mb()
            started = time.perf_counter()
            reader = reader_pipe.reader  # loads the reader
            reader.read(questions[0], ["Program studi ini berdiri pada tahun 2004."])
            load_s = time.perf_counter() - started
            rss_loaded = _rss_mb()
            # the memory the reader adds: every question through the reader pipeline alone, before the previous
            # pipeline runs again (its own caches would grow the process as well)
            for q in questions:
                await reader_pipe.answer(q)
            rss_reader = _rss_mb()
            read_ms, chunks, reader_total, previous_total = [], [], [], []
            for q in questions:  # latency: both pipelines on the same questions, interleaved
                a = await reader_pipe.answer(q)
                b = await previous.answer(q)
                reader_total.append(a.latency_ms)
                previous_total.append(b.latency_ms)
                if "read" in a.trace.latency_ms:
                    read_ms.append(a.trace.latency_ms["read"])
                    step = next(s for s in a.trace.steps if s["step"] == "read")
                    chunks.append(len(step["spans"]))
            return {"rss_before": rss_before, "rss_loaded": rss_loaded, "rss_after": rss_reader, "load_s": load_s,
                    "read_ms": read_ms, "chunks": chunks, "reader_total": reader_total,
                    "previous_total": previous_total}

        try:
            m = asyncio.run(measure())
        finally:
            pool.close()

    read_ms, reader_total, previous_total = m["read_ms"], m["reader_total"], m["previous_total"]
    extra = m["rss_after"] - m["rss_before"]
    r50, r95 = _pct(read_ms, 0.5), _pct(read_ms, 0.95)
    a50, a95 = _pct(reader_total, 0.5), _pct(reader_total, 0.95)
    p50, p95 = _pct(previous_total, 0.5), _pct(previous_total, 0.95)

    def verdict(value: float, goal: float, unit: str) -> str:
        return f"{value:.0f} {unit} ({'within' if value <= goal else 'over'} the goal of {goal:.0f} {unit})"

    lines = [
        "## The learned reader against the previous pipeline\n",
        f"{len(questions)} single-turn questions from the dev and informal sets on the sample site's index, asked "
        "once each through the reader pipeline and then through the previous pipeline (`ANSWERER=rules`, with the "
        f"default LLM), in the same process. The reader reads up to {base.reader_chunks} chunks a question "
        f"(mean {statistics.mean(m['chunks']) if m['chunks'] else 0:.1f}); questions answered before the read "
        "stage (the facts table, an empty query) have no reader time.\n",
        "| measure | p50 | p95 |",
        "|---|---|---|",
        f"| reader time per question (n={len(read_ms)}) | {r50:.0f} ms | {r95:.0f} ms |",
        f"| whole answer, reader pipeline | {a50:.0f} ms | {a95:.0f} ms |",
        f"| whole answer, previous pipeline | {p50:.0f} ms | {p95:.0f} ms |",
        "",
        f"- Reader time p50 {verdict(r50, READER_P50_MS, 'ms')}, p95 {verdict(r95, READER_P95_MS, 'ms')}.",
        f"- Whole answer p50 {verdict(a50, ANSWER_P50_MS, 'ms')}; the previous pipeline's p50 is {p50:.0f} ms, "
        f"{p50 / a50:.1f}× the reader pipeline's." if a50 else "",
        f"- Resident memory: {m['rss_before']:.0f} MB with the previous pipeline warm (the LLM loaded, five "
        f"answers), {m['rss_loaded']:.0f} MB after loading the reader ({m['load_s']:.1f} s, one read included), "
        f"{m['rss_after']:.0f} MB after every question through the reader pipeline alone: "
        f"{verdict(extra, EXTRA_RSS_MB, 'MB')} added.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
