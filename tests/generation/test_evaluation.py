"""generation.evaluation: outcomes (correct / wrong / abstained, refused / answered) and abstention P/R on
hand-made item results. No embedder: the embedding metrics are None and everything else is exact."""

from __future__ import annotations

import numpy as np
import pytest

from generation.evaluation import ItemResult, outcome, outcome_counts, summarize


def _item(id_: str, *, answerable: bool = True, answer: str = "", abstained: bool = False, golds=(),
          gold_match: str = "all", sources=(), relevant=()) -> ItemResult:
    return ItemResult(id=id_, query=f"pertanyaan {id_}?", answerable=answerable, answer=answer, abstained=abstained,
                      sources=list(sources), stop_reason="ABSTAIN_LOW_RETRIEVAL" if abstained else "STOP_CONFIDENT",
                      latency_ms=100.0, golds=list(golds), gold_match=gold_match, relevant=list(relevant))


ABSTAIN = "Maaf, saya tidak menemukan jawabannya di situs program studi."


def test_answerable_outcomes():
    assert outcome(_item("a", answer="Ketua prodi adalah Supriyono, M.Kom. [1]", golds=["Supriyono"])) == "correct"
    assert outcome(_item("b", answer="Sekretaris prodi adalah Shoffin. [1]", golds=["Supriyono"])) == "wrong"
    assert outcome(_item("c", answer=ABSTAIN, abstained=True, golds=["Supriyono"])) == "abstained"
    assert outcome(_item("d", answer="Sesuatu. [1]")) == "unscored"  # answerable without a gold span


def test_gold_match_all_needs_every_span_any_needs_one():
    partial = dict(answer="Komunitas: MOCAP dan UINUX. [1]", golds=["MOCAP", "UINUX", "ONTAKI"])
    assert outcome(_item("all", **partial)) == "wrong"
    assert outcome(_item("any", gold_match="any", **partial)) == "correct"
    with pytest.raises(ValueError, match="all, any"):
        outcome(_item("bad", gold_match="some", **partial))


def test_span_must_be_a_whole_token_sequence_and_citations_do_not_count():
    assert outcome(_item("a", answer="Ada 1440 SKS [1]", golds=["144"])) == "wrong"
    assert outcome(_item("b", answer="Lihat [1]", golds=["1"])) == "wrong"


def test_unanswerable_outcomes():
    assert outcome(_item("u1", answerable=False, answer=ABSTAIN, abstained=True)) == "refused"
    assert outcome(_item("u2", answerable=False, answer="UKT Rp 5.000.000. [1]")) == "answered"


def _hand_set() -> list[ItemResult]:
    return [
        _item("a1", answer="Supriyono, M.Kom. [1]", golds=["Supriyono"]),  # correct
        _item("a2", answer="144 SKS. [1]", golds=["144 SKS"]),  # correct
        _item("a3", answer="Gedung Sains. [1]", golds=["Laboratorium"]),  # wrong
        _item("a4", answer=ABSTAIN, abstained=True, golds=["IF-701"]),  # abstained
        _item("u1", answerable=False, answer=ABSTAIN, abstained=True),  # refused
        _item("u2", answerable=False, answer=ABSTAIN, abstained=True),  # refused
        _item("u3", answerable=False, answer="Kata sandi Wi-Fi ada di lab. [1]"),  # answered
    ]


def test_outcome_counts_include_zeros():
    counts = outcome_counts(_hand_set())
    assert counts == {"correct": 2, "wrong": 1, "abstained": 1, "unscored": 0, "refused": 2, "answered": 1}


def test_summarize_outcomes_and_abstention_precision_recall():
    m = summarize(_hand_set(), None)
    assert (m["answerable"], m["unanswerable"]) == (4, 3)
    assert (m["correct"], m["wrong"], m["abstained"], m["refused"], m["answered"]) == (2, 1, 1, 2, 1)
    assert m["correct_rate"] == 0.5
    # 3 abstentions, 2 of them on unanswerable items; 3 unanswerable items, 2 refused
    assert m["abstention_precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["abstention_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["abstained_on_answerable"] == 1
    assert m["semantic_similarity"] is None and m["faithfulness"] is None  # no embedder


def test_abstention_precision_and_recall_edges():
    never = [_item("a", answer="Supriyono [1]", golds=["Supriyono"]), _item("u", answerable=False, answer="x [1]")]
    m = summarize(never, None)
    assert m["abstention_precision"] is None  # no abstention at all: precision undefined
    assert m["abstention_recall"] == 0.0
    only_answerable = [_item("a", answer=ABSTAIN, abstained=True, golds=["Supriyono"])]
    m = summarize(only_answerable, None)
    assert m["abstention_precision"] == 0.0
    assert m["abstention_recall"] is None  # no unanswerable item: recall undefined
    assert m["correct_rate"] == 0.0


def test_cited_relevant_rate_compares_url_paths():
    items = [
        _item("a", answer="Supriyono [1]", golds=["Supriyono"], sources=[{"url": "http://127.0.0.1:8123/supriyono-m-kom/"}],
              relevant=["/supriyono-m-kom"]),
        _item("b", answer="Salah [1]", golds=["X"], sources=[{"url": "http://127.0.0.1:8123/curriculum/"}],
              relevant=["/accreditation"]),
        _item("c", answer="Tanpa label [1]", golds=["Y"], sources=[{"url": "http://127.0.0.1:8123/curriculum/"}]),
    ]
    m = summarize(items, None)
    assert m["cited_relevant_n"] == 2  # "c" has no relevance labels
    assert m["cited_relevant_rate"] == 0.5


class _BagOfWords:
    """A deterministic stand-in embedder: hashed bag of words, unit length."""

    dim = 64

    def embed(self, texts, kind="passage"):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, hash(w) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def test_faithfulness_with_context_leaves_out_answers_without_context():
    ctx = "Ketua Program Studi Teknik Informatika adalah Supriyono, M.Kom."
    with_ctx = _item("a", answer=f"{ctx} [1]", golds=["Supriyono"])
    with_ctx.context = [ctx]
    facts = _item("b", answer="IF-501 Pembelajaran Mesin (3 SKS)", golds=["IF-501"])  # a facts answer: no context
    m = summarize([with_ctx, facts], _BagOfWords())
    assert m["faithfulness_n"] == 1
    assert m["faithfulness_with_context"] == 1.0
    assert m["faithfulness"] == 0.5  # the old metric counts the facts answer as unsupported


def test_degenerate_check_skips_what_the_reply_quotes_from_its_sources():
    # The guard checks what the pipeline wrote; a source sentence quoted verbatim (a list that repeats "musim", an
    # English title, a "<" in "(<2%)") is the page's text, not a degenerate reply.
    quoted = "Daerah beriklim subtropis memiliki 4 musim yaitu musim semi, musim panas, musim gugur, dan musim dingin."
    chunk = "Iklim di sana beragam. " + quoted + " Curah hujan tinggi."
    ok = _item("q", answer=f"4 musim.\n{quoted} [1]", golds=["4 musim"])
    ok.context = [chunk]
    looping = _item("l", answer="musim musim musim musim musim musim [1]", golds=["4 musim"])
    looping.context = [chunk]
    m = summarize([ok, looping], None)
    assert m["degenerate_n"] == 1  # the loop the model wrote still counts
    # without the context the checker cannot tell a quote from a loop, and flags the quote too
    ok.context = []
    assert summarize([ok], None)["degenerate_n"] == 1



def test_a_quote_keeps_its_source_markup_out_of_the_degeneration_count():
    # a Wikipedia sentence with a leftover tag, quoted after the reply's own lead: the tag is the page's
    source = 'Kesultanan Utsmaniyah (Ottoman Turkish: Devlet-i <u data-x="1">s</u>mâniyye;[6]) berdiri pada 1299.'
    item = _item("q", answer=f"Kesultanan berdiri pada 1299.\n{source} [1]", golds=["1299"])
    item.context = ["Sejarah. " + source.replace(" berdiri", "  berdiri")]
    assert summarize([item], None)["degenerate_n"] == 0
