"""Channel-neutral text helpers: marking the reader's answer span."""

from __future__ import annotations

from handlers.formatting import mark
from handlers.telegram import escape_and_split


def test_mark_wraps_the_first_occurrence_of_each_highlight():
    assert mark("Skripsi: 6 SKS, KP: 2 SKS", ["6 SKS"], "*", "*") == "Skripsi: *6 SKS*, KP: 2 SKS"
    assert mark("a b a", ["a"], "[", "]") == "[a] b a"


def test_mark_never_changes_the_words():
    text = "Ketua: Dr. Rahmat Hidayat, M.Kom."
    assert mark(text, ["tidak ada", "", "  "], "*", "*") == text
    # overlapping highlights: the first one wins, the words stay as they are
    out = mark(text, ["Rahmat Hidayat", "Hidayat, M.Kom."], "<b>", "</b>")
    assert out == "Ketua: Dr. <b>Rahmat Hidayat</b>, M.Kom."


def test_telegram_bold_is_applied_after_escaping():
    parts = escape_and_split("Nilai <A> untuk skor > 85 & lulus", highlights=["skor > 85"])
    assert parts == ["Nilai &lt;A&gt; untuk <b>skor &gt; 85</b> &amp; lulus"]
