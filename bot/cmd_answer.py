"""`ask`, `chat`, `eval answers`, `eval consistency`: the answer pipeline from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from collections.abc import Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.cli import too_long
from bot.settings import Settings

logger = logging.getLogger(__name__)

__all__ = ["cmd_ask", "cmd_calibrate", "cmd_chat", "cmd_eval_answers", "cmd_eval_consistency"]

NO_INDEX_MESSAGE = (
    "Belum ada indeks pencarian. Jalankan dulu `python -m bot reindex` (atau `python -m bot index --from-jsonl FILE`), "
    "lalu coba lagi."
)


@asynccontextmanager
async def _pipeline(settings: Settings, need_index: bool = True, json_output: bool = True):
    """The index manager, LLM pool and pipeline for one command; the pool is closed on exit. The first index is
    built with a progress bar on a terminal (not with ``json_output``)."""
    from bot import wiring
    from bot.progress import console_progress

    manager = wiring.build_index_manager(settings)
    loop = asyncio.get_running_loop()
    index = await loop.run_in_executor(None, manager.current)
    if index is None and need_index:
        print("Menyiapkan indeks pertama … (sekali saja)", file=sys.stderr)
        progress = console_progress(json_output)
        try:
            await loop.run_in_executor(None, wiring.ensure_index, settings, progress)
        except RuntimeError as error:  # the first reindex failed (site down, …): say why, then how to retry
            print(f"error: {error}", file=sys.stderr)
            raise _NoIndex() from None
        finally:
            if progress is not None:
                progress.close()
        index = await loop.run_in_executor(None, manager.current)
        if index is None:
            raise _NoIndex()
    pool = wiring.build_llm_pool(settings)
    try:
        pipeline = wiring.build_pipeline(settings, manager, pool=pool, embedder=manager.embedder)
        yield pipeline, manager
    finally:
        await loop.run_in_executor(None, pool.close)


class _NoIndex(Exception):
    pass


def _run_with_pipeline(settings: Settings, work: Any) -> Any:
    """``await work(pipeline, manager)`` on this command's pipeline; None (the reason on stderr) without an index."""

    async def run() -> Any:
        try:
            async with _pipeline(settings) as (pipeline, manager):
                return await work(pipeline, manager)
        except _NoIndex:
            print(NO_INDEX_MESSAGE, file=sys.stderr)
            return None

    return asyncio.run(run())


def _print_answer(answer: Any) -> None:
    print(answer.answer)
    if answer.sources:
        print("\nSumber:")
        for i, s in enumerate(answer.sources, 1):
            print(f"  [{i}] {s.title} — {s.url}")


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    """Answer one question and print it (``--json``: the full Answer record)."""

    error = too_long([args.question], settings)
    if error:
        if args.json:
            print(json.dumps({"error": "too_long", "message": error}, ensure_ascii=False))
        print(f"error: {error}", file=sys.stderr)
        return 2

    async def run() -> int:
        try:
            async with _pipeline(settings, json_output=args.json) as (pipeline, _):
                answer = await pipeline.answer(args.question)
        except _NoIndex:
            if args.json:
                print(json.dumps({"error": "no_index", "message": NO_INDEX_MESSAGE}, ensure_ascii=False))
            print(NO_INDEX_MESSAGE, file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(answer.as_json(), ensure_ascii=False))
        else:
            _print_answer(answer)
        return 0

    return asyncio.run(run())


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    """Console chat on the current index: the embedded default (no tokens, no Redis, no network)."""
    from bot import wiring
    from bot.channels.base import ChannelContext
    from bot.channels.console import CONSOLE_RATE_LIMIT, FAREWELL, ConsoleChannel

    async def run() -> int:
        try:
            async with _pipeline(settings, json_output=args.json) as (pipeline, _):
                stores = wiring.build_channel_stores(settings, in_memory=True)
                service = wiring.build_chat_service(settings, pipeline, stores,
                                                    rate_limit_per_minute=CONSOLE_RATE_LIMIT)
                console = ConsoleChannel(ChannelContext(settings=settings, service=service, stores=stores),
                                         read_line=_read_line)
                return await console.run()
        except _NoIndex:
            print(NO_INDEX_MESSAGE, file=sys.stderr)
            return 1

    try:
        return asyncio.run(run())
    except KeyboardInterrupt:
        print("\n" + FAREWELL)
        return 0


def _read_line(prompt: str) -> str:
    return input(prompt)


def _load_dataset(path: str | None, settings: Settings) -> list[dict[str, Any]]:
    """The items of a JSON-lines dataset; SystemExit naming the line for bad JSON or a query over the cap."""
    if not path:
        raise SystemExit("eval answers needs --dataset FILE (JSON lines, see tests/data/eval/README.md)")
    p = Path(path)
    if not p.exists():
        raise SystemExit(f"--dataset {p} does not exist")
    items = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise SystemExit(f"{p}:{n}: not valid JSON ({error})") from None
            error = too_long([str(items[-1].get("query", ""))] if isinstance(items[-1], dict) else [], settings,
                             f"{p}:{n}: the query")
            if error:
                raise SystemExit(error)
    return items


def _context_texts(index: Any, answer: Any) -> list[str]:
    ids: list[str] = []
    for step in answer.trace.steps if answer.trace else ():
        if step.get("step") == "context":
            ids = list(step.get("chunk_ids", []))
    by_id = getattr(index, "_eval_chunks", None)
    if by_id is None:
        by_id = {c.chunk_id: c.text for c in getattr(index, "chunks", ())}
        try:
            index._eval_chunks = by_id
        except AttributeError:
            pass
    return [by_id[i] for i in ids if i in by_id]


def upsert_section(path: Path, key: str, markdown: str) -> None:
    """Write ``markdown`` between ``<!-- key:start -->`` and ``<!-- key:end -->`` in ``path`` (appending the
    section when it is not there yet), leaving the rest of a shared document (docs/evaluation.md) untouched."""
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    block = f"{start}\n{markdown.rstrip()}\n{end}\n"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = f"{head}{block}{tail}"
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def markdown_table(metrics: dict[str, Any], title: str = "Answers") -> str:
    rows = [f"### {title}\n", "| metric | value |", "|---|---|"]
    for key, value in metrics.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        rows.append(f"| {key} | {value} |")
    return "\n".join(rows) + "\n"


async def evaluate_answers(pipeline: Any, manager: Any, items: Sequence[dict[str, Any]], progress: bool = False):
    """Run every item through the pipeline; returns (metrics, item results)."""
    from generation.evaluation import ItemResult, summarize

    results = []
    loop = asyncio.get_running_loop()
    for n, item in enumerate(items, 1):
        # a follow-up is scored on the bot's own previous replies, as in real use (the file's assistant turns are ignored)
        history = await pipeline.replay(item.get("conversation") or [])
        answer = await pipeline.answer(str(item["query"]), history)
        index = await loop.run_in_executor(None, manager.current)
        results.append(
            ItemResult(
                id=str(item.get("id", n)),
                query=str(item["query"]),
                answerable=bool(item.get("answerable", True)),
                answer=answer.answer,
                abstained=answer.abstained,
                sources=[s.as_json() for s in answer.sources],
                stop_reason=answer.stop_reason,
                latency_ms=answer.latency_ms,
                golds=[str(g) for g in item.get("answers") or []],
                reference=str(item.get("reference_answer") or ""),
                context=_context_texts(index, answer) if index is not None else [],
                expected_items=[str(e) for e in item.get("expected_items") or []],
                category=str(item.get("category", "")),
            )
        )
        if progress:
            print(f"[{n}/{len(items)}] {results[-1].id} {answer.stop_reason} {answer.latency_ms:.0f} ms", file=sys.stderr)
    vocabulary = [str(e) for item in items for e in item.get("expected_items") or []]
    metrics = await loop.run_in_executor(None, summarize, results, pipeline.embedder, vocabulary)
    return metrics, results


def cmd_eval_answers(args: argparse.Namespace, settings: Settings) -> int:
    """`eval answers --dataset FILE [--dump FILE] [--markdown FILE]`."""
    items = _load_dataset(args.dataset, settings)

    outcome = _run_with_pipeline(
        settings, lambda pipeline, manager: evaluate_answers(pipeline, manager, items, progress=not args.json))
    if outcome is None:
        return 1
    metrics, results = outcome
    if args.dump:
        Path(args.dump).parent.mkdir(parents=True, exist_ok=True)
        with open(args.dump, "w", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps(r.dump(), ensure_ascii=False) + "\n")
    if args.markdown:
        name = Path(args.dataset).stem
        upsert_section(Path(args.markdown), f"answers-{name}", markdown_table(metrics, f"Answers on {name}.jsonl"))
    if args.json:
        print(json.dumps(metrics, ensure_ascii=False))
    else:
        print(markdown_table(metrics))
    return 0


def cmd_eval_consistency(args: argparse.Namespace, settings: Settings) -> int:
    """`eval consistency --query Q --runs 5`: the same question N times; are the answers identical?"""
    if not args.query:
        raise SystemExit("eval consistency needs --query 'a question'")

    async def run():  # type: ignore[no-untyped-def]
        try:
            async with _pipeline(settings) as (pipeline, _):
                return [await pipeline.answer(args.query) for _ in range(max(1, args.runs))]
        except _NoIndex:
            print(NO_INDEX_MESSAGE, file=sys.stderr)
            return None

    answers = asyncio.run(run())
    if answers is None:
        return 1
    texts = [a.answer for a in answers]
    distinct = list(dict.fromkeys(texts))
    report = {
        "query": args.query,
        "runs": len(answers),
        "distinct_answers": len(distinct),
        "identical": len(distinct) == 1,
        "stop_reasons": [a.stop_reason for a in answers],
        "sources_identical": len({tuple(s.url for s in a.sources) for a in answers}) == 1,
        "latency_ms": [round(a.latency_ms, 1) for a in answers],
        "answers": distinct,
    }
    print(json.dumps(report, ensure_ascii=False, indent=None if args.json else 2))
    if args.markdown:
        table = markdown_table({k: v for k, v in report.items() if k != "answers"}, "Consistency")
        upsert_section(Path(args.markdown), "answers-consistency", table)
    return 0 if report["identical"] else 1


def _calibration_report(before: Any, after: Any, how: str, n: int, path: Path | None) -> str:
    rows = [("answered, of the answerable questions", "answered_answerable"),
            ("gold span in the answered ones", "correct_of_answered"),
            ("answerable questions answered correctly", "correct_answerable"),
            ("unanswerable questions refused", "refused_unanswerable")]
    lines = [f"calibrate: {n} labelled questions; refitted: {how}",
             f"{'':42} {'before':>8} {'after':>8}",
             f"{'threshold':42} {before.threshold:8.3f} {after.threshold:8.3f}"]
    lines += [f"{label:42} {getattr(before, key):8.1%} {getattr(after, key):8.1%}" for label, key in rows]
    lines.append("(both columns measured on the same questions the model was refitted on)")
    lines.append(f"saved to {path}" if path else "not saved (--dry-run)")
    return "\n".join(lines)


def _print_calibration(args: argparse.Namespace, n: int, how: str, before: Any, after: Any, path: Path | None,
                       fusion: dict[str, Any]) -> None:
    """What `calibrate` did: JSON with --json, else the before/after table and the fusion line."""
    if args.json:
        print(json.dumps({"items": n, "refitted": how, "before": before.as_json(), "after": after.as_json(),
                          "model": str(path) if path else None, "fusion": fusion}, ensure_ascii=False))
    else:
        print(_calibration_report(before, after, how, n, path))
        print(f"retrieval fusion: {fusion.get('message', '')}")


def _calibrate_reader(args: argparse.Namespace, settings: Settings, replies: list[Any], fusion: dict[str, Any],
                      fitted_for: dict[str, str]) -> int:
    """The reader's gate: the lowest threshold that refuses ``--target-refusal`` of the site's unanswerable questions
    (DATA_DIR/calibration/reader.json)."""
    from bot import wiring
    from generation.reader.site import fit_threshold, load_threshold, save_threshold, threshold_figures

    try:
        current = wiring.build_pipeline_config(settings).reader_threshold
        if current is None:
            from generation.reader import Reader

            current = Reader(settings.answers.reader_model_dir).config.threshold
        after = fit_threshold(replies, args.target_refusal)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    before = threshold_figures(replies, current)
    path = None if args.dry_run else (Path(args.out) if args.out else settings.reader_calibration_path)
    if path is not None:
        save_threshold(path, after, {"site_dataset": Path(args.dataset).name, "items": len(replies), **fitted_for})
        load_threshold(path)  # what the pipeline will read back
    how = f"the reader's threshold {current:.3f} → {after.threshold:.3f}"
    _print_calibration(args, len(replies), how, before, after, path, fusion)
    return _publish_calibration(settings, path)


def _publish_calibration(settings: Settings, path: Path | None) -> int:
    """With DATABASE_URL the file just saved goes to PostgreSQL too, so every replica takes it (bot.wiring
    CalibrationFollower); 1 with the reason when it could not, since the other hosts keep the old one."""
    from bot import wiring

    if path is None:
        return 0
    try:
        name = wiring.publish_calibration(settings, path)
    except Exception as error:  # boundary: the CLI command reports any publish failure and exits 1 (the file here is saved)
        print(f"error: saved to {path} but not published to PostgreSQL ({error}); the other hosts keep their "
              "calibration until `calibrate` runs again", file=sys.stderr)
        return 1
    if name is not None:
        print(f"published {name} to PostgreSQL: every replica takes it at its next index check", file=sys.stderr)
    return 0


def _fit_fusion(manager: Any, items: Sequence[dict[str, Any]], dry_run: bool) -> dict[str, Any]:
    """Fit the index's fusion constants (retrieval.tuning) on the items that name their relevant pages and store
    them with the index (fusion.json) when they beat the current ones; what happened, for the report."""
    from retrieval.tuning import MIN_ITEMS, fit_fusion_report

    labelled = [it for it in items if it.get("relevant_urls") or it.get("relevant_doc_ids")]
    if len(labelled) < MIN_ITEMS:
        return {"changed": False, "message": f"not fitted: {len(labelled)} questions name their relevant pages "
                                              f"(relevant_urls / relevant_doc_ids); at least {MIN_ITEMS} are needed"}
    fit = fit_fusion_report(manager.current(), labelled)
    out = {"changed": bool(fit.changed), "values": fit.values, "before": fit.before, "after": fit.after}
    if fit.changed and not dry_run:
        manager.save_fusion(fit)
    out["message"] = (f"MRR@10 {fit.before.get('mrr@10')} → {fit.after.get('mrr@10')} on {fit.n} questions with "
                      f"{fit.values}" + ("" if fit.changed else " (not better: kept the current constants)")
                      + (" (not saved: --dry-run)" if dry_run and fit.changed else ""))
    return out


def cmd_calibrate(args: argparse.Namespace, settings: Settings) -> int:
    """`calibrate --dataset FILE`: refit the abstention model on this site's own labelled questions."""
    from bot import wiring
    from generation.calibration import figures, label_replies, refit

    items = _load_dataset(args.dataset, settings)
    bad = [str(it.get("id", n)) for n, it in enumerate(items, 1)
           if not str(it.get("query") or "").strip() or (it.get("answerable", True) and not it.get("answers"))]
    if bad:
        message = (f"{args.dataset}: every item needs a \"query\" and, when answerable, gold spans in \"answers\" "
                   f"(see tests/data/eval/README.md); check {', '.join(bad[:5])}")
        if args.json:
            print(json.dumps({"error": "bad_dataset", "message": message}, ensure_ascii=False))
        print(f"error: {message}", file=sys.stderr)
        return 2
    wiring.fetch_shared_calibration(settings)  # with DATABASE_URL: refit from the model every host uses
    prior = wiring.build_calibrator(settings)

    fusion: dict[str, Any] = {}
    fitted_for: dict[str, str] = {}

    async def work(pipeline: Any, manager: Any) -> Any:
        from retrieval.types import calibration_of

        fitted_for["embedder"] = calibration_of(manager.embedder)  # recorded: a switched EMBEDDER warns at start
        # retrieval first: the index's own fusion constants from the questions that name their pages
        fusion.update(await asyncio.get_running_loop().run_in_executor(None, _fit_fusion, manager, items, args.dry_run))
        return await label_replies(pipeline, items)

    replies = _run_with_pipeline(settings, work)
    if replies is None:
        return 1
    if settings.answers.answerer == "reader":
        return _calibrate_reader(args, settings, replies, fusion, fitted_for)
    try:
        model, how = refit(replies, prior=prior, target_refusal=args.target_refusal,
                           meta={"site_dataset": Path(args.dataset).name, "fitted_at": time.strftime("%Y-%m-%d"),
                                 **fitted_for})
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    before, after = figures(replies, prior), figures(replies, model)
    path = None if args.dry_run else (Path(args.out) if args.out else settings.calibration_path)
    if path is not None:
        model.save(path)
    _print_calibration(args, len(replies), how, before, after, path, fusion)
    return _publish_calibration(settings, path)
