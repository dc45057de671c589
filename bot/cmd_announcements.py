"""``python -m bot announcements [--last N] [--json]``: the recent announcements with their delivery counts."""

from __future__ import annotations

import argparse
import json

from bot.settings import Settings

__all__ = ["cmd_announcements"]

STATUS = {"pending": "menunggu", "sent": "terkirim", "discarded": "dibuang"}


def cmd_announcements(args: argparse.Namespace, settings: Settings) -> int:
    """Newest first: id, date, status, title, link, and sent / skipped / failed."""
    from bot import wiring
    from bot.announcements import AnnouncementDesk

    store = wiring.open_announcement_store(settings)
    try:
        items = AnnouncementDesk(store).listing(max(1, args.last))
    finally:
        store.close()
    if args.json:
        print(json.dumps({"announcements": items}, ensure_ascii=False))
        return 0
    if not items:
        print("Belum ada pengumuman (pembaruan indeks mencatatnya dari halaman berita yang baru atau berubah).")
        return 0
    for a in items:
        d = a["deliveries"]
        print(f"#{a['id']:<4} {a['date']}  {STATUS.get(a['status'], a['status']):<9} {a['title']}\n"
              f"      {a['url']}\n      terkirim {d['sent']}, dilewati {d['skipped']}, gagal {d['failed']}")
    return 0
