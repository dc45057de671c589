"""OpenAI-compatible HTTP backend (llama.cpp server, vLLM, …): ``LLM_BACKEND=openai`` with ``LLM_ENDPOINT``.

Completion-format prompts go to ``/completions``, chat messages to ``/chat/completions``; both at temperature 0 with
top log-probabilities, from which the per-token entropy is computed the same way as in-process (eq. 9–10 of docs/answers.md, "Token entropy and DRAGIN rounds").
Blocking (urllib); the LLM pool runs it in its worker thread. Every request has a timeout.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from generation.entropy import TOP_K, entropy_from_logprobs
from generation.types import Generation

__all__ = ["OpenAIConfig", "OpenAIGenerator", "OpenAIBackendError"]

logger = logging.getLogger(__name__)


class OpenAIBackendError(RuntimeError):
    """The inference server could not be reached or answered with an error; the message says what to check."""


@dataclass(frozen=True, slots=True)
class OpenAIConfig:
    endpoint: str  # e.g. http://127.0.0.1:8000/v1
    api_key: str | None = None
    model: str = "default"
    prompt_format: str = "completion"  # completion | chat ("auto" means completion: a server hides its template)
    timeout_s: float = 60.0
    n_ctx: int = 2048


class OpenAIGenerator:
    """A ``Generator`` that calls an OpenAI-compatible server."""

    def __init__(self, config: OpenAIConfig) -> None:
        fmt = "completion" if config.prompt_format == "auto" else config.prompt_format
        if fmt not in ("completion", "chat"):
            raise ValueError(f"unknown prompt format {config.prompt_format!r}; choose one of auto, chat, completion")
        self.config = config
        self.prompt_format = fmt
        self.n_ctx = config.n_ctx
        self.name = f"openai:{config.endpoint}"
        self._base = config.endpoint.rstrip("/")

    def _post(self, path: str, body: dict[str, object]) -> dict[str, object]:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        req = urllib.request.Request(self._base + path, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.config.timeout_s) as resp:  # noqa: S310 (configured URL)
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", errors="replace")[:300]
            raise OpenAIBackendError(
                f"LLM_ENDPOINT {self._base} answered {error.code} on {path}: {detail}. Check the model name and "
                "that the server supports this API."
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise OpenAIBackendError(
                f"cannot reach LLM_ENDPOINT {self._base} ({error}); start the server (e.g. "
                "`python -m llama_cpp.server --model <gguf>`) or fix LLM_ENDPOINT."
            ) from None

    def generate(
        self,
        prompt: str | Sequence[dict[str, str]],
        *,
        max_tokens: int,
        stop: Sequence[str] = (),
        should_stop: Callable[[], bool] | None = None,
    ) -> Generation:
        if isinstance(prompt, str) and self.prompt_format == "chat":
            prompt = [{"role": "user", "content": prompt}]
        if isinstance(prompt, str):
            body: dict[str, object] = {
                "model": self.config.model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0.0,
                "top_p": 1.0, "logprobs": TOP_K, "seed": 0,
            }
            if stop:
                body["stop"] = list(stop)[:4]
            data = self._post("/completions", body)
            choice = data["choices"][0]  # type: ignore[index]
            text = choice.get("text", "")
            entropies = _entropies_completion(choice.get("logprobs"))
        else:
            body = {
                "model": self.config.model, "messages": list(prompt), "max_tokens": max_tokens, "temperature": 0.0,
                "top_p": 1.0, "logprobs": True, "top_logprobs": TOP_K, "seed": 0,
            }
            if stop:
                body["stop"] = list(stop)[:4]
            data = self._post("/chat/completions", body)
            choice = data["choices"][0]  # type: ignore[index]
            text = (choice.get("message") or {}).get("content") or ""
            entropies = _entropies_chat(choice.get("logprobs"))
        usage = data.get("usage") or {}
        return Generation(
            text=text.strip(),
            entropies=tuple(entropies),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),  # type: ignore[union-attr]
            completion_tokens=int(usage.get("completion_tokens", len(entropies))),  # type: ignore[union-attr]
            finish_reason=str(choice.get("finish_reason") or ""),
        )


def _entropies_completion(logprobs: object) -> list[float]:
    if not isinstance(logprobs, dict):
        return []
    out = []
    for top in logprobs.get("top_logprobs") or []:
        if isinstance(top, dict) and top:
            out.append(entropy_from_logprobs([float(v) for v in top.values()]))
    return out


def _entropies_chat(logprobs: object) -> list[float]:
    if not isinstance(logprobs, dict):
        return []
    out = []
    for item in logprobs.get("content") or []:
        tops = item.get("top_logprobs") or []
        if tops:
            out.append(entropy_from_logprobs([float(t["logprob"]) for t in tops]))
    return out
