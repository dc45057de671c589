"""The LLM worker pool: queue positions, timeout, cancellation, errors, close. Real threads, no sleeps asserted."""

from __future__ import annotations

import asyncio
import threading

import pytest

from generation.pool import LLMPool, LLMTimeout, PoolClosed
from generation.types import Generation


class GatedGenerator:
    """Generates one token per ``step`` release, honouring ``should_stop`` like the llama backend."""

    def __init__(self) -> None:
        self.gate = threading.Semaphore(0)
        self.started = threading.Event()
        self.prompts: list[str] = []
        self.stopped_early: list[str] = []

    def generate(self, prompt, *, max_tokens, stop=(), should_stop=None):
        self.prompts.append(prompt)
        self.started.set()
        out = []
        for _ in range(max_tokens):
            while not self.gate.acquire(timeout=0.05):
                if should_stop is not None and should_stop():
                    self.stopped_early.append(prompt)
                    return Generation(" ".join(out), finish_reason="cancelled")
            out.append("x")
        return Generation(" ".join(out), entropies=(0.1,) * len(out), completion_tokens=len(out), finish_reason="length")


async def _wait_for(predicate) -> None:
    for _ in range(400):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_waiting_requests_learn_their_position_and_run_in_order():
    gen = GatedGenerator()
    pool = LLMPool(lambda: gen, workers=1, timeout_s=30)
    try:
        first = asyncio.create_task(pool.submit("a", max_tokens=1))
        await asyncio.get_running_loop().run_in_executor(None, gen.started.wait, 10)
        positions: list[int] = []

        async def on_position(n: int) -> None:
            positions.append(n)

        second = asyncio.create_task(pool.submit("b", max_tokens=1, on_position=on_position))
        await _wait_for(lambda: pool.queue_depth == 1 and positions)
        assert positions == [1]
        gen.gate.release()
        gen.gate.release()
        assert (await first).text == "x"
        assert (await second).text == "x"
        assert gen.prompts == ["a", "b"]
        assert pool.queue_depth == 0
    finally:
        pool.close()


async def test_cancelled_waiting_request_leaves_the_queue_and_running_one_stops():
    gen = GatedGenerator()
    pool = LLMPool(lambda: gen, workers=1, timeout_s=30)
    try:
        running = asyncio.create_task(pool.submit("running", max_tokens=50))
        await asyncio.get_running_loop().run_in_executor(None, gen.started.wait, 10)
        waiting = asyncio.create_task(pool.submit("waiting", max_tokens=1))
        await _wait_for(lambda: pool.queue_depth == 1)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert pool.queue_depth == 0
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        await _wait_for(lambda: gen.stopped_early == ["running"])
        # the worker is free again and never ran the cancelled request
        gen.gate.release()
        assert (await pool.submit("next", max_tokens=1)).text == "x"
        assert "waiting" not in gen.prompts
    finally:
        pool.close()


@pytest.mark.faults
async def test_timeout_raises_and_frees_the_worker():
    gen = GatedGenerator()
    pool = LLMPool(lambda: gen, workers=1, timeout_s=0.3)
    try:
        with pytest.raises(LLMTimeout, match="LLM_TIMEOUT_SECONDS"):
            await pool.submit("slow", max_tokens=5)
        await _wait_for(lambda: gen.stopped_early == ["slow"])
    finally:
        pool.close()


async def test_load_error_reaches_the_caller_and_closed_pool_refuses():
    def broken():
        raise FileNotFoundError("LLM_MODEL_PATH points to /nope.gguf, which does not exist")

    pool = LLMPool(broken, workers=1, timeout_s=5)
    with pytest.raises(FileNotFoundError, match="LLM_MODEL_PATH"):
        await pool.submit("q", max_tokens=1)
    pool.close()
    with pytest.raises(PoolClosed):
        await pool.submit("q", max_tokens=1)


async def test_two_workers_serve_in_parallel():
    gens = [GatedGenerator(), GatedGenerator()]
    it = iter(gens)
    pool = LLMPool(lambda: next(it), workers=2, timeout_s=30)
    try:
        a = asyncio.create_task(pool.submit("a", max_tokens=1))
        b = asyncio.create_task(pool.submit("b", max_tokens=1))
        loop = asyncio.get_running_loop()
        for g in gens:
            await loop.run_in_executor(None, g.started.wait, 10)
        assert pool.queue_depth == 0 and pool.busy == 2
        for g in gens:
            g.gate.release()
        assert {(await a).text, (await b).text} == {"x"}
    finally:
        pool.close()


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="LLM_WORKERS"):
        LLMPool(lambda: None, workers=0)


async def test_a_lazy_pool_loads_its_model_on_first_use_only():
    from generation.pool import LLMPool
    from tests.auxil.fake_generator import FakeGenerator

    built = []

    def factory():
        built.append(1)
        return FakeGenerator(default="ok")

    pool = LLMPool(factory, workers=1, timeout_s=10, lazy=True)
    try:
        assert built == []  # nothing loaded at construction
        out = await pool.submit("halo", max_tokens=4)
        assert out.text == "ok" and built == [1]
    finally:
        pool.close()
    closed = LLMPool(factory, workers=1, timeout_s=10, lazy=True)
    closed.close()
    with pytest.raises(Exception, match="closed"):
        closed.wait_ready(1)
    assert built == [1]
