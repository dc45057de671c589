"""OpenAI-compatible HTTP backend (llama.cpp server, vLLM, …): ``LLM_BACKEND=openai`` with ``LLM_ENDPOINT``.

Completion-format prompts go to ``/completions``, chat messages to ``/chat/completions``; both at temperature 0 with
top log-probabilities, from which the per-token entropy is computed the same way as in-process (eq. 9–10 of docs/answers.md, "Token entropy and DRAGIN rounds").
Blocking (urllib); the LLM pool runs it in its worker thread. Every request has a timeout.
Every failure is an ``OpenAIBackendError`` (a ``GenerationError``): the server cannot be reached, answers an error
status, or answers 200 with a body that is not JSON or lacks ``choices``/``text``/``message.content`` (the original
exception is its ``__cause__``; its message never quotes that body, which may hold the student's words).
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from generation.backends import BackendOptions, register_backend
from generation.entropy import TOP_K, entropy_from_logprobs
from generation.errors import GenerationError
from generation.types import Generation

__all__ = ["OpenAIConfig", "OpenAIGenerator", "OpenAIBackendError", "openai_backend"]

logger = logging.getLogger(__name__)


# what reading a malformed reply raises: a missing key or index, a wrong type, a value that is not a number
_MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)


class OpenAIBackendError(GenerationError, RuntimeError):
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
                raw, status = resp.read(), resp.status
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", errors="replace")[:300]
            raise OpenAIBackendError(
                f"LLM_ENDPOINT {self._base} answered {error.code} on {path}: {detail}. Check the model name and "
                "that the server supports this API."
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise OpenAIBackendError(
                f"cannot reach LLM_ENDPOINT {self._base} ({error}); start the server (e.g. "
                "`python -m generation.llama_server --model <gguf>`) or fix LLM_ENDPOINT."
            ) from None
        try:
            return cast(dict[str, object], json.loads(raw.decode("utf-8")))  # the server's JSON body
        except ValueError as error:  # JSONDecodeError, UnicodeDecodeError; the body itself stays out of the message
            raise self._malformed(path, f"a body that is not JSON ({len(raw)} bytes)", error, status) from error

    def _malformed(self, path: str, what: str, error: BaseException, status: int = 200) -> OpenAIBackendError:
        return OpenAIBackendError(
            f"LLM_ENDPOINT {self._base} answered {status} on {path} with {what} ({type(error).__name__}); check "
            "that it is an OpenAI-compatible server and that LLM_PROMPT_FORMAT matches the API it serves."
        )

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
            path = "/completions"
            data = self._post(path, body)
        else:
            body = {
                "model": self.config.model, "messages": list(prompt), "max_tokens": max_tokens, "temperature": 0.0,
                "top_p": 1.0, "logprobs": True, "top_logprobs": TOP_K, "seed": 0,
            }
            if stop:
                body["stop"] = list(stop)[:4]
            path = "/chat/completions"
            data = self._post(path, body)
        try:
            return _read_reply(data, chat=path == "/chat/completions")
        except _MALFORMED as error:
            raise self._malformed(path, "a reply that is not an OpenAI-style response", error) from error

    def close(self) -> None:
        """Nothing to free: every request opens (and closes) its own connection."""


@register_backend("openai")
def openai_backend(options: BackendOptions) -> OpenAIGenerator:
    """``LLM_BACKEND=openai``: an OpenAI-compatible server at LLM_ENDPOINT (llama.cpp server, vLLM, …)."""
    return OpenAIGenerator(OpenAIConfig(endpoint=options.endpoint, api_key=options.api_key,
                                        prompt_format=options.prompt_format, timeout_s=options.timeout_s,
                                        n_ctx=options.n_ctx))


def _read_reply(data: object, *, chat: bool) -> Generation:
    """The Generation in a decoded reply; KeyError, IndexError, TypeError, ValueError or AttributeError when it does
    not have the shape of the API (no ``choices``, no ``text``, no ``message.content``, a count that is no number)."""
    choice = data["choices"][0]  # type: ignore[index]
    if chat:
        content = choice["message"]["content"]  # present (null when the model said nothing)
        text = content or ""
        entropies = _entropies_chat(choice.get("logprobs"))
    else:
        text = choice["text"]
        entropies = _entropies_completion(choice.get("logprobs"))
    if not isinstance(text, str):
        raise TypeError(f"the reply's text is a {type(text).__name__}, not a string")
    usage = data.get("usage") or {}  # type: ignore[attr-defined]
    return Generation(
        text=text.strip(),
        entropies=tuple(entropies),
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", len(entropies))),
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
