"""Short Indonesian renderings of structured-facts rows (course table, lecturer fields) for the reply."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from retrieval.facts import course_filter_label

__all__ = ["facts_verdict", "facts_usable", "render_facts"]


_WHEN_OR_WHERE = re.compile(r"\b(jadwal|jadwalnya|hari|jam|pukul|ruang|ruangan|kapan|di\s?mana|tanggal)\b",
                            re.IGNORECASE)
_COURSE_ATTRIBUTES = re.compile(r"\b(sks|semester|kode|sifat|wajib|pilihan|bobot)\b", re.IGNORECASE)


def facts_usable(constraints: dict[str, Any], rows: Sequence[dict[str, Any]], question: str = "") -> bool:
    """A lookup answers the question only when it matched a constraint beyond a bare name, or when the question
    names a course and asks for one of its table attributes ("Berapa SKS mata kuliah Skripsi?"). A person without
    the asked attribute ("nomor HP pribadi Prof. X") or a course named in passing ("syarat mengambil skripsi") is
    not an answer; the text pipeline takes those. The lecturers listing a named course answer "who teaches it"
    (``teaches``)."""
    return facts_verdict(constraints, rows, question)[0]


def facts_verdict(constraints: dict[str, Any], rows: Sequence[dict[str, Any]], question: str = "") -> tuple[bool, str]:
    """``facts_usable`` with the name of the rule that decided, for the trace."""
    if not rows:
        return False, "no_rows"
    if "teaches" in constraints:
        return all(r.get("table") == "lecturers" for r in rows), "teaches"
    if all(r.get("table") == "courses" for r in rows) and _WHEN_OR_WHERE.search(question):
        return False, "course_table_has_no_schedule"  # the course table has no schedule, day, hour or room
    if set(constraints) - {"name"}:
        return True, "constraint"
    if all(r.get("table") == "courses" for r in rows) and bool(_COURSE_ATTRIBUTES.search(question)):
        return True, "course_attribute"
    return False, "name_only"


def render_facts(constraints: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    courses = [r for r in rows if r.get("table") == "courses"]
    lecturers = [r for r in rows if r.get("table") == "lecturers"]
    parts: list[str] = []
    if courses:
        label = course_filter_label(constraints)
        same_sks = "sks" not in constraints and len({r.get("sks") for r in courses}) == 1 and len(courses) > 1
        if same_sks:
            label.append(f"masing-masing {courses[0].get('sks')} SKS")
        items = []
        for r in courses:
            extra = [] if "sks" in constraints or same_sks else [f"{r.get('sks')} SKS"]
            if "semester" not in constraints:
                extra.append(f"smt {r.get('semester')}")
            tail = f" ({', '.join(extra)})" if extra else ""
            items.append(f"{r.get('code')} {r.get('name')}{tail}")
        if "name" in constraints and not label and len(courses) == 1:
            r = courses[0]
            return (f"Mata kuliah {r.get('code')} {r.get('name')}: {r.get('sks')} SKS, semester {r.get('semester')}, "
                    f"{r.get('kind')}.")
        head = f"Mata kuliah {', '.join(label)}" if label else "Mata kuliah"
        parts.append(f"{head} ({len(items)}): " + "; ".join(items) + ".")
    if lecturers:
        if "teaches" in constraints:
            names = list(dict.fromkeys(str(r.get("name")) for r in lecturers))
            count = f" ({len(names)})" if len(names) > 1 else ""
            parts.append(_full_stop(f"Dosen pengampu {constraints['teaches']}{count}: " + "; ".join(names)))
            # the fields the question asked of them ("email dosen yang mengajar X"), said missing where a page lacks one
            for field in constraints.get("field") or ():
                for name in names:
                    held = [r for r in lecturers if r.get("name") == name and r.get("field") == field]
                    parts += [_full_stop(f"{field} {name}: {r.get('value')}") for r in held] or [
                        f"{field} {name} tidak tercantum di halamannya."]
        elif "ask_role" in constraints:  # the pipeline asks back (generation/subjects.py); this is its fallback text
            parts.append("; ".join(f"{r.get('value')}: {r.get('name')}" for r in lecturers) + ".")
        elif "role" in constraints and "name" not in constraints:
            # who holds a role: "Ketua Program Studi: Supriyono, M.Kom. [1]", citing the person's own page
            urls = list(dict.fromkeys(str(r.get("url", "")) for r in lecturers))
            parts.append("; ".join(f"{r.get('value')}: {r.get('name')} [{urls.index(str(r.get('url', ''))) + 1}]"
                                   for r in lecturers))
        elif "bidang" in constraints and "name" not in constraints:
            names = list(dict.fromkeys(str(r.get("name")) for r in lecturers))
            parts.append(_full_stop(f"Dosen bidang {lecturers[0].get('value', constraints['bidang'])} ({len(names)}): "
                                    + "; ".join(names)))
        else:
            for r in lecturers:
                parts.append(_full_stop(f"{r.get('field')} {r.get('name')}: {r.get('value')}"))
    return "\n".join(parts)


def _full_stop(text: str) -> str:
    """``text`` ending in one full stop (a name that ends in a title, "M.Kom.", already has it)."""
    return text if text.endswith(".") else text + "."
