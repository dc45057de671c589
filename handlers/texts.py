"""User-facing texts, in polite Indonesian. One place, so every channel says the same thing."""

from __future__ import annotations

__all__ = [
    "ADMIN_ONLY",
    "ANNOUNCE_ALREADY_DISCARDED",
    "ANNOUNCE_ALREADY_SENT",
    "ANNOUNCE_DISCARDED",
    "ANNOUNCE_FAILED",
    "ANNOUNCE_NOT_FOUND",
    "ANNOUNCE_SENDING",
    "ANNOUNCE_SENT",
    "ASK_SOMETHING",
    "BUSY_CLIENT",
    "BUSY_ERROR",
    "CHOICE_HINT",
    "CHOICE_PROMPT",
    "CHOICE_STALE",
    "EDITED_IGNORED",
    "ERROR",
    "FEEDBACK_NOT_FOUND",
    "FEEDBACK_THANKS_DOWN",
    "FEEDBACK_THANKS_UP",
    "HAPUS_DONE",
    "HELP",
    "JAWAB_FAILED",
    "JAWAB_SAVED",
    "JAWAB_USAGE",
    "LANGGANAN_ALL",
    "LANGGANAN_BAD_TOPIC",
    "LANGGANAN_FAILED",
    "LANGGANAN_LIST",
    "LANGGANAN_NOT_HERE",
    "LANGGANAN_TOO_MANY",
    "LANGGANAN_TOPIC",
    "BERHENTI_ALL",
    "BERHENTI_NONE",
    "BERHENTI_TOPIC",
    "BERHENTI_TOPIC_MISSING",
    "topics_list",
    "NO_SOURCES",
    "QUEUED",
    "RATE_LIMITED",
    "REINDEX_FAILED",
    "REINDEX_STARTED",
    "RESET_DONE",
    "SMALLTALK",
    "SMALLTALK_CAN",
    "SOURCES_HEADER",
    "START",
    "STATUS_UNAVAILABLE",
    "TEXT_ONLY",
    "TOO_LONG",
    "UNKNOWN_COMMAND",
    "smalltalk_reply",
]

START = (
    "Halo! Saya asisten informasi program studi. Silakan ketik pertanyaan Anda tentang prodi, misalnya "
    "kurikulum, dosen, jadwal, atau pendaftaran. Saya menjawab dari situs resmi prodi dan selalu menyertakan "
    "sumbernya.\n\nKetik /help untuk melihat contoh pertanyaan dan perintah yang tersedia."
)

HELP = (
    "Saya menjawab pertanyaan tentang program studi berdasarkan isi situs resminya.\n\n"
    "Contoh pertanyaan:\n"
    "• Siapa ketua program studi?\n"
    "• Berapa SKS mata kuliah Basis Data?\n"
    "• Kapan jadwal pendaftaran semester ini?\n"
    "• Apa saja laboratorium yang tersedia?\n\n"
    "Perintah:\n"
    "/sumber - sumber jawaban terakhir\n"
    "/reset - mulai percakapan baru\n"
    "/status - status data dan antrean\n"
    "/langganan - terima pengumuman baru dari situs prodi (/langganan beasiswa: hanya topik itu)\n"
    "/berhenti - berhenti menerima pengumuman (/berhenti beasiswa: hanya topik itu)\n"
    "/hapus - hapus semua data percakapan Anda\n"
    "/help - bantuan ini"
)

RESET_DONE = "Riwayat percakapan sudah dihapus. Silakan mulai dengan pertanyaan baru."
HAPUS_DONE = (
    "Semua data Anda (riwayat percakapan, pertanyaan di laporan admin, langganan pengumuman, umpan balik, dan "
    "penghitung) sudah dihapus. "
    "Terima kasih telah "
    "menggunakan layanan ini."
)
NO_SOURCES = "Belum ada jawaban sebelumnya yang memiliki sumber. Silakan ajukan pertanyaan terlebih dahulu."
SOURCES_HEADER = "Sumber jawaban terakhir:"
ADMIN_ONLY = "Mohon maaf, perintah ini hanya dapat digunakan oleh admin."
REINDEX_STARTED = "Pembaruan indeks sudah dimulai ({detail}). Jawaban lama tetap dipakai sampai indeks baru siap."
REINDEX_FAILED = "Mohon maaf, pembaruan indeks tidak dapat dimulai: {detail}"
JAWAB_USAGE = (
    "Cara menulis jawaban admin: /jawab pertanyaan | jawaban\n"
    "Contoh: /jawab Kapan jadwal wisuda? | Wisuda periode II dilaksanakan pada 12 Oktober 2026."
)
JAWAB_SAVED = (
    "Jawaban admin #{id} sudah disimpan dan langsung dipakai untuk pertanyaan seperti: \"{question}\". "
    "Ubah, beri tanggal kedaluwarsa, atau hapus di halaman /admin."
)
JAWAB_FAILED = "Mohon maaf, jawaban admin tidak dapat disimpan: {detail}"
STATUS_UNAVAILABLE = "Mohon maaf, status sistem sedang tidak dapat dibaca. Silakan coba lagi nanti."
RATE_LIMITED = (
    "Mohon maaf, Anda mengirim pesan terlalu cepat. Silakan tunggu sekitar {seconds} detik lalu coba lagi."
)
QUEUED = "Pertanyaan Anda sedang antre (posisi {position}). Mohon ditunggu sebentar."
TEXT_ONLY = "Mohon maaf, saat ini saya hanya dapat membaca pesan teks. Silakan ketik pertanyaan Anda."
ASK_SOMETHING = "Silakan ketik pertanyaan Anda tentang program studi."
TOO_LONG = "Mohon maaf, pesan Anda terlalu panjang. Silakan ringkas pertanyaan Anda (maksimal {limit} karakter)."
ERROR = "Mohon maaf, terjadi kendala saat memproses pesan Anda. Silakan coba beberapa saat lagi."
BUSY_ERROR = "Mohon maaf, sistem sedang sibuk. Silakan coba lagi sebentar lagi."
BUSY_CLIENT = (
    "Mohon maaf, pertanyaan Anda sebelumnya masih diproses. Silakan tunggu jawabannya dulu, lalu kirim lagi."
)
UNKNOWN_COMMAND = "Mohon maaf, perintah itu tidak dikenal. Ketik /help untuk melihat perintah yang tersedia."
FEEDBACK_THANKS_UP = "Terima kasih atas umpan baliknya! 👍"
FEEDBACK_THANKS_DOWN = "Terima kasih atas umpan baliknya. Kami akan terus memperbaiki jawaban. 👎"
FEEDBACK_NOT_FOUND = "Mohon maaf, umpan balik untuk jawaban ini tidak dapat disimpan."
# Asking back (an ambiguous follow-up): the choices come as buttons; a press is the student typing the choice.
CHOICE_PROMPT = "Silakan pilih salah satu:"
CHOICE_HINT = "Ketik nomornya untuk memilih, atau ketik pertanyaan lain."
CHOICE_STALE = "Mohon maaf, pilihan itu sudah tidak berlaku. Silakan ketik pertanyaan Anda lagi."
EDITED_IGNORED = (
    "Pesan yang disunting tidak diproses ulang. Jika ingin bertanya lagi, silakan kirim pesan baru."
)

# Announcements (issue 32): /langganan and /berhenti.
LANGGANAN_ALL = (
    "Terima kasih, Anda sudah berlangganan semua pengumuman baru dari situs prodi. Pengumuman baru akan dikirim ke "
    "sini. Ketik /berhenti kapan saja untuk berhenti."
)
LANGGANAN_TOPIC = (
    "Terima kasih, Anda sudah berlangganan pengumuman tentang \"{topic}\". Ketik /langganan untuk melihat "
    "langganan Anda, atau /berhenti {topic} untuk berhenti."
)
LANGGANAN_LIST = "Langganan pengumuman Anda:\n{topics}\n\nKetik /berhenti untuk berhenti dari semuanya."
LANGGANAN_BAD_TOPIC = (
    "Mohon maaf, topik itu tidak dapat dikenali. Tulis satu kata atau frasa singkat, misalnya: /langganan beasiswa"
)
LANGGANAN_TOO_MANY = (
    "Mohon maaf, langganan Anda sudah mencapai batas {limit} topik. Ketik /berhenti <topik> untuk melepas salah "
    "satunya terlebih dahulu."
)
LANGGANAN_NOT_HERE = (
    "Mohon maaf, pengumuman hanya dapat dikirim lewat Telegram atau WhatsApp. Di web, Anda dapat membaca "
    "pengumuman terbaru melalui umpan Atom di /feed.xml."
)
LANGGANAN_FAILED = "Mohon maaf, langganan sedang tidak dapat diproses. Silakan coba beberapa saat lagi."
BERHENTI_ALL = "Anda sudah berhenti berlangganan semua pengumuman. Ketik /langganan untuk berlangganan lagi."
BERHENTI_TOPIC = "Anda sudah berhenti berlangganan pengumuman tentang \"{topic}\"."
BERHENTI_TOPIC_MISSING = "Anda tidak berlangganan topik \"{topic}\". Ketik /langganan untuk melihat langganan Anda."
BERHENTI_NONE = "Anda belum berlangganan pengumuman apa pun. Ketik /langganan untuk mulai berlangganan."


def topics_list(topics: list[str]) -> str:
    """The user's topics as lines ("semua pengumuman" for ``all``)."""
    return "\n".join("• semua pengumuman" if t == "all" else f"• {t}" for t in topics)


# Small talk (generation/smalltalk.py decides): a short reply in kind, then one line of what the bot answers.
SMALLTALK_CAN = (
    "Saya bisa menjawab pertanyaan tentang program studi dari situs resminya, misalnya kurikulum, dosen, jadwal, "
    "atau pendaftaran; ketik /help untuk contoh pertanyaan."
)
SMALLTALK = {
    "greeting": "Halo! 👋 Saya asisten informasi program studi.",
    "salam": "Wa'alaikumsalam! 🙏 Saya asisten informasi program studi.",
    "thanks": "Sama-sama! 😊 Senang bisa membantu.",
    "apology": "Tidak apa-apa. 🙂",
    "goodbye": "Sampai jumpa! 👋 Semoga lancar kuliahnya.",
    "ack": "Baik. 🙂 Kalau ada yang ingin ditanyakan lagi, silakan.",
    "identity": (
        "Saya asisten informasi program studi: sebuah bot yang menjawab dari situs resmi prodi, bukan petugas "
        "manusia."
    ),
    "capability": "Silakan tanya apa saja tentang prodi.",
    "chitchat": "Hehe, soal itu saya belum bisa ikut mengobrol. 🙂 Silakan tanya kalau ada yang ingin diketahui tentang prodi.",
}


def smalltalk_reply(intent: str) -> str:
    """The reply to one small-talk intent (a greeting for an unknown one), with the line of what the bot answers."""
    return f"{SMALLTALK.get(intent, SMALLTALK['greeting'])}\n{SMALLTALK_CAN}"


# --- announcements: the Telegram admin notice's buttons (issue 32) -------------------------------------------------
ANNOUNCE_SENDING = "Pengumuman sedang dikirim ke pelanggan…"
ANNOUNCE_SENT = ("Pengumuman \"{title}\" sudah dikirim: {sent} terkirim, {skipped} dilewati, {failed} gagal.")
ANNOUNCE_DISCARDED = "Pengumuman \"{title}\" dibuang dan tidak dikirim."
ANNOUNCE_ALREADY_SENT = "Pengumuman ini sudah dikirim sebelumnya; tidak dikirim lagi."
ANNOUNCE_ALREADY_DISCARDED = "Pengumuman ini sudah dibuang sebelumnya."
ANNOUNCE_NOT_FOUND = "Mohon maaf, pengumuman ini tidak ditemukan."
ANNOUNCE_FAILED = "Mohon maaf, pengumuman belum dapat diproses saat ini. Silakan coba lagi dari halaman /admin."
