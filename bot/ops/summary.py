"""The short Indonesian summary of a finished reindex run that admins get (Telegram, ``reindex`` on a terminal)."""

from __future__ import annotations

from storage.runs import JobRun

__all__ = ["format_run_summary"]


def _num(value: float) -> str:
    return f"{value:.1f}".replace(".", ",")


def format_run_summary(run: JobRun) -> str:
    """A short Indonesian summary of a finished run for admins."""
    title = {
        "SUCCESS": "✅ Pembaruan indeks selesai.",
        "FAILED": "❌ Pembaruan indeks GAGAL. Indeks lama tetap dipakai untuk menjawab.",
        "ABORTED": "⚠️ Pembaruan indeks terhenti sebelum selesai. Indeks lama tetap dipakai.",
        "SKIPPED": "ℹ️ Pembaruan indeks dilewati.",
    }.get(run.status, f"Pembaruan indeks: {run.status}")
    lines = [title, f"Proses: {run.run_id} (pemicu: {run.trigger})"]
    if run.status != "SKIPPED":
        lines.append(
            f"Halaman: {run.pages_fetched} diambil, {run.pages_changed} berubah, {run.pages_unchanged} tetap, "
            f"{run.pages_failed} gagal, {run.pages_removed} dihapus"
        )
        lines.append(
            f"Potongan teks: {run.chunks_added} ditambah, {run.chunks_removed} dihapus, "
            f"{run.chunks_embedded} di-embed ({_num(run.embed_seconds)} detik); total {run.chunks_total}"
        )
        lines.append(f"Durasi: {_num(run.duration_seconds)} detik")
    if run.index_version and run.status == "SUCCESS":
        lines.append(f"Versi indeks: {run.index_version}")
    if run.error:
        lines.append(f"Keterangan: {run.error[:600]}")
    return "\n".join(lines)
