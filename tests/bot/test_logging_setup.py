"""``serve``'s logs are what a log stack collects: one JSON object a line on stdout and in DATA_DIR/logs, with the
reindex job's run_id and stage, including the lines of the reindex child process that ``serve`` spawns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SERVE_LIKE = textwrap.dedent("""
    import asyncio
    from bot import wiring
    from bot.logging_setup import configure_logging
    from bot.ops.subprocess_runner import SubprocessReindex
    from bot.settings import load_settings

    settings = load_settings()
    configure_logging(settings, command="serve")  # what `python -m bot serve` does
    job = wiring.build_reindex_job(settings)
    entry = functools.partial(wiring.reindex_in_child, settings)
    run = asyncio.run(SubprocessReindex(entry, job).run("admin", requested_by="telegram:7"))
    print(json.dumps({"result": run.status, "run_id": run.run_id}))
""").replace("import asyncio", "import asyncio, functools, json")


def test_serve_logs_json_lines_with_run_id_and_stage_from_the_reindex_child(sample_site, warm_data_dir) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_"))}
    env.update({"DATA_DIR": str(warm_data_dir), "SITE_SEEDS": sample_site + "/", "CRAWL_ALLOW_PRIVATE_NETWORKS": "true",
                "CRAWL_DELAY_SECONDS": "0", "CRAWL_RETRIES": "0", "PYTHONPATH": str(ROOT), "LOG_FORMAT": "json"})
    result = subprocess.run([sys.executable, "-c", SERVE_LIKE], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]  # every stdout line is one JSON object
    run_id = lines[-1]["run_id"]
    assert lines[-1]["result"] == "SUCCESS"
    stages = [line for line in lines if line.get("run_id") == run_id and line.get("stage")]
    assert {"crawl", "chunk", "validate", "embed", "index", "promote", "finish"} <= {s["stage"] for s in stages}
    assert all({"ts", "level", "logger", "msg", "duration_s"} <= set(s) for s in stages)
    logged = [json.loads(line) for line in (warm_data_dir / "logs" / "prodi-bot.log").read_text().splitlines()]
    assert {s["stage"] for s in stages} <= {line.get("stage") for line in logged if line.get("run_id") == run_id}
