"""kill -9 during a reindex: after a restart the old index serves, the run is ABORTED, leftovers are gone."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot import wiring
from storage.redis_guard import connect_redis
from storage.runs import RunStore
from tests.auxil.reindex_site import ops_settings

ROOT = Path(__file__).resolve().parents[2]


def _env(settings, redis_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SITE_", "CRAWL_", "DATA_DIR", "TELEGRAM_"))}
    env.update({
        "PYTHONPATH": str(ROOT),
        "DATA_DIR": str(settings.data_dir),
        "SITE_SEEDS": ",".join(settings.crawl.seeds),
        "CRAWL_ALLOW_PRIVATE_NETWORKS": "true",
        "CRAWL_DELAY_SECONDS": "0",
        "CRAWL_RETRIES": "0",
        "REDIS_URL": redis_url,
        "REINDEX_LOCK_TTL_SECONDS": "5",
        "LOG_FORMAT": "json",
    })
    return env


def _bot(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.faults
async def test_kill_9_during_a_build_leaves_the_old_index_serving_after_a_restart(
    mutable_sample_site, warm_data_dir, redis_url, tmp_path
) -> None:
    site = mutable_sample_site
    settings = ops_settings(warm_data_dir, site.base_url, redis_url=redis_url, reindex_lock_ttl_seconds=5)
    env = _env(settings, redis_url)
    good = await wiring.build_reindex_job(settings).run("cli")
    assert good.status == "SUCCESS"

    # new text on many pages, so the next run has real embedding work to be killed in
    pages = [p for p in sorted(site.root.glob("*/index.html")) if b'charset="utf-8"' in p.read_bytes().lower()][:30]
    assert len(pages) >= 20
    for n, page in enumerate(pages):
        html = page.read_text(encoding="utf-8")
        extra = (f"<p>Pengumuman tambahan nomor {n}: jadwal konsultasi akademik semester ini dipindah ke ruang "
                 f"{100 + n} gedung B, setiap hari kerja pukul {8 + n % 8}.00 sampai selesai.</p>")
        at = html.find("<p>", max(0, html.find("<main")))  # inside the main content
        page.write_text(html[:at] + extra + html[at:], encoding="utf-8")

    runs = RunStore(settings.data_dir / "runs.sqlite3")
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "reindex", "--json", env=env,
                                                cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed_run = None
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.returncode is None:
            running = [r for r in runs.recent(5) if r.status == "RUNNING"]
            if running and any(line["stage"] == "chunk" for line in runs.logs(running[0].run_id)):
                killed_run = running[0]
                break
            await asyncio.sleep(0.05)
        assert killed_run is not None, "the subprocess never reached the embedding stage"
        os.kill(proc.pid, signal.SIGKILL)  # kill -9 while it embeds and builds
    finally:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == -signal.SIGKILL

    index_root = settings.index_dir
    assert (index_root / "current").read_text().strip() == good.index_version  # never switched
    assert runs.get(killed_run.run_id).status == "RUNNING"  # nobody closed it
    # a crash can also land inside IndexManager.build: its half-written version directory looks like this
    partial = index_root / "versions" / ".tmp-v20990101-000000-dead00"
    partial.mkdir(parents=True)
    (partial / "vectors.npy").write_bytes(b"\x93NUMPY partial")

    # --- restart: the serve process starts its operations (recovery runs in the background) ---
    client = connect_redis(redis_url)
    coordinator = wiring.build_reindex_coordinator(settings, redis=client)
    try:
        result = await coordinator._recovery
        for _ in range(40):  # the dead process's Redis lock expires after its TTL (5 s here)
            if result and result.get("recovered"):
                break
            await asyncio.sleep(0.5)
            result = await coordinator.job.recover()
        assert result["recovered"] and result["aborted_runs"] == [killed_run.run_id]
        assert str(partial) in result["removed"]
        assert not partial.exists()
        assert not list((settings.data_dir / "staging").glob("docstore-*"))
        aborted = runs.get(killed_run.run_id)
        assert aborted.status == "ABORTED" and aborted.ended_at

        serving = wiring.build_index_manager(settings)
        index = await asyncio.to_thread(serving.current)
        assert index.info["version"] == good.index_version
        hits = await asyncio.to_thread(lambda: index.search("skor minimal TOEFL", 3, "hybrid").hits)
        assert hits and any("TOEFL" in h.text for h in hits)
    finally:
        await coordinator.close()
        await client.aclose()

    status = await asyncio.to_thread(_bot, ["status", "--json"], env, tmp_path)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["index"]["version"] == good.index_version
    assert [r["status"] for r in data["runs"][:2]] == ["ABORTED", "SUCCESS"]

    again = await asyncio.to_thread(_bot, ["reindex", "--json"], env, tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    record = json.loads(again.stdout)
    assert record["status"] == "SUCCESS" and record["pages_changed"] >= 1 and record["chunks_embedded"] >= 1
    assert record["index_version"] != good.index_version
