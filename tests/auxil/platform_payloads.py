"""Realistic webhook payloads of many update types, shaped like the platforms send them (ids are made up).

Used to replay "anything the platforms may send" against the server: every one must get 2xx or a deliberate 4xx.
"""

from __future__ import annotations

import copy
import time
from typing import Any

__all__ = ["TELEGRAM_UPDATES", "WHATSAPP_PAYLOADS", "telegram_updates", "wa_text"]

_NOW = int(time.time())
_USER = {"id": 9001, "is_bot": False, "first_name": "Budi", "username": "budi", "language_code": "id"}
_PRIVATE = {"id": 9001, "type": "private", "first_name": "Budi"}
_GROUP = {"id": -100777, "type": "supergroup", "title": "TI 2024"}
_CHANNEL = {"id": -100888, "type": "channel", "title": "Info Prodi"}
_BOT = {"id": 777000111, "is_bot": True, "first_name": "Prodi Bot", "username": "prodi_test_bot"}


def _msg(chat: dict, **extra: Any) -> dict[str, Any]:
    return {"message_id": 11, "date": _NOW, "chat": chat, "from": _USER, **extra}


_file = {"file_id": "F1", "file_unique_id": "U1", "file_size": 100}

TELEGRAM_UPDATES: list[dict[str, Any]] = [
    {"message": _msg(_PRIVATE, text="halo")},
    {"message": _msg(_PRIVATE, text="/start", entities=[{"type": "bot_command", "offset": 0, "length": 6}])},
    {"message": _msg(_PRIVATE, sticker={**_file, "width": 512, "height": 512, "is_animated": False,
                                         "is_video": False, "type": "regular", "emoji": "😀"})},
    {"message": _msg(_PRIVATE, voice={**_file, "duration": 3, "mime_type": "audio/ogg"})},
    {"message": _msg(_PRIVATE, document={**_file, "file_name": "krs.pdf", "mime_type": "application/pdf"})},
    {"message": _msg(_PRIVATE, location={"latitude": -7.95, "longitude": 112.6})},
    {"message": _msg(_PRIVATE, contact={"phone_number": "+62811", "first_name": "Ani"})},
    {"message": _msg(_PRIVATE, video_note={**_file, "length": 240, "duration": 2})},
    {"message": _msg(_PRIVATE, dice={"emoji": "🎲", "value": 4})},
    {"message": _msg(_PRIVATE, poll={"id": "P1", "question": "Kapan?", "options": [
        {"text": "A", "voter_count": 0}, {"text": "B", "voter_count": 0}], "total_voter_count": 0,
        "is_closed": False, "is_anonymous": True, "type": "regular", "allows_multiple_answers": False})},
    {"message": _msg(_GROUP, text="obrolan")},
    {"message": _msg(_GROUP, new_chat_members=[_BOT])},
    {"message": _msg(_GROUP, left_chat_member=_USER)},
    {"message": _msg(_GROUP, new_chat_title="TI 2025")},
    {"message": _msg(_GROUP, pinned_message=_msg(_GROUP, text="pin"))},
    {"message": _msg(_GROUP, text="/help@prodi_test_bot",
                     entities=[{"type": "bot_command", "offset": 0, "length": 20}])},
    {"message": {"message_id": 12, "date": _NOW, "chat": _GROUP, "sender_chat": _CHANNEL, "text": "anon"}},
    {"edited_message": _msg(_PRIVATE, text="halo lagi", edit_date=_NOW)},
    {"channel_post": {"message_id": 3, "date": _NOW, "chat": _CHANNEL, "text": "Pengumuman"}},
    {"edited_channel_post": {"message_id": 3, "date": _NOW, "chat": _CHANNEL, "text": "Ralat", "edit_date": _NOW}},
    {"inline_query": {"id": "IQ", "from": _USER, "query": "jadwal", "offset": ""}},
    {"chosen_inline_result": {"result_id": "R", "from": _USER, "query": "jadwal"}},
    {"callback_query": {"id": "CQ1", "from": _USER, "chat_instance": "x", "data": "fb:up:abc",
                        "message": {**_msg(_PRIVATE, text="jawaban"), "from": _BOT}}},
    {"callback_query": {"id": "CQ2", "from": _USER, "chat_instance": "x", "data": "zzz"}},
    {"callback_query": {"id": "CQ3", "from": _USER, "chat_instance": "x", "game_short_name": "g"}},
    {"shipping_query": {"id": "S", "from": _USER, "invoice_payload": "p", "shipping_address": {
        "country_code": "ID", "state": "", "city": "Malang", "street_line1": "J", "street_line2": "", "post_code": "6"}}},
    {"pre_checkout_query": {"id": "PC", "from": _USER, "currency": "IDR", "total_amount": 100, "invoice_payload": "p"}},
    {"poll": {"id": "P1", "question": "Kapan?", "options": [{"text": "A", "voter_count": 1}],
              "total_voter_count": 1, "is_closed": True, "is_anonymous": True, "type": "regular",
              "allows_multiple_answers": False}},
    {"poll_answer": {"poll_id": "P1", "user": _USER, "option_ids": [0]}},
    {"my_chat_member": {"chat": _PRIVATE, "from": _USER, "date": _NOW,
                        "old_chat_member": {"status": "member", "user": _BOT},
                        "new_chat_member": {"status": "kicked", "user": _BOT, "until_date": 0}}},
    {"chat_member": {"chat": _GROUP, "from": _USER, "date": _NOW,
                     "old_chat_member": {"status": "left", "user": _USER},
                     "new_chat_member": {"status": "member", "user": _USER}}},
    {"chat_join_request": {"chat": _GROUP, "from": _USER, "user_chat_id": 9001, "date": _NOW}},
    {"message_reaction": {"chat": _PRIVATE, "message_id": 11, "user": _USER, "date": _NOW,
                          "old_reaction": [], "new_reaction": [{"type": "emoji", "emoji": "👍"}]}},
    {"business_message": _msg(_PRIVATE, text="bisnis", business_connection_id="BC")},
    {"some_future_update_type": {"field": 1}},
    {"message": {"weird": True}},
    {"message": "not an object"},
    {},
]

_META = {"display_phone_number": "62800", "phone_number_id": "PNID"}


def _wa(value: dict[str, Any], field: str = "messages") -> dict[str, Any]:
    return {"object": "whatsapp_business_account",
            "entry": [{"id": "WABA", "changes": [{"field": field, "value": value}]}]}


def _wa_msg(mid: str, msg_type: str, **body: Any) -> dict[str, Any]:
    return _wa({"messaging_product": "whatsapp", "metadata": _META,
                "contacts": [{"profile": {"name": "Siti"}, "wa_id": "62899"}],
                "messages": [{"from": "62899", "id": mid, "timestamp": str(_NOW), "type": msg_type, **body}]})


WHATSAPP_PAYLOADS: list[dict[str, Any]] = [
    _wa_msg("w1", "text", text={"body": "halo"}),
    _wa_msg("w2", "image", image={"id": "M", "mime_type": "image/jpeg", "sha256": "x", "caption": "ini?"}),
    _wa_msg("w3", "audio", audio={"id": "M", "mime_type": "audio/ogg", "voice": True}),
    _wa_msg("w4", "video", video={"id": "M", "mime_type": "video/mp4"}),
    _wa_msg("w5", "document", document={"id": "M", "filename": "a.pdf", "mime_type": "application/pdf"}),
    _wa_msg("w6", "sticker", sticker={"id": "M", "mime_type": "image/webp", "animated": False}),
    _wa_msg("w7", "location", location={"latitude": -7.9, "longitude": 112.6, "name": "Kampus"}),
    _wa_msg("w8", "contacts", contacts=[{"name": {"formatted_name": "Ani"}, "phones": [{"phone": "+62"}]}]),
    _wa_msg("w9", "reaction", reaction={"message_id": "wamid.x", "emoji": "👍"}),
    _wa_msg("w10", "button", button={"payload": "fb:down:tr1", "text": "👎"}),
    _wa_msg("w11", "interactive", interactive={"type": "list_reply", "list_reply": {"id": "opt", "title": "Jadwal"}}),
    _wa_msg("w12", "interactive", interactive={"type": "button_reply", "button_reply": {"id": "fb:up:tr2", "title": "👍"}}),
    _wa_msg("w13", "unsupported", errors=[{"code": 131051, "title": "Message type unknown"}]),
    _wa_msg("w14", "system", system={"body": "nomor berganti", "type": "user_changed_number"}),
    _wa_msg("w15", "order", order={"catalog_id": "C", "product_items": []}),
    _wa_msg("w16", "request_welcome"),
    _wa({"messaging_product": "whatsapp", "metadata": _META, "statuses": [
        {"id": "wamid.s", "status": "read", "timestamp": str(_NOW), "recipient_id": "62899"}]}),
    _wa({"messaging_product": "whatsapp", "metadata": _META, "statuses": [
        {"id": "wamid.s", "status": "failed", "timestamp": str(_NOW), "recipient_id": "62899",
         "errors": [{"code": 131047, "title": "Re-engagement message"}]}]}),
    _wa({"messaging_product": "whatsapp", "metadata": _META, "errors": [{"code": 1, "title": "x"}]}),
    _wa({"phone_number": "62800", "event": "VERIFIED_ACCOUNT"}, field="account_update"),
    _wa({"message_template_id": 1, "event": "APPROVED"}, field="message_template_status_update"),
    {"object": "whatsapp_business_account", "entry": []},
    {"object": "page", "entry": [{"id": "1", "messaging": [{"sender": {"id": "1"}}]}]},
    {},
]


def telegram_updates() -> list[dict[str, Any]]:
    out = []
    for i, update in enumerate(copy.deepcopy(TELEGRAM_UPDATES)):
        out.append({"update_id": 500_000 + i, **update})
    return out


def wa_text(body: str, *, msg_id: str = "wamid.A1", sender: str = "6281234") -> dict:
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "WABA",
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {"display_phone_number": "62800", "phone_number_id": "PNID"},
                            "contacts": [{"profile": {"name": "Siti"}, "wa_id": sender}],
                            "messages": [
                                {
                                    "from": sender,
                                    "id": msg_id,
                                    "timestamp": str(int(time.time())),
                                    "type": "text",
                                    "text": {"body": body},
                                }
                            ],
                        },
                    }
                ],
            }
        ],
    }
