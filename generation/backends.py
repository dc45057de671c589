"""The LLM backends' registry (``LLM_BACKEND``): built-in and third-party backends register the same way.

A backend is a factory that takes :class:`BackendOptions` (the LLM_* settings as plain values; ``bot.wiring``
fills them) and returns a :class:`generation.types.Generator`::

    from generation.backends import BackendOptions, register_backend

    @register_backend("my-server")
    def my_server(options: BackendOptions) -> MyGenerator:
        return MyGenerator(options.endpoint, timeout=options.timeout_s)

``LLM_BACKEND=my-server`` then selects it (Settings check the name against this registry). A package outside this
repository names its module or factory in the entry point group ``prodi_bot.backends`` (see
``storage/registry.py``). The built-ins, ``llama-cpp`` (``generation/llama_backend.py``) and ``openai``
(``generation/openai_backend.py``), register themselves with the decorator in their own modules.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from generation.types import Generation, Generator
from storage.registry import Registry, UnknownPlugin

__all__ = ["BACKENDS", "BackendFactory", "BackendOptions", "UnknownPlugin", "as_generator", "build_backend",
           "register_backend"]


@dataclass(frozen=True, slots=True)
class BackendOptions:
    """What every backend factory receives: the LLM_* settings as plain values. A backend uses what it needs."""

    model_path: Path | None = None  # LLM_MODEL_PATH (None: the backend's own default model)
    models_dir: Path = Path("data/models")  # DATA_DIR/models: where a backend may keep model files
    endpoint: str = ""  # LLM_ENDPOINT
    api_key: str | None = None  # LLM_API_KEY
    prompt_format: str = "auto"  # LLM_PROMPT_FORMAT: auto | chat | completion
    timeout_s: float = 60.0  # LLM_TIMEOUT_SECONDS
    n_ctx: int = 2048  # LLM_N_CTX
    threads: int | None = None  # LLM_THREADS
    kv_reuse: bool = False  # LLM_KV_REUSE


BackendFactory = Callable[[BackendOptions], Generator]

BACKENDS: Registry[BackendFactory] = Registry(
    "LLM backend", setting="LLM_BACKEND", group="prodi_bot.backends",
    decorator="generation.backends.register_backend", builtins=("generation.llama_backend", "generation.openai_backend"),
)
register_backend = BACKENDS.register


def build_backend(name: str, options: BackendOptions) -> Generator:
    """One generator of the backend registered as ``name`` (UnknownPlugin, listing the names, when none is)."""
    return as_generator(BACKENDS.get(name)(options))


def _accepts_should_stop(generate: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(generate).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume the protocol's
        return True
    return any(p.name == "should_stop" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def as_generator(generator: Any) -> Generator:
    """``generator`` with every member the ``Generator`` protocol declares: itself when it has them all (the
    built-ins, a backend written to the protocol), else an adapter around one written against the older protocol
    (``generate(prompt, *, max_tokens, stop)`` only, as many test doubles are): its class name as ``name``, the
    completion format, no early stop, nothing to close. The one place that looks for members; callers (the pool,
    the pipeline) use them as declared."""
    if (isinstance(generator, _Completed) or (
            all(hasattr(generator, member) for member in ("name", "prompt_format", "close"))
            and _accepts_should_stop(generator.generate))):
        return cast(Generator, generator)  # an untyped third-party backend with every member of the protocol
    return _Completed(generator)


class _Completed:
    """A generator with the members its backend did not define filled in (see :func:`as_generator`)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "name", "") or type(inner).__name__)
        self.prompt_format = str(getattr(inner, "prompt_format", "") or "completion")
        self._close = getattr(inner, "close", None)
        self._accepts_should_stop = _accepts_should_stop(inner.generate)

    def generate(self, prompt: str | Sequence[dict[str, str]], *, max_tokens: int, stop: Sequence[str] = (),
                 should_stop: Callable[[], bool] | None = None) -> Generation:
        # ``inner`` is an untyped third-party backend; by the protocol its generate returns a Generation
        if self._accepts_should_stop:
            return cast(Generation, self.inner.generate(prompt, max_tokens=max_tokens, stop=stop,
                                                        should_stop=should_stop))
        return cast(Generation, self.inner.generate(prompt, max_tokens=max_tokens, stop=stop))

    def close(self) -> None:
        if callable(self._close):
            self._close()

    def __getattr__(self, name: str) -> Any:  # anything else the backend has (n_ctx, metadata, …)
        if name == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
