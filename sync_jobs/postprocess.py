"""Site-wide clean-up after extraction: boilerplate lines, then exact and near-duplicate documents.

Both need every page of the site, so they run over all pages' raw extracts at the end of a crawl. The result is
deterministic (pages are processed in URL order), so an unchanged site gives the same documents and ids.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Mapping

import numpy as np

from storage.models import Document
from sync_jobs.entities import parse_field, person_key
from sync_jobs.extract import doc_id_for, make_document
from sync_jobs.normalize import sha1_hex

__all__ = ["boilerplate_lines", "dedupe", "postprocess", "simhash"]

BOILERPLATE_MIN_PAGES = 3
BOILERPLATE_FRACTION = 0.3
NEAR_DUP_JACCARD = 0.8
_NEAR_DUP_MIN_WORDS = 25
_SHINGLE = 3
_KINDS_CLEANED = {"page", "lecturer"}


def _line_key(line: str) -> str:
    return re.sub(r"\s+", " ", line.strip().lower())


def _doc_lines(doc: Document) -> set[str]:
    keys = set()
    for heading, body in doc.sections:
        if heading:
            keys.add(_line_key(heading))
        keys.update(_line_key(line) for line in body.split("\n") if line.strip())
    return keys


def boilerplate_lines(raw: Mapping[str, tuple[Document, ...]]) -> set[str]:
    """Line keys that occur on at least 30% of the HTML pages (and on at least three of them)."""
    pages = [docs for docs in raw.values() if any(d.kind in _KINDS_CLEANED for d in docs)]
    if len(pages) < BOILERPLATE_MIN_PAGES + 1:
        return set()
    counts: Counter[str] = Counter()
    for docs in pages:
        keys: set[str] = set()
        for doc in docs:
            if doc.kind in _KINDS_CLEANED:
                keys |= _doc_lines(doc)
        counts.update(keys)
    threshold = max(BOILERPLATE_MIN_PAGES, math.ceil(BOILERPLATE_FRACTION * len(pages)))
    return {key for key, n in counts.items() if n >= threshold}


def _strip(doc: Document, boiler: set[str]) -> Document | None:
    if doc.kind not in _KINDS_CLEANED or not boiler:
        return doc
    sections = []
    touched = False
    for heading, body in doc.sections:
        kept = []
        for line in body.split("\n"):
            key = _line_key(line)
            if key in boiler and not (doc.kind == "lecturer" and parse_field(line)):
                touched = True
                continue
            kept.append(line)
        if heading and _line_key(heading) in boiler and not (doc.kind == "lecturer" and heading == doc.title):
            heading, touched = "", True
        sections.append((heading, "\n".join(kept)))
    if not touched:
        return doc
    key = doc.meta.get("key", "")
    new = make_document(doc.url, doc.title, sections, kind=doc.kind, key=key, fetched_at=doc.fetched_at)
    if new is None:
        return None
    # Keep the id of the raw document (it was derived from the URL and entity key at extraction time).
    return Document(doc_id=doc.doc_id, url=new.url, title=new.title, text=new.text, content_hash=new.content_hash,
                    fetched_at=new.fetched_at, kind=new.kind, urls=doc.urls, sections=new.sections, meta=doc.meta)


def _shingles(text: str) -> np.ndarray:
    words = re.findall(r"\w+", text.lower())
    if len(words) < _SHINGLE:
        words = words + [""] * (_SHINGLE - len(words))
    grams = {" ".join(words[i:i + _SHINGLE]) for i in range(len(words) - _SHINGLE + 1)}
    return np.array(
        sorted(int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "little") for g in grams),
        dtype=np.uint64,
    )


def simhash(hashes: np.ndarray) -> int:
    """64-bit SimHash of a set of 64-bit shingle hashes."""
    if hashes.size == 0:
        return 0
    bits = ((hashes[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(np.int32)
    votes = bits.sum(axis=0) * 2 - hashes.size
    return int(sum(1 << i for i in range(64) if votes[i] > 0))


def _jaccard(a: np.ndarray, b: np.ndarray) -> float:
    inter = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - inter
    return inter / union if union else 1.0


def _merge(keep: Document, others: list[Document]) -> Document:
    urls = sorted({u for d in [keep, *others] for u in (d.urls or (d.url,))}, key=lambda u: ("?" in u, len(u), u))
    if keep.url in urls:
        urls.remove(keep.url)
    urls.insert(0, keep.url)
    return Document(doc_id=keep.doc_id, url=keep.url, title=keep.title, text=keep.text,
                    content_hash=keep.content_hash, fetched_at=keep.fetched_at, kind=keep.kind, urls=tuple(urls),
                    sections=keep.sections, meta=keep.meta)


def _url_rank(doc: Document) -> tuple:
    """Which URL of a duplicate group is kept: no query string first, then the shortest, then alphabetical."""
    return ("?" in doc.url, len(doc.url), doc.url, doc.doc_id)


def _fetched_url(doc: Document) -> str:
    """The URL the document was fetched at (extraction records it after the canonical one when they differ)."""
    return doc.urls[1] if len(doc.urls) > 1 else doc.url


def fix_canonical_collisions(documents: list[Document]) -> list[Document]:
    """A misconfigured SEO plugin can point every page's canonical link at the home page. Documents that share an
    id (same canonical URL) but not their text go back to the URL they were fetched at, so no page is lost."""
    groups: dict[str, list[int]] = {}
    for i, doc in enumerate(documents):
        if doc.kind != "lecturer":
            groups.setdefault(doc.doc_id, []).append(i)
    out = list(documents)
    for members in groups.values():
        if len(members) < 2 or len({documents[i].text for i in members}) < 2:
            continue
        owner = min(members, key=lambda i: (_fetched_url(documents[i]) != documents[i].url, _fetched_url(documents[i])))
        owner_shingles = _shingles(documents[owner].text)
        for i in members:
            doc = documents[i]
            if i == owner or doc.text == documents[owner].text:
                continue
            if _jaccard(_shingles(doc.text), owner_shingles) >= NEAR_DUP_JACCARD:
                continue
            fetched = _fetched_url(doc)
            key = "#curriculum" if doc.kind == "curriculum" else ""
            out[i] = Document(doc_id=doc_id_for(fetched, key), url=fetched, title=doc.title, text=doc.text,
                              content_hash=doc.content_hash, fetched_at=doc.fetched_at, kind=doc.kind,
                              urls=(fetched,), sections=doc.sections, meta=doc.meta)
    return out


def dedupe(documents: list[Document]) -> list[Document]:
    """Collapse documents with the same id, the same text, the same lecturer, or near-identical text
    (SimHash candidates confirmed by shingle Jaccard ≥ 0.8). The cleanest URL wins; all URLs are kept."""
    groups: dict[str, list[Document]] = {}
    order: list[str] = []

    def key_of(doc: Document) -> str:
        if doc.kind == "lecturer":
            return "lecturer:" + (person_key(doc.title) or re.sub(r"[^a-z]", "", doc.title.lower()))
        return "text:" + sha1_hex(doc.kind if doc.kind == "curriculum" else "", doc.text)

    by_id: dict[str, str] = {}
    for doc in documents:
        key = by_id.get(doc.doc_id) or key_of(doc)
        by_id[doc.doc_id] = key
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(doc)
    merged: list[Document] = []
    for key in order:
        docs = groups[key]
        if key.startswith("lecturer:"):
            best = max(docs, key=lambda d: (len(d.text), -len(d.url), d.url))
        else:
            best = min(docs, key=_url_rank)
        merged.append(_merge(best, [d for d in docs if d is not best]))

    # Near duplicates among pages and PDFs.
    candidates = [i for i, d in enumerate(merged) if d.kind in ("page", "pdf") and len(d.text.split()) >= _NEAR_DUP_MIN_WORDS]
    shingles = {i: _shingles(merged[i].text) for i in candidates}
    hashes = {i: simhash(shingles[i]) for i in candidates}
    parent = {i: i for i in candidates}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for band in range(4):
        buckets: dict[int, list[int]] = {}
        for i in candidates:
            buckets.setdefault((hashes[i] >> (16 * band)) & 0xFFFF, []).append(i)
        for members in buckets.values():
            for a_pos, a in enumerate(members):
                for b in members[a_pos + 1:]:
                    if find(a) != find(b) and _jaccard(shingles[a], shingles[b]) >= NEAR_DUP_JACCARD:
                        parent[find(b)] = find(a)
    clusters: dict[int, list[int]] = {}
    for i in candidates:
        clusters.setdefault(find(i), []).append(i)
    drop: set[int] = set()
    replace: dict[int, Document] = {}
    for members in clusters.values():
        if len(members) < 2:
            continue
        best = min(members, key=lambda i: _url_rank(merged[i]))
        replace[best] = _merge(merged[best], [merged[i] for i in members if i != best])
        drop.update(i for i in members if i != best)
    return [replace.get(i, d) for i, d in enumerate(merged) if i not in drop]


_ELLIPSIS = re.compile(r"\s*(?:\[\s*(?:…|\.\.\.)\s*\]|…|\.\.\.)\s*$")
_EXCERPT_MIN_WORDS = 8


def _rebuilt(doc: Document, sections: list[tuple[str, str]]) -> Document | None:
    new = make_document(doc.url, doc.title, sections, kind=doc.kind, fetched_at=doc.fetched_at)
    if new is None:
        return None
    return Document(doc_id=doc.doc_id, url=new.url, title=new.title, text=new.text, content_hash=new.content_hash,
                    fetched_at=new.fetched_at, kind=new.kind, urls=doc.urls, sections=new.sections, meta=doc.meta)


def drop_excerpts(documents: list[Document]) -> list[Document]:
    """Listing pages (home, news) repeat the first lines of the posts they link to. A line of page A is dropped
    when page B's title appears in A and B's own text contains the line (or, for a trimmed "…" excerpt, its
    start): B keeps the fact, A keeps its own text."""
    pages = [d for d in documents if d.kind == "page"]
    by_title: dict[str, list[Document]] = {}
    for doc in pages:
        if len(doc.title.split()) >= 3:
            by_title.setdefault(_line_key(doc.title), []).append(doc)
    if not by_title:
        return documents
    texts = {d.doc_id: _line_key(d.text.replace("\n", " ")) for d in pages}
    out: list[Document] = []
    for doc in documents:
        if doc.kind != "page":
            out.append(doc)
            continue
        owners = {o.doc_id for key in _doc_lines(doc) for o in by_title.get(key, ()) if o.doc_id != doc.doc_id}
        if not owners:
            out.append(doc)
            continue
        owner_text = " \u241e ".join(texts[o] for o in sorted(owners))
        sections = []
        touched = False
        for heading, body in doc.sections:
            kept = []
            for line in body.split("\n"):
                probe = _line_key(_ELLIPSIS.sub("", line))
                if len(probe.split()) >= _EXCERPT_MIN_WORDS and probe in owner_text:
                    touched = True
                    continue
                kept.append(line)
            sections.append((heading, "\n".join(kept)))
        if not touched:
            out.append(doc)
            continue
        new = _rebuilt(doc, sections)
        if new is not None:
            out.append(new)
    return out


_FACT_LIKE = re.compile(r"[\d@]")
_NOT_A_FACT = re.compile(r"©|copyright|hak cipta|all rights reserved|powered by|designed by|dikembangkan oleh",
                         re.IGNORECASE)
SITE_INFO_TITLE = "Informasi umum situs"


def site_info(raw: Mapping[str, tuple[Document, ...]], boiler: set[str]) -> Document | None:
    """Boilerplate lines are removed from every page, but the fact-like ones among them (an address, a phone
    number, an e-mail, office hours) are kept once, in one small document, so the site's contacts are not lost."""
    lines: dict[str, str] = {}
    home = ""
    for key in sorted(raw):
        for doc in raw[key]:
            if doc.kind not in _KINDS_CLEANED:
                continue
            if not home or (len(doc.url), doc.url) < (len(home), home):
                home = doc.url
            for heading, body in doc.sections:
                for line in [heading, *body.split("\n")]:
                    k = _line_key(line)
                    if (k in boiler and k not in lines and len(line.split()) >= 2 and _FACT_LIKE.search(line)
                            and not _NOT_A_FACT.search(line)):
                        lines[k] = line.strip()
    if not lines or not home:
        return None
    doc = make_document(home, SITE_INFO_TITLE, [(SITE_INFO_TITLE, "\n".join(lines.values()))], key="#site-info")
    return doc


def postprocess(raw: Mapping[str, tuple[Document, ...]]) -> list[Document]:
    """Raw extracts per page (keyed by normalised URL) → the site's final documents."""
    boiler = boilerplate_lines(raw)
    documents: list[Document] = []
    info = site_info(raw, boiler) if boiler else None
    if info is not None:
        documents.append(info)
    for key in sorted(raw):
        for doc in raw[key]:
            cleaned = _strip(doc, boiler)
            if cleaned is not None and cleaned.text.strip():
                documents.append(cleaned)
    return dedupe(drop_excerpts(fix_canonical_collisions(documents)))
