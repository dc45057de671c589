"""Chunker properties (hypothesis): every word covered in order, size bounds, overlap as configured, stable ids."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.models import Document
from sync_jobs.chunking import chunk_document, split_sentences
from sync_jobs.extract import make_document


def _doc(sections: list[tuple[str, str]]) -> Document:
    doc = make_document("http://prodi.example/page", "Judul", sections)
    assert doc is not None
    return doc


@st.composite
def documents(draw):
    """Sections of sentences made of unique words (w0, w1, …) so coverage and overlap are unambiguous."""
    counter = iter(range(10**6))
    sections = []
    for s in range(draw(st.integers(1, 5))):
        paragraphs = []
        for _ in range(draw(st.integers(1, 4))):
            sentences = []
            for _ in range(draw(st.integers(1, 12))):
                n = draw(st.integers(1, 60))
                words = [f"w{next(counter)}" for _ in range(n)]
                words[0] = words[0].capitalize()
                sentences.append(" ".join(words) + ".")
            paragraphs.append(" ".join(sentences))
        heading = draw(st.sampled_from(["", f"Bagian {s}", " ".join(f"h{s}x{i}" for i in range(30))]))
        sections.append((heading, "\n".join(paragraphs)))
    return _doc(sections)


def _body_words(chunk_text: str, heading: str) -> list[str]:
    words = chunk_text.split()
    head = heading.split()
    if head and words[: len(head)] == head:
        words = words[len(head):]
    return words


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), target=st.integers(20, 250), extra=st.integers(0, 150),
       overlap=st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5]))
def test_chunks_cover_text_respect_bounds_and_overlap(doc: Document, target: int, extra: int, overlap: float) -> None:
    max_tokens = target + extra
    chunks = chunk_document(doc, target_tokens=target, overlap=overlap, max_tokens=max_tokens)
    overlap_tokens = int(round(overlap * target))
    assert chunks, "a document with text has chunks"
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text.strip(), "no empty chunk"
        assert len(chunk.text.split()) <= max_tokens, "no chunk over the maximum"
    # Every word of every section body is covered, in order, and consecutive chunks of one section overlap by at
    # most the configured number of words (exactly a suffix of the previous chunk's body).
    all_text = " ".join(c.text for c in chunks).split()
    position = {w: i for i, w in enumerate(all_text)}
    for _heading, body in doc.sections:
        for word in body.split():
            assert word in position, f"word {word} lost"
    covered: list[str] = []
    prev_body: list[str] = []
    for chunk in chunks:
        own = _body_words(chunk.text, chunk.section)
        seen = set(prev_body)
        k = 0
        while k < len(own) and own[k] in seen:
            k += 1
        assert k <= overlap_tokens, "overlap larger than configured"
        assert own[:k] == prev_body[len(prev_body) - k:], "overlap is a suffix of the previous chunk"
        covered.extend(w for w in own[k:] if w.startswith(("w", "W")))
        prev_body = own
    expected = [w for _, b in doc.sections for w in b.split()]
    assert [w.rstrip(".") for w in covered] == [w.rstrip(".") for w in expected]


@settings(max_examples=40, deadline=None)
@given(doc=documents())
def test_continuation_chunks_repeat_their_heading_and_ids_are_stable(doc: Document) -> None:
    first = chunk_document(doc, target_tokens=60, overlap=0.2, max_tokens=90)
    again = chunk_document(doc, target_tokens=60, overlap=0.2, max_tokens=90)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert len({c.chunk_id for c in first}) == len(first)
    for chunk in first:
        if chunk.section:
            assert chunk.text.startswith(" ".join(chunk.section.split())), chunk.text[:80]


def test_changed_section_changes_only_its_chunks() -> None:
    long = " ".join(f"Kalimat ke-{i} menjelaskan kurikulum dengan rinci." for i in range(60))
    before = _doc([("Visi", "Menjadi prodi unggul."), ("Kurikulum", long), ("Kontak", "Email prodi@example.ac.id.")])
    after = _doc([("Visi", "Menjadi prodi unggul."), ("Kurikulum", long), ("Kontak", "Email baru@example.ac.id.")])
    a = {c.chunk_id for c in chunk_document(before, target_tokens=80, max_tokens=120)}
    b = {c.chunk_id for c in chunk_document(after, target_tokens=80, max_tokens=120)}
    assert len(a - b) == 1 and len(b - a) == 1


def test_sentences_keep_academic_titles_together() -> None:
    text = "Ketua prodi adalah Dr. Budi Santoso, M.Kom. yang ahli AI. Kantor di Jl. Gajayana No. 50 Malang. Selesai!"
    assert split_sentences(text) == [
        "Ketua prodi adalah Dr. Budi Santoso, M.Kom. yang ahli AI.",
        "Kantor di Jl. Gajayana No. 50 Malang.",
        "Selesai!",
    ]


def test_chunks_end_at_sentence_boundaries_when_sentences_fit() -> None:
    body = " ".join(f"Mahasiswa semester {i} wajib mengisi KRS tepat waktu." for i in range(40))
    for chunk in chunk_document(_doc([("KRS", body)]), target_tokens=50, overlap=0.2, max_tokens=70):
        assert chunk.text.endswith("."), chunk.text[-40:]


def test_invalid_sizes_are_rejected() -> None:
    doc = _doc([("", "Teks pendek.")])
    with pytest.raises(ValueError, match="target_tokens"):
        chunk_document(doc, target_tokens=100, max_tokens=50)
    with pytest.raises(ValueError, match="overlap"):
        chunk_document(doc, overlap=1.5)


def test_consecutive_chunks_of_a_section_share_the_configured_overlap() -> None:
    body = " ".join(f"Kalimat nomor {i} berisi tujuh kata saja." for i in range(80))
    chunks = chunk_document(_doc([("Panduan", body)]), target_tokens=50, overlap=0.2, max_tokens=70)
    assert len(chunks) > 3
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        prev_words, next_words = prev.text.split()[1:], nxt.text.split()[1:]
        shared = next(k for k in range(min(len(prev_words), 10), -1, -1) if prev_words[len(prev_words) - k:] == next_words[:k])
        assert 1 <= shared <= 10
