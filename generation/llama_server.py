"""``python -m generation.llama_server``: llama-cpp-python's OpenAI-compatible server (``python -m
llama_cpp.server``, same arguments) with the backend's CPU guard in force, so the server does not crash on a CPU
whose llama.cpp AMX kernel fails (:func:`generation.llama_backend.guard_cpu_extra_buffers`). Use it where
``LLM_BACKEND=openai`` points at a llama.cpp server on the same kind of machine."""

from __future__ import annotations

from generation.llama_backend import guard_cpu_extra_buffers


def main() -> None:
    from llama_cpp.server.__main__ import main as serve

    guard_cpu_extra_buffers()
    serve()  # type: ignore[no-untyped-call]  # llama_cpp.server's main has no annotations


if __name__ == "__main__":
    main()
