"""The console transcript of issue 29, replayed in `make run`'s console chat over the REAL sample site (crawled over
loopback, real embedder, the bundled llama.cpp model, the shipped small-talk classifier): greetings and thanks after
an answer get small-talk replies, "emailnya apa?" after the scholarship question gets the study programme's
address with its contact page as the source, and "Siapa ketua program studi?" names the person from their own
profile page as a sentence, not a dash-led fragment."""

from __future__ import annotations

from bot import wiring
from bot.channels.base import ChannelContext
from bot.channels.console import CONSOLE_RATE_LIMIT, ConsoleChannel
from handlers import texts


async def test_the_console_transcript_of_issue_29(sample_site_index):
    settings, manager = sample_site_index
    pool = wiring.build_llm_pool(settings)
    try:
        pipeline = wiring.build_pipeline(settings, index_manager=manager, pool=pool)
        stores = wiring.build_channel_stores(settings, in_memory=True)
        service = wiring.build_chat_service(settings, pipeline, stores, rate_limit_per_minute=CONSOLE_RATE_LIMIT)
        typed = iter(["kapan prodi ini terakreditasi unggul dan oleh lembaga apa?", "halo", "makasih ya", "/reset",
                      "halo", "kalo mau daftar beasiswa syaratnya apa aja?", "emailnya apa?",
                      "Siapa ketua program studi?", "/keluar"])
        out: list[str] = []
        console = ConsoleChannel(ChannelContext(settings=settings, service=service, stores=stores),
                                 read_line=lambda prompt: next(typed), write=out.append)
        assert await console.run() == 0
    finally:
        pool.close()
    answers = [k for k, line in enumerate(out) if line.startswith("\nBot> ")]
    assert len(answers) == 4  # the four questions; small talk and /reset are shown as /start is
    accreditation, scholarships, email, kaprodi = answers
    assert "LAM INFOKOM" in out[accreditation] or "2023" in out[accreditation]
    between = out[accreditation:scholarships]
    greeting, thanks = texts.smalltalk_reply("greeting"), texts.smalltalk_reply("thanks")
    assert between.count(greeting) == 2 and between.count(thanks) == 1 and texts.RESET_DONE in between
    assert not any("Maaf" in line for line in between)  # small talk is never a refusal
    assert "informatika@uin-malang.ac.id" in out[email] and "program studi" in out[email].lower()
    email_sources = out[email:kaprodi]
    assert any(line.strip().startswith("[1]") and line.rstrip().rstrip("/").endswith("/contact")
               for line in email_sources)
    assert out[kaprodi] == "\nBot> Ketua Program Studi: Supriyono, M.Kom. [1]"
    assert any(line.strip().startswith("[1]") and "/supriyono-m-kom" in line for line in out[kaprodi:])
