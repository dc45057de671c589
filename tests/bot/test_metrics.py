"""Prometheus metrics on their own registry."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from bot.metrics import Metrics
from generation.types import Answer, Trace
from storage.runs import JobRun


def _samples(metrics: Metrics) -> dict[tuple[str, tuple], float]:
    body, content_type = metrics.render()
    assert content_type.startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_answers_messages_and_stages_are_counted() -> None:
    m = Metrics()
    m.message("telegram")
    m.message("telegram")
    m.message("web")
    trace = Trace("t1", latency_ms={"retrieve": 12.0, "generate": 900.0})
    m.answer("telegram", Answer("x", False, (), 0.8, 1, "stop", 950.0, trace))
    m.answer("telegram", Answer("", True, (), 0.1, 0, "abstain", 20.0, None))
    m.llm_queue_depth.set(3)
    s = _samples(m)
    assert s[("prodibot_messages_total", (("channel", "telegram"),))] == 2
    assert s[("prodibot_messages_total", (("channel", "web"),))] == 1
    assert s[("prodibot_answers_total", (("channel", "telegram"),))] == 2
    assert s[("prodibot_abstentions_total", (("channel", "telegram"),))] == 1
    assert s[("prodibot_answer_latency_seconds_count", (("stage", "total"),))] == 2
    assert s[("prodibot_answer_latency_seconds_sum", (("stage", "generate"),))] == 0.9
    assert s[("prodibot_answer_latency_seconds_bucket", (("le", "1.0"), ("stage", "generate")))] == 1
    assert s[("prodibot_llm_queue_depth", ())] == 3


def test_reindex_and_index_gauges() -> None:
    m = Metrics()
    m.reindex_started()
    assert _samples(m)[("prodibot_reindex_running", ())] == 1
    run = JobRun("r1", "schedule", "FAILED", "2026-01-01T00:00:00.000Z", duration_seconds=42.0)
    m.reindex_finished(run)
    m.index_loaded(chunks=120, documents=30, size_bytes=4096, reloaded=True)
    s = _samples(m)
    assert s[("prodibot_reindex_running", ())] == 0
    assert s[("prodibot_reindex_last_status", ())] == 1
    assert s[("prodibot_reindex_runs_total", (("status", "FAILED"), ("trigger", "schedule")))] == 1
    assert s[("prodibot_reindex_duration_seconds_sum", (("status", "FAILED"),))] == 42.0
    assert s[("prodibot_reindex_last_success_timestamp_seconds", ())] == 0
    assert s[("prodibot_index_chunks", ())] == 120
    assert s[("prodibot_index_size_bytes", ())] == 4096
    assert s[("prodibot_index_reloads_total", ())] == 1
    m.reindex_finished(JobRun("r2", "admin", "SUCCESS", "2026-01-01T00:00:00.000Z", duration_seconds=5.0))
    assert _samples(m)[("prodibot_reindex_last_success_timestamp_seconds", ())] > 0


def test_two_metrics_objects_do_not_share_counters() -> None:
    a, b = Metrics(), Metrics()
    a.message("web")
    assert ("prodibot_messages_total", (("channel", "web"),)) not in _samples(b)
