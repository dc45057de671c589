"""``python -m bot runs [--last N] [--json]`` and ``python -m bot runs show RUN_ID``: the admin run views on SSH."""

from __future__ import annotations

import argparse
import json
import sys

from bot.settings import Settings

__all__ = ["cmd_runs"]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]


def cmd_runs(args: argparse.Namespace, settings: Settings) -> int:
    """The recent reindex runs, or one run's stages, safety valves, failed pages and page changes."""
    from bot import wiring
    from bot.run_views import run_detail, run_rows

    runs = wiring.build_run_store(settings)
    if args.action == "show":
        if not args.run_id:
            print("error: name the run: python -m bot runs show RUN_ID (see python -m bot runs)", file=sys.stderr)
            return 2
        detail = run_detail(runs, args.run_id, settings.timezone)
        if detail is None:
            if args.json:
                print(json.dumps({"error": "not_found", "run_id": args.run_id}))
            print(f"error: no run {args.run_id!r}; `python -m bot runs` lists the recent ones", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(detail, ensure_ascii=False, default=str))
        else:
            _print_detail(detail)
        return 0
    if args.run_id:
        print(f"error: unknown action {args.run_id!r}; use `runs` or `runs show RUN_ID`", file=sys.stderr)
        return 2
    recent = runs.recent(max(1, args.last))
    if args.json:
        print(json.dumps([r.as_json() for r in recent], ensure_ascii=False))
        return 0
    if not recent:
        print("Belum ada proses pembaruan indeks. Jalankan `python -m bot reindex`.")
        return 0
    rows = [["PROSES", "STATUS", "PEMICU", "MULAI", "DURASI", "HALAMAN", "GAGAL", "POTONGAN"]]
    for row in run_rows(recent, settings.timezone):
        rows.append([row["run_id"], row["status_label"], row["trigger"], row["started"], row["duration"],
                     row["pages"], row["failed"], row["chunks"]])
    lines = _table(rows)
    print(lines[0])
    for line, run in zip(lines[1:], recent, strict=True):
        print(line)
        if run.error:
            print(f"    ↳ {run.error[:300]}")
    return 0


def _print_detail(d: dict) -> None:
    print(f"Proses {d['run']['run_id']}: {d['status_label']}")
    for label, value in d["summary"]:
        print(f"  {label + ':':<15} {value}")
    if d["progress"]:
        p = d["progress"]
        print(f"  Sedang berjalan: {p['stage_label']}" + (f" ({p['text']})" if p["text"] else ""))
    print("\nTahapan")
    rows = [["TAHAP", "STATUS", "DURASI", "JUMLAH"]]
    for s in d["stages"]:
        rows.append([s["label"], s["status_label"], s["duration"],
                     ", ".join(f"{value} {label}" for label, value in s["counts"]) or "-"])
    for line in _table(rows):
        print("  " + line)
    print("\nKatup pengaman")
    if not d["checks"]:
        print("  (validasi belum dijalankan)")
    for c in d["checks"]:
        verdict = "lolos" if c["ok"] else f"GAGAL: {c.get('error') or ''}"
        print(f"  {c['label']}: batas {c['threshold_text']}, terukur {c['measured_text']} - {verdict}")
    print("\nHalaman gagal")
    if not d["failed_pages"]:
        print("  (tidak ada)")
    for p in d["failed_pages"]:
        status = f"HTTP {p['status']}" if p.get("status") else "tanpa jawaban"
        print(f"  {p['url']}  {status}  {p.get('error') or ''}  (percobaan ulang: {p.get('retries', 0)})")
    print("\nPerubahan halaman")
    for kind, label in (("added", "Ditambah"), ("changed", "Berubah"), ("removed", "Dihapus")):
        urls = d["changes"][kind]
        print(f"  {label} ({len(urls)})")
        for url in urls[:50]:
            print(f"    {url}")
        if len(urls) > 50:
            print(f"    … dan {len(urls) - 50} lagi (--json untuk semuanya)")
