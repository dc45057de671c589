"""`kill -9` of the process that started a reindex child: the child does not outlive it.

The parent here is a real process that runs the reindex through the real ``SubprocessReindex`` code path, the way
``serve`` does; the test kills it with SIGKILL while its child embeds, then waits for the child to go away.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
import redis.asyncio as aioredis

from bot import wiring
from storage import keys
from storage.runs import RunStore
from tests.auxil.reindex_site import ops_settings
from tests.bot.ops.test_subprocess_runner import _append_to_pages

ROOT = Path(__file__).resolve().parents[3]

# what `serve` does with REINDEX_IN_SUBPROCESS=true: the job for status/recovery in the parent, the run in a child
PARENT = textwrap.dedent(
    """
    import asyncio, functools, sys
    from pathlib import Path
    from bot import wiring
    from bot.ops.subprocess_runner import SubprocessReindex
    from tests.auxil.reindex_site import ops_settings

    data_dir, base_url, redis_url = sys.argv[1:4]
    settings = ops_settings(Path(data_dir), base_url, redis_url=redis_url, reindex_in_subprocess=True)
    runner = SubprocessReindex(functools.partial(wiring.reindex_in_child, settings), wiring.build_reindex_job(settings))
    asyncio.run(runner.run("admin"))
    """
)


def _gone(pid: int) -> bool:
    """The process has exited (an unreaped zombie has exited too: it runs no code and holds no lock)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.faults
async def test_the_reindex_child_exits_when_its_parent_is_killed(
    mutable_sample_site, warm_data_dir, redis_url, tmp_path
) -> None:
    site = mutable_sample_site
    settings = ops_settings(warm_data_dir, site.base_url, redis_url=redis_url)
    good = await wiring.build_reindex_job(settings).run("cli")
    assert good.status == "SUCCESS"
    _append_to_pages(site.root, 25)  # new text: the next run has embedding work to be interrupted in

    runs = RunStore(settings.data_dir / "runs.sqlite3")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PARENT, str(settings.data_dir), site.base_url, redis_url, env=env, cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child = None
    running = None
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and parent.returncode is None:
            found = [r for r in runs.recent(3) if r.status == "RUNNING"]
            if found and any(line["stage"] == "chunk" for line in runs.logs(found[0].run_id)):
                workers = [p for p in psutil.Process(parent.pid).children()
                           if any("spawn_main" in part for part in p.cmdline())]
                if workers:
                    child, running = workers[0], found[0]
                    break
            await asyncio.sleep(0.05)
        assert child is not None, "the reindex child never reached the embedding stage"
        os.kill(parent.pid, signal.SIGKILL)
        await asyncio.wait_for(parent.wait(), 30)

        for _ in range(300):  # up to a minute: a generous bound, not a speed requirement
            if _gone(child.pid):
                break
            await asyncio.sleep(0.2)
        assert _gone(child.pid), f"the reindex child {child.pid} outlived its killed parent"
    finally:
        if parent.returncode is None:
            parent.kill()
            await parent.wait()
        if child is not None and not _gone(child.pid):
            child.kill()  # never leave an orphan behind, whatever the outcome

    # it closed its run and gave the lock back on its way out; the old index still serves
    run = runs.get(running.run_id)
    assert run.status == "ABORTED" and run.ended_at, run
    assert str(parent.pid) in (run.error or "") and "died" in run.error, run.error
    client = aioredis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        assert await client.get(keys.REINDEX_LOCK) is None
    finally:
        await client.aclose()
    assert wiring.build_index_manager(settings).current_version() == good.index_version
    again = await wiring.build_reindex_job(settings, redis=None).run("cli")
    assert again.status == "SUCCESS"
