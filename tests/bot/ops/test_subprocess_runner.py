"""`serve` runs the reindex in a child process: a child killed mid-run leaves the old index and an ABORTED run."""

from __future__ import annotations

import asyncio
import os
import signal

import psutil
import pytest

from bot import wiring
from tests.auxil.reindex_site import ops_settings
from tests.sync_jobs.test_reindex_acceptance import Recorder


def _append_to_pages(root, count: int) -> None:
    pages = [p for p in sorted(root.glob("*/index.html")) if b'charset="utf-8"' in p.read_bytes().lower()][:count]
    for n, page in enumerate(pages):
        html = page.read_text(encoding="utf-8")
        at = html.find("<p>", max(0, html.find("<main")))
        extra = f"<p>Informasi tambahan {n}: ruang sidang skripsi pindah ke lantai {n % 5 + 2} gedung C.</p>"
        page.write_text(html[:at] + extra + html[at:], encoding="utf-8")


@pytest.mark.faults
async def test_a_killed_reindex_child_is_aborted_and_the_old_index_keeps_serving(
    mutable_sample_site, warm_data_dir
) -> None:
    site = mutable_sample_site
    settings = ops_settings(warm_data_dir, site.base_url, reindex_in_subprocess=True, admin_ids=["telegram:9"])
    good = await wiring.build_reindex_job(settings).run("cli")
    assert good.status == "SUCCESS"
    _append_to_pages(site.root, 25)

    notify = Recorder()
    coordinator = wiring.build_reindex_coordinator(settings, notifier=notify, recover=False)
    task = coordinator.start("admin", "telegram:9")
    runs = coordinator.job.runs
    me = psutil.Process(os.getpid())
    child = None
    for _ in range(3000):
        running = [r for r in runs.recent(3) if r.status == "RUNNING"]
        if running and any(line["stage"] == "chunk" for line in runs.logs(running[0].run_id)):
            workers = [p for p in me.children(recursive=True)
                       if any("spawn_main" in part for part in p.cmdline())]
            if workers:
                child = workers[0]
                break
        await asyncio.sleep(0.05)
    assert child is not None, "the reindex child never reached the embedding stage"
    os.kill(child.pid, signal.SIGKILL)

    run = await asyncio.wait_for(task, 120)
    assert run.run_id == running[0].run_id and run.status == "ABORTED"
    assert wiring.build_index_manager(settings).current_version() == good.index_version
    assert not list((settings.data_dir / "staging").glob("docstore-*"))
    assert notify.sent and "terhenti" in notify.sent[-1][0] and notify.sent[-1][1] is None  # every admin
    # the next run in a fresh child works
    again = await coordinator.trigger("admin")
    assert again.status == "SUCCESS" and again.index_version != good.index_version
    await coordinator.close()
