"""The Telegram admins' notice of new announcements (issue 32, ANNOUNCE_MODE=review) over the loopback Bot API
stand-in: one notice per announcement with Kirim / Buang buttons (callback data within 64 bytes); Kirim from an
admin sends through the same desk as /admin (the subscriber gets it once), a second press gets "sudah dikirim",
Buang discards, a non-admin's press changes nothing, an unknown id is a polite note."""

from __future__ import annotations

from bot.announce_delivery import Deliverer, TelegramAnnouncer
from bot.announcements import AnnouncementDesk, notify_pending
from bot.channels.telegram import TelegramAdminNotifier
from handlers import texts
from handlers.chat import announce_callback
from storage.announcements import AnnouncementStore
from tests.auxil.telegram_offline import callback_update, feed
from tests.bot.test_announce_delivery import BEASISWA, SEMINAR


async def test_notice_buttons_send_once_discard_and_refuse_non_admins(tg, service, fake_apis, tmp_path):
    store = AnnouncementStore(tmp_path / "announcements.sqlite3")
    store.subscribe("telegram:501", "telegram", "all")
    bsw, sem = store.add_announcements([BEASISWA, SEMINAR])

    async def deliver(announcement):
        sender = TelegramAnnouncer("123:fake", base_url=fake_apis.telegram_base)
        try:
            return await Deliverer(store, {"telegram": sender}).deliver(announcement)
        finally:
            await sender.close()

    service.announcements = AnnouncementDesk(store, deliver)
    try:
        notify = TelegramAdminNotifier("123:fake", ["telegram:1"], base_url=fake_apis.telegram_base)
        assert await notify_pending(notify, [bsw, sem]) == 2
        notices = fake_apis.telegram("sendMessage")
        assert [str(c.params["chat_id"]) for c in notices] == ["1", "1"]
        assert BEASISWA.title in notices[0].params["text"] and BEASISWA.url in notices[0].params["text"]
        keyboard = notices[0].params["reply_markup"]["inline_keyboard"]
        assert [[b["text"] for b in row] for row in keyboard] == [["Kirim", "Buang"]]
        send_bsw, drop_bsw = (b["callback_data"] for b in keyboard[0])
        assert (send_bsw, drop_bsw) == (announce_callback("send", bsw.id), announce_callback("discard", bsw.id))
        assert all(len(b["callback_data"].encode()) <= 64 for b in keyboard[0])
        send_sem = notices[1].params["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        drop_sem = notices[1].params["reply_markup"]["inline_keyboard"][0][1]["callback_data"]

        def answers():
            return [c.params.get("text") for c in fake_apis.telegram("answerCallbackQuery")]

        def to(chat):
            return [c.params["text"] for c in fake_apis.telegram("sendMessage") if str(c.params["chat_id"]) == chat]

        # a student (not in ADMIN_IDS) presses a forwarded notice's buttons: nothing happens
        await feed(tg, callback_update(send_bsw, user_id=4242))
        await feed(tg, callback_update(drop_sem, user_id=4242))
        assert answers() == [texts.ADMIN_ONLY, texts.ADMIN_ONLY]
        assert store.announcement(bsw.id).status == "pending" and store.announcement(sem.id).status == "pending"
        assert to("501") == []

        # the admin presses Kirim: answered at once, buttons off, the subscriber gets it, the outcome follows
        await feed(tg, callback_update(send_bsw, user_id=1))
        assert answers()[-1] == texts.ANNOUNCE_SENDING
        assert len(to("501")) == 1 and BEASISWA.title in to("501")[0]
        assert to("1")[-1] == texts.ANNOUNCE_SENT.format(title=BEASISWA.title, sent=1, skipped=0, failed=0)
        assert fake_apis.telegram("editMessageReplyMarkup")
        assert store.announcement(bsw.id).status == "sent"

        # a second press (a double tap, another admin's copy): "sudah dikirim", nothing sent again
        await feed(tg, callback_update(send_bsw, user_id=1))
        await feed(tg, callback_update(drop_bsw, user_id=1))
        assert answers()[-2:] == [texts.ANNOUNCE_ALREADY_SENT, texts.ANNOUNCE_ALREADY_SENT]
        assert len(to("501")) == 1

        # Buang discards; Kirim afterwards sends nothing
        await feed(tg, callback_update(drop_sem, user_id=1))
        assert store.announcement(sem.id).status == "discarded"
        assert to("1")[-1] == texts.ANNOUNCE_DISCARDED.format(title=SEMINAR.title)
        await feed(tg, callback_update(send_sem, user_id=1))
        assert answers()[-1] == texts.ANNOUNCE_ALREADY_DISCARDED and len(to("501")) == 1

        # an id that does not exist, and data that is not a notice's: polite, nothing done
        await feed(tg, callback_update(announce_callback("send", 99999), user_id=1))
        assert answers()[-1] == texts.ANNOUNCE_NOT_FOUND
        await feed(tg, callback_update("ann:x:1", user_id=1))
        assert store.delivery_counts(bsw.id)["sent"] == 1
    finally:
        store.close()


async def test_more_new_announcements_than_the_limit_point_at_admin(fake_apis, tmp_path):
    store = AnnouncementStore(tmp_path / "announcements.sqlite3")
    try:
        added = store.add_announcements([BEASISWA, SEMINAR])
        notify = TelegramAdminNotifier("123:fake", ["telegram:1", "telegram:2"], base_url=fake_apis.telegram_base)
        assert await notify_pending(notify, added, limit=1) == 4
        texts_sent = [c.params["text"] for c in fake_apis.telegram("sendMessage")]
        assert texts_sent[-1] == "…dan 1 pengumuman lain menunggu di halaman /admin."
        assert "reply_markup" not in fake_apis.telegram("sendMessage")[-1].params
    finally:
        store.close()
