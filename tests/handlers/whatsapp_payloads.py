"""WhatsApp Cloud API webhook payloads of what students really send, shaped like Meta's reference (ids made up).

Button and list replies, template quick replies, reactions, location, voice notes, an edited message, a sender known
only by the business-scoped user id (BSUID), and a delivery batching several senders. Used by the handler tests and
replayed against the running server in tests/bot/test_server_replay.py.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = [
    "MORE_WHATSAPP_PAYLOADS",
    "wa_batch",
    "wa_bsuid_text",
    "wa_button_reply",
    "wa_edit",
    "wa_list_reply",
    "wa_location",
    "wa_message",
    "wa_reaction",
    "wa_template_button",
    "wa_voice",
]

BUSINESS_MESSAGE = "wamid.BUSINESS1"  # the bot's message a reply or a reaction refers to


def wa_message(msg_type: str, *, msg_id: str, sender: str = "62877", name: str = "Rina", **body: Any) -> dict:
    """One message of ``msg_type`` in a full webhook envelope (``body``: the type's own object and ``context``)."""
    return {
        "object": "whatsapp_business_account",
        "entry": [{
            "id": "WABA",
            "changes": [{
                "field": "messages",
                "value": {
                    "messaging_product": "whatsapp",
                    "metadata": {"display_phone_number": "62800", "phone_number_id": "PNID"},
                    "contacts": [{"profile": {"name": name}, "wa_id": sender}],
                    "messages": [{"from": sender, "id": msg_id, "timestamp": str(int(time.time())),
                                  "type": msg_type, **body}],
                },
            }],
        }],
    }


def _context() -> dict:
    return {"context": {"from": "62800", "id": BUSINESS_MESSAGE}}


def wa_button_reply(button_id: str, title: str, *, msg_id: str, sender: str = "62877") -> dict:
    """A tap on an interactive reply button the bot sent."""
    return wa_message("interactive", msg_id=msg_id, sender=sender, **_context(),
                      interactive={"type": "button_reply", "button_reply": {"id": button_id, "title": title}})


def wa_list_reply(row_id: str, title: str, *, msg_id: str, sender: str = "62877", description: str = "") -> dict:
    """A choice from an interactive list the bot sent."""
    row = {"id": row_id, "title": title, **({"description": description} if description else {})}
    return wa_message("interactive", msg_id=msg_id, sender=sender, **_context(),
                      interactive={"type": "list_reply", "list_reply": row})


def wa_template_button(payload: str, text: str, *, msg_id: str, sender: str = "62877") -> dict:
    """A tap on a quick-reply button of a template message."""
    return wa_message("button", msg_id=msg_id, sender=sender, **_context(), button={"payload": payload, "text": text})


def wa_reaction(emoji: str, *, msg_id: str, sender: str = "62877") -> dict:
    """A reaction to one of the bot's messages (an empty emoji removes it)."""
    return wa_message("reaction", msg_id=msg_id, sender=sender,
                      reaction={"message_id": BUSINESS_MESSAGE, "emoji": emoji})


def wa_location(*, msg_id: str, sender: str = "62877") -> dict:
    return wa_message("location", msg_id=msg_id, sender=sender,
                      location={"latitude": -7.9519, "longitude": 112.6076, "name": "Gedung B",
                                "address": "Jl. Gajayana 50, Malang"})


def wa_voice(*, msg_id: str, sender: str = "62877") -> dict:
    return wa_message("audio", msg_id=msg_id, sender=sender,
                      audio={"mime_type": "audio/ogg; codecs=opus", "sha256": "c2hhMjU2", "id": "MEDIA-VOICE-1",
                             "voice": True})


def wa_edit(original_id: str, new_text: str, *, msg_id: str, sender: str = "62877") -> dict:
    """The user edited their text ``original_id``; the edit event has an id of its own."""
    return wa_message("edit", msg_id=msg_id, sender=sender,
                      edit={"original_message_id": original_id,
                            "message": {"type": "text", "text": {"body": new_text}}})


def wa_bsuid_text(body: str, *, msg_id: str, user_id: str = "ID.1234567890123") -> dict:
    """A text from a user known only by the business-scoped user id (a username, no phone number shared)."""
    payload = wa_message("text", msg_id=msg_id, text={"body": body})
    value = payload["entry"][0]["changes"][0]["value"]
    value["contacts"] = [{"profile": {"name": "Dimas", "username": "@dimas"}, "user_id": user_id}]
    message = value["messages"][0]
    message.pop("from")
    message["from_user_id"] = user_id
    return payload


def wa_batch(*payloads: dict) -> dict:
    """One delivery that carries the messages (and contacts) of several payloads in one ``value``."""
    merged = wa_message("text", msg_id="unused", text={"body": ""})
    value = merged["entry"][0]["changes"][0]["value"]
    value["contacts"], value["messages"] = [], []
    for payload in payloads:
        part = payload["entry"][0]["changes"][0]["value"]
        value["contacts"] += part["contacts"]
        value["messages"] += part["messages"]
    return merged


MORE_WHATSAPP_PAYLOADS: list[dict[str, Any]] = [
    wa_button_reply("fb:up:tr-more", "👍 Membantu", msg_id="m1"),
    wa_button_reply("jadwal", "Jadwal kuliah", msg_id="m2"),
    wa_list_reply("opt-lab", "Laboratorium", msg_id="m3", description="Daftar laboratorium prodi"),
    wa_template_button("fb:down:tr-more", "👎 Kurang", msg_id="m4"),
    wa_reaction("👍", msg_id="m5"),
    wa_reaction("", msg_id="m6"),
    wa_location(msg_id="m7"),
    wa_voice(msg_id="m8"),
    wa_edit("m9-original", "Siapa ketua program studi?", msg_id="m9"),
    wa_bsuid_text("halo", msg_id="m10"),
    wa_batch(wa_message("text", msg_id="m11", sender="62871", text={"body": "halo"}),
             wa_message("text", msg_id="m12", sender="62872", text={"body": "halo juga"})),
]
