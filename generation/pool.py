"""The LLM worker pool: model instances live in dedicated threads, requests wait in one FIFO queue.

A waiting caller learns its position; each request has a timeout; a cancelled waiting request leaves the queue and a
running one stops at its next token. The event loop never blocks on the model.

Errors: whatever a backend's ``generate`` raises that is not already one of the project's errors (a ``KeyError``
from a surprising reply, say) reaches the caller as a ``GenerationError`` with the original as ``__cause__``, so
callers catch one type. A model that could not load is re-raised as the factory raised it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from generation.backends import as_generator
from generation.errors import GenerationError
from generation.types import Generation, Generator
from storage.errors import ProdiBotError

__all__ = ["LLMPool", "LLMTimeout", "PoolClosed"]

logger = logging.getLogger(__name__)


class LLMTimeout(GenerationError, TimeoutError):
    """A generation did not finish within the pool's timeout (LLM_TIMEOUT_SECONDS)."""


class PoolClosed(GenerationError, RuntimeError):
    """The pool was closed; no more requests are accepted."""


@dataclass(eq=False)
class _Job:
    prompt: str | Sequence[dict[str, str]]
    max_tokens: int
    stop: tuple[str, ...]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Generation]
    cancel: threading.Event = field(default_factory=threading.Event)
    position_changed: asyncio.Event | None = None


class LLMPool:
    """Owns ``workers`` generators built by ``factory`` (each in its own thread) and a bounded FIFO queue. Each
    generator is taken through ``generation.backends.as_generator``, so the pool (and ``ready()``'s callers) use
    the ``Generator`` protocol's members as declared."""

    def __init__(self, factory: Callable[[], Generator], workers: int = 1, timeout_s: float = 60, *,
                 lazy: bool = False) -> None:
        """``lazy``: load the models on the first ``ready``/``submit`` instead of at once (the reader answers
        without the LLM, so a bot with ``ANSWERER=reader`` does not spend memory on it until something asks)."""
        if workers < 1:
            raise ValueError("workers must be at least 1 (LLM_WORKERS)")
        self._factory = factory
        self._timeout = timeout_s
        self._queue: deque[_Job] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._running = 0
        self._threads: list[threading.Thread] = []
        self._generators: list[Generator] = []
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._n_workers = workers
        self.generator: Generator | None = None  # the first worker's generator (prompt format, name, n_ctx)
        if not lazy:
            self._start()

    def _start(self) -> None:
        """Start the workers (each loads its model), once."""
        with self._cond:
            if self._threads or self._closed:
                return
            for i in range(self._n_workers):
                t = threading.Thread(target=self._worker, name=f"llm-worker-{i}", daemon=True)
                self._threads.append(t)
                t.start()

    # -- public ------------------------------------------------------------------------------------------------
    @property
    def queue_depth(self) -> int:
        """Requests waiting for a worker (not counting the ones being generated)."""
        with self._cond:
            return len(self._queue)

    @property
    def busy(self) -> int:
        with self._cond:
            return self._running

    def wait_ready(self, timeout: float | None = None) -> Generator:
        """Block until the first model is loaded (re-raising a load error); returns that generator."""
        self._start()
        if self._closed and not self._threads:
            raise PoolClosed("the LLM pool is closed")
        self._ready.wait(timeout)
        if self._startup_error is not None:
            raise self._startup_error
        if self.generator is None:
            raise LLMTimeout("the model did not load in time")
        return self.generator

    async def ready(self) -> Generator:
        return await asyncio.get_running_loop().run_in_executor(None, self.wait_ready, self._timeout * 5)

    async def submit(
        self,
        prompt: str | Sequence[dict[str, str]],
        *,
        max_tokens: int,
        stop: Sequence[str] = (),
        on_position: Callable[[int], Awaitable[None]] | None = None,
    ) -> Generation:
        """Queue one generation and await it. ``on_position(n)`` is awaited with the 1-based queue position when
        the request has to wait (and again when it moves up)."""
        self._start()
        loop = asyncio.get_running_loop()
        job = _Job(prompt, max_tokens, tuple(stop), loop, loop.create_future())
        with self._cond:
            if self._closed:
                raise PoolClosed("the LLM pool is closed")
            if self._startup_error is not None:
                raise self._startup_error
            must_wait = self._running + len(self._queue) >= self._n_workers
            self._queue.append(job)
            self._cond.notify()
        reporter: asyncio.Task[None] | None = None
        if on_position is not None and must_wait:
            reporter = asyncio.create_task(self._report_positions(job, on_position))
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), timeout=self._timeout)
        except TimeoutError:
            self._abandon(job)
            raise LLMTimeout(
                f"the model did not answer within {self._timeout:.0f} s (LLM_TIMEOUT_SECONDS); try again later"
            ) from None
        except asyncio.CancelledError:
            self._abandon(job)
            raise
        finally:
            if reporter is not None:
                reporter.cancel()
                try:
                    await reporter
                except asyncio.CancelledError:
                    pass

    def position(self, job: _Job) -> int:
        with self._cond:
            try:
                return self._queue.index(job) + 1
            except ValueError:
                return 0

    def close(self) -> None:
        """Stop accepting requests, cancel the waiting ones, stop the workers and free the models."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            pending = list(self._queue)
            self._queue.clear()
            self._cond.notify_all()
        for job in pending:
            job.cancel.set()
            _post(job, _set_exception, PoolClosed("the LLM pool was closed"))
        for t in self._threads:
            t.join(timeout=max(self._timeout, 5))

    # -- internals ---------------------------------------------------------------------------------------------
    async def _report_positions(self, job: _Job, on_position: Callable[[int], Awaitable[None]]) -> None:
        last = -1
        while not job.future.done():
            pos = self.position(job)
            if pos == 0:
                return
            if pos != last:
                last = pos
                try:
                    await on_position(pos)
                except Exception:  # boundary: a failing notifier must not break the answer
                    logger.warning("on_position callback failed", exc_info=True)
            await asyncio.sleep(0.2)

    def _abandon(self, job: _Job) -> None:
        job.cancel.set()
        with self._cond:
            try:
                self._queue.remove(job)
            except ValueError:
                pass  # already running: the worker stops at its next token

    def _worker(self) -> None:
        try:
            generator = as_generator(self._factory())
        except BaseException as error:  # reported to every caller
            logger.error("the LLM could not be loaded: %s", error)
            with self._cond:
                self._startup_error = error
                pending = list(self._queue)
                self._queue.clear()
            for job in pending:
                _post(job, _set_exception, error)
            self._ready.set()
            return
        with self._cond:
            self._generators.append(generator)
            if self.generator is None:
                self.generator = generator
        self._ready.set()
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._closed:
                        self._cond.wait()
                    if self._closed:
                        return
                    job = self._queue.popleft()
                    self._running += 1
                try:
                    if job.cancel.is_set():
                        continue
                    result = generator.generate(job.prompt, max_tokens=job.max_tokens, stop=job.stop,
                                                should_stop=job.cancel.is_set)
                except BaseException as error:
                    _post(job, _set_exception, _as_generation_error(error, generator))
                else:
                    _post(job, _set_result, result)
                finally:
                    with self._cond:
                        self._running -= 1
        finally:
            generator.close()


_NOT_WRAPPED = (ProdiBotError, asyncio.CancelledError, concurrent.futures.CancelledError)


def _as_generation_error(error: BaseException, generator: Generator) -> BaseException:
    """A backend's unexpected exception as a ``GenerationError`` (``__cause__`` = the original); the project's own
    errors, cancellation and the non-``Exception`` ones (KeyboardInterrupt, SystemExit) pass unchanged."""
    if isinstance(error, _NOT_WRAPPED) or not isinstance(error, Exception):
        return error
    name = generator.name
    detail = str(error)
    if len(detail) > 200:  # an exception's text may quote the prompt or the reply: keep the log line short
        detail = detail[:200] + "…"
    wrapped = GenerationError(f"the LLM backend {name} failed: {type(error).__name__}: {detail}")
    wrapped.__cause__ = error
    return wrapped


def _post(job: _Job, func: Callable[..., None], value: object) -> None:
    try:
        job.loop.call_soon_threadsafe(func, job.future, value)
    except RuntimeError:  # the caller's loop is gone (closed): nobody waits for this result any more
        pass


def _set_result(future: asyncio.Future[Generation], value: Generation) -> None:
    if not future.done():
        future.set_result(value)


def _set_exception(future: asyncio.Future[Generation], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
        future.exception()  # mark retrieved: an abandoned request must not warn "exception never retrieved"
