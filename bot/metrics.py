"""Prometheus metrics on a registry of their own (served at ``/metrics`` by the HTTP server).

One ``Metrics`` object is built per process (``bot.app.ServeApp``) and handed to whoever records:
the channel adapters (``message``/``answer``), the LLM pool (``llm_queue_depth``), the reindex job
(``reindex_finished``, ``index_loaded``). Nothing here is a module-level global, so tests get fresh counters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]

# Answer stages take from a few ms (retrieval) to tens of seconds (a queued LLM call on 2 cores).
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0)
_REINDEX_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200)
_STATUS_CODES = {"SUCCESS": 0, "FAILED": 1, "ABORTED": 2, "SKIPPED": 3, "RUNNING": 4}


class Metrics:
    """The bot's metric objects. ``render()`` returns the exposition text and its content type."""

    def __init__(self, namespace: str = "prodibot") -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.messages = Counter(
            "messages", "Messages received from users, by channel", ["channel"], namespace=namespace, registry=r
        )
        self.answers = Counter(
            "answers", "Answers sent, by channel", ["channel"], namespace=namespace, registry=r
        )
        self.abstentions = Counter(
            "abstentions", "Answers that abstained (abstain rate = abstentions / answers)", ["channel"],
            namespace=namespace, registry=r,
        )
        self.answer_latency = Histogram(
            "answer_latency_seconds", "Answer latency by pipeline stage ('total' is end to end)", ["stage"],
            namespace=namespace, registry=r, buckets=_LATENCY_BUCKETS,
        )
        self.llm_queue_depth = Gauge(
            "llm_queue_depth", "Generations waiting for or running on an LLM worker", namespace=namespace, registry=r
        )
        self.reindex_runs = Counter(
            "reindex_runs", "Reindex runs by final status", ["status", "trigger"], namespace=namespace, registry=r
        )
        self.reindex_duration = Histogram(
            "reindex_duration_seconds", "Duration of finished reindex runs", ["status"],
            namespace=namespace, registry=r, buckets=_REINDEX_BUCKETS,
        )
        self.reindex_last_status = Gauge(
            "reindex_last_status", "Status of the last reindex run seen by this process "
            "(0 SUCCESS, 1 FAILED, 2 ABORTED, 3 SKIPPED, 4 RUNNING)", namespace=namespace, registry=r,
        )
        self.reindex_last_success = Gauge(
            "reindex_last_success_timestamp_seconds", "Unix time of the last successful reindex",
            namespace=namespace, registry=r,
        )
        self.reindex_running = Gauge(
            "reindex_running", "1 while this process runs a reindex", namespace=namespace, registry=r
        )
        self.index_chunks = Gauge("index_chunks", "Chunks in the serving index", namespace=namespace, registry=r)
        self.index_documents = Gauge(
            "index_documents", "Documents in the serving index", namespace=namespace, registry=r
        )
        self.index_bytes = Gauge(
            "index_size_bytes", "Bytes on disk of the serving index version", namespace=namespace, registry=r
        )
        self.index_reloads = Counter(
            "index_reloads", "Times this process switched to a new index version", namespace=namespace, registry=r
        )

    # --- recording helpers ---------------------------------------------------------------------------------
    def message(self, channel: str) -> None:
        self.messages.labels(channel=channel).inc()

    def answer(self, channel: str, answer: Any) -> None:
        """Record an ``Answer``: count, abstention, total latency and each traced stage latency."""
        self.answers.labels(channel=channel).inc()
        if getattr(answer, "abstained", False):
            self.abstentions.labels(channel=channel).inc()
        total_ms = getattr(answer, "latency_ms", None)
        if total_ms is not None:
            self.answer_latency.labels(stage="total").observe(max(0.0, float(total_ms)) / 1000.0)
        trace = getattr(answer, "trace", None)
        stages: Mapping[str, float] = getattr(trace, "latency_ms", None) or {}
        self.stage_latencies(stages)

    def stage_latencies(self, stages_ms: Mapping[str, float]) -> None:
        for stage, ms in stages_ms.items():
            if stage != "total":
                self.answer_latency.labels(stage=str(stage)).observe(max(0.0, float(ms)) / 1000.0)

    def reindex_started(self) -> None:
        self.reindex_running.set(1)
        self.reindex_last_status.set(_STATUS_CODES["RUNNING"])

    def reindex_finished(self, run: Any) -> None:
        """Record a finished ``JobRun``."""
        status = str(run.status)
        self.reindex_running.set(0)
        self.reindex_runs.labels(status=status, trigger=str(run.trigger)).inc()
        self.reindex_duration.labels(status=status).observe(float(run.duration_seconds))
        self.reindex_last_status.set(_STATUS_CODES.get(status, 1))
        if status == "SUCCESS":
            self.reindex_last_success.set_to_current_time()

    def index_loaded(self, *, chunks: int, documents: int = 0, size_bytes: int = 0, reloaded: bool = False) -> None:
        self.index_chunks.set(chunks)
        self.index_documents.set(documents)
        self.index_bytes.set(size_bytes)
        if reloaded:
            self.index_reloads.inc()

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
