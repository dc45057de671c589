"""Optional cross-encoder reranker (sentence-transformers), used when RERANKER_MODEL_PATH is set (docs/answers.md, "Reranker")."""

from __future__ import annotations

import threading
from collections.abc import Sequence

__all__ = ["CrossEncoderReranker"]


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a local cross-encoder; callable as ``reranker(query, passages)``."""

    def __init__(self, model_path: str, max_length: int = 512) -> None:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise ValueError(
                "RERANKER_MODEL_PATH needs the 'st' extra: pip install -e '.[st]' (torch==2.13.0 first)"
            ) from None
        try:
            self._model = CrossEncoder(model_path, device="cpu", max_length=max_length)
        except OSError as error:
            raise ValueError(
                f"RERANKER_MODEL_PATH={model_path!r} could not be loaded ({error}); point it at a local "
                "cross-encoder directory or unset it to search without a reranker"
            ) from None
        self._lock = threading.Lock()
        self.name = model_path

    def __call__(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            scores = self._model.predict([(query, p) for p in passages], show_progress_bar=False)
        return [float(s) for s in scores]
