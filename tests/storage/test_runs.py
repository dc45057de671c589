"""Job-run records in SQLite: lifecycle, ordering, logs, crash recovery."""

from __future__ import annotations

import pytest

from storage.runs import RunStore


def test_a_run_goes_from_running_to_success_with_counts(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run = store.start("cli")
    assert run.status == "RUNNING" and run.ended_at is None and not run.finished
    store.update(run.run_id, pages_fetched=12, pages_changed=3, pages_unchanged=9)
    done = store.finish(run.run_id, "SUCCESS", chunks_embedded=7, embed_seconds=1.25, index_version="v2")
    assert done.status == "SUCCESS" and done.finished and done.ended_at >= done.started_at
    assert (done.pages_fetched, done.pages_changed, done.chunks_embedded) == (12, 3, 7)
    assert done.index_version == "v2" and done.duration_seconds >= 0
    assert store.get(run.run_id) == done
    assert done.as_json()["embed_seconds"] == 1.25


def test_recent_is_newest_first_and_last_success_skips_failures(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    first = store.finish(store.start("schedule").run_id, "SUCCESS", pages_fetched=10)
    second = store.finish(store.start("admin", requested_by="42").run_id, "FAILED", error="site down")
    assert [r.run_id for r in store.recent()] == [second.run_id, first.run_id]
    assert store.last_success() == first
    assert store.recent(1)[0].requested_by == "42"


def test_logs_keep_their_order_and_structure(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run = store.start("cli")
    store.log(run.run_id, {"stage": "crawl", "pages_fetched": 3})
    store.log(run.run_id, {"stage": "index", "chunks_embedded": 5})
    assert [line["stage"] for line in store.logs(run.run_id)] == ["crawl", "index"]
    assert store.logs("missing") == []


def test_running_runs_are_aborted_after_a_crash(tmp_path) -> None:
    path = tmp_path / "runs.sqlite3"
    stale = RunStore(path).start("schedule")
    reopened = RunStore(path)  # a new process
    assert reopened.abort_running() == [stale.run_id]
    assert reopened.get(stale.run_id).status == "ABORTED"
    assert "stopped" in reopened.get(stale.run_id).error
    assert reopened.abort_running() == []


def test_bad_values_are_rejected_with_the_valid_choices(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    with pytest.raises(ValueError, match="schedule, admin, cli"):
        store.start("cron")
    run = store.start("cli")
    with pytest.raises(ValueError, match="final status"):
        store.finish(run.run_id, "RUNNING")
    with pytest.raises(ValueError, match="unknown run fields"):
        store.update(run.run_id, pages=1)
    with pytest.raises(KeyError):
        store.finish("nope", "SUCCESS")
