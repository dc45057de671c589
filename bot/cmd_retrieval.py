"""`index`, `search` and `eval retrieval`: build the index, query it, and measure it."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from pathlib import Path

from bot.cli import too_long
from bot.settings import Settings

__all__ = ["cmd_eval_retrieval", "cmd_index", "cmd_search", "load_jsonl_corpus"]

logger = logging.getLogger(__name__)
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def _fail(args: argparse.Namespace, message: str, code: int = EXIT_FAILURE, kind: str = "error") -> int:
    if getattr(args, "json", False):
        print(json.dumps({"error": kind, "message": message}, ensure_ascii=False))
    print(f"error: {message}", file=sys.stderr)
    return code


def _chunker(settings: Settings):
    """sync_jobs' chunker bound to the chunk settings, or None when that module is not available."""
    try:
        from sync_jobs.chunking import chunk_document
    except ImportError:
        return None
    import inspect

    params = inspect.signature(chunk_document).parameters
    kwargs = {}
    for name, value in (("target_tokens", settings.crawl.chunk_target_tokens), ("overlap", settings.crawl.chunk_overlap),
                        ("max_tokens", settings.crawl.chunk_max_tokens)):
        if name in params:
            kwargs[name] = value
    return lambda doc: list(chunk_document(doc, **kwargs))


def load_jsonl_corpus(path: Path, settings: Settings):
    """Documents ``{"id","url","title","text"[,"kind"]}`` and their chunks. A document of at most
    CHUNK_MAX_TOKENS words stays one whole chunk (a paragraph is the unit a question is written about);
    longer ones go through sync_jobs' chunker (paragraph groups when it is not installed)."""
    from storage.models import Chunk, Document

    documents: list[Document] = []
    chunks: list[Chunk] = []
    chunk = _chunker(settings)
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            doc_id, text = str(obj["id"]), str(obj["text"])
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}:{n}: expected {{\"id\",\"url\",\"title\",\"text\"}} ({error})") from None
        title = str(obj.get("title") or "")
        url = str(obj.get("url") or f"jsonl:{doc_id}")
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
        doc = Document(doc_id=doc_id, url=url, title=title, text=text, content_hash=digest,
                       kind=str(obj.get("kind") or "page"), urls=(url,))
        documents.append(doc)
        if len(text.split()) <= settings.crawl.chunk_max_tokens or chunk is None:
            parts = [text] if len(text.split()) <= settings.crawl.chunk_max_tokens else _paragraph_groups(text, settings)
            for i, part in enumerate(parts):
                chunks.append(Chunk(chunk_id=f"{doc_id}#{i}", doc_id=doc_id, url=url, title=title, section="",
                                    position=i, text=part, content_hash=hashlib.sha1(part.encode()).hexdigest()))
        else:
            for c in chunk(doc):
                chunks.append(c if c.doc_id == doc_id else Chunk(**{**_as_dict(c), "doc_id": doc_id}))
    return documents, chunks


def _as_dict(chunk) -> dict:
    return {f: getattr(chunk, f) for f in chunk.__slots__}


def _paragraph_groups(text: str, settings: Settings) -> list[str]:
    out, current, size = [], [], 0
    for para in [p.strip() for p in text.split("\n") if p.strip()]:
        words = len(para.split())
        if current and size + words > settings.crawl.chunk_max_tokens:
            out.append("\n".join(current))
            current, size = [], 0
        current.append(para)
        size += words
    if current:
        out.append("\n".join(current))
    return out


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    """Build (or update) the index from the document store or a JSONL file and switch to it."""
    from bot import wiring

    if args.from_jsonl:
        try:
            documents, chunks = load_jsonl_corpus(Path(args.from_jsonl), settings)
        except (OSError, ValueError) as error:
            return _fail(args, str(error), EXIT_USAGE)
    else:
        with wiring.open_docstore(settings) as store:
            documents, chunks = list(store.documents()), list(store.chunks())
        if not chunks:
            return _fail(args, "the document store is empty: run `python -m bot crawl` first (or use --from-jsonl)")
    manager = wiring.build_index_manager(settings)
    from bot.progress import console_progress

    bar = console_progress(args.json)
    if bar is not None and not args.full:  # embed what the cache lacks with a bar; the build then finds it all
        from sync_jobs.reindex import warm_passage_cache

        warm_passage_cache(manager.embedder, chunks, on_batch=lambda done, total: bar("embed", done, total))
        bar("index")
    try:
        report = manager.build(chunks, documents, full=bool(args.full))
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        c = report.as_json()["chunks"]
        print(f"index {report.version}: {c['total']} chunks ({c['added']} added, {c['removed']} removed, "
              f"{c['embedded']} embedded) from {report.documents} documents in {report.duration_s:.1f}s")
    return EXIT_OK


def _open_index(args: argparse.Namespace, settings: Settings):
    from bot import wiring
    from retrieval.index import IndexUnavailable

    manager = wiring.build_index_manager(settings)
    try:
        index = manager.current()
    except IndexUnavailable as error:
        return None, _fail(args, str(error), kind="index_unavailable")
    if index is None:
        return None, _fail(args, f"there is no index under {settings.index_dir} yet; build it with "
                                 "`python -m bot index` (or `python -m bot index --from-jsonl FILE`)", kind="no_index")
    return index, EXIT_OK


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    """Search the current index and print the hits."""
    if args.k < 1:
        return _fail(args, "--k must be at least 1", EXIT_USAGE)
    error = too_long([args.query], settings, "the query")
    if error:
        return _fail(args, error, EXIT_USAGE)
    index, code = _open_index(args, settings)
    if index is None:
        return code
    result = index.search(args.query, k=args.k, mode=args.mode)
    if args.json:
        payload = {"hits": [h.as_json() for h in result.hits], "confidence": round(result.confidence, 4),
                   "mode": result.mode, "version": index.info["version"], "timings_ms": result.timings_ms}
        facts = index.facts_lookup(args.query) if args.mode == "hybrid" else None
        if facts:
            payload["facts"] = facts.as_json()
        print(json.dumps(payload, ensure_ascii=False))
        return EXIT_OK
    print(f"confidence {result.confidence:.2f} ({result.mode}, index {index.info['version']})")
    for i, hit in enumerate(result.hits, 1):
        snippet = " ".join(hit.text.split())[:160]
        print(f"{i}. [{hit.score:.3f}] {hit.title} <{hit.url}>\n   {snippet}")
    return EXIT_OK


def cmd_eval_retrieval(args: argparse.Namespace, settings: Settings) -> int:
    """Recall/MRR/NDCG at 1, 3, 5, 10 for one mode or all three (--compare)."""
    from retrieval.evaluation import evaluate, load_dataset, to_markdown, write_markdown_section

    if not args.dataset:
        return _fail(args, "eval retrieval needs --dataset FILE (JSON lines with query and relevant_doc_ids/urls)",
                     EXIT_USAGE)
    try:
        items = load_dataset(Path(args.dataset))
    except (OSError, ValueError) as error:
        return _fail(args, str(error), EXIT_USAGE)
    for item in items:
        error = too_long([item.query], settings, f"{args.dataset}: the query of {item.id!r}")
        if error:
            return _fail(args, error, EXIT_USAGE)
    index, code = _open_index(args, settings)
    if index is None:
        return code
    modes = ["hybrid", "dense", "bm25"] if args.compare else [args.mode]
    if args.compare and args.mode in modes:
        modes.remove(args.mode)
        modes.insert(0, args.mode)
    results = [evaluate(index, items, mode=m) for m in modes]
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for item in items:
                fh.write(json.dumps({"id": item.id, "ranked_doc_ids": results[0]["ranked"][item.id]},
                                    ensure_ascii=False) + "\n")
    markdown = to_markdown(results, title=f"Retrieval on {Path(args.dataset).name} (index {index.info['version']})")
    if args.markdown:  # a marked section: regenerating it leaves the rest of a shared document alone
        write_markdown_section(Path(args.markdown), markdown, key=f"retrieval-{Path(args.dataset).stem}")
    public = [{k: v for k, v in r.items() if k != "ranked"} for r in results]
    if args.json:
        out = {"dataset": str(args.dataset), "index": index.info["version"]}
        out.update({"modes": {r["mode"]: r for r in public}} if args.compare else public[0])
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(markdown)
    return EXIT_OK
