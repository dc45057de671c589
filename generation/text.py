"""Small Indonesian text helpers shared by the guards, the support check and the evaluation: words, stopwords,
sentences, anchors (the question's key words) and normalisation for span matching."""

from __future__ import annotations

import re
import unicodedata

from retrieval.aliases import HONORIFICS
from retrieval.normalize import FILLERS, GLOSSARY, colloquial_spellings

__all__ = [
    "ALL_OF_THEM",
    "ANSWER_TYPE_WORDS",
    "COLLOQUIAL_WORDS",
    "strip_clitics",
    "QUESTION_WORDS",
    "STOPWORDS",
    "anchors",
    "content_words",
    "is_negated",
    "name_words",
    "normalize",
    "sentences",
    "split_aside",
    "split_questions",
    "words",
]

# a word, or a number with its Indonesian decimal comma ("2,75": one number; "3, 4" and "ip,semester" stay apart)
_WORD = re.compile(r"[0-9A-Za-zÀ-ÖØ-öø-ÿ]+(?:[-'.][0-9A-Za-zÀ-ÖØ-öø-ÿ]+|(?<=\d),\d+)*")

# Question words and polite fillers: they never carry the topic of a question. Written for this project, plus the
# chat particles and forms of address the query normaliser drops (retrieval.normalize.FILLERS: "sih", "deh", "nih",
# "kok", "gan", ...).
QUESTION_WORDS = frozenset(
    """apa apakah siapa siapakah kapan kapankah dimana di mana manakah mana bagaimana bagaimanakah berapa berapakah
    mengapa kenapa kah yang tolong mohon dong ya kak min admin bisa bisakah boleh bolehkah sebutkan jelaskan
    ceritakan tahu info informasi ingin mau saya aku ku mu kami kita tentang mengenai seputar terima kasih halo hai
    tanya bertanya menanyakan apaan tuh""".split()
) | FILLERS
# … and the forms Indonesian fuses from them: "mana" with its preposition ("darimana", "kemana") and the question
# words of degree and time ("seberapa", "bilamana"), each also with the particle "-kah". Grammar, not fitted; on the
# IDK-MRC tune split "darimana" was the 29th commonest anchor its question's passage lacked (24 answerable questions).
_FUSED_QUESTION_WORDS = frozenset(f"{p}mana" for p in ("di", "ke", "dari")) | {"seberapa", "bilamana"}
QUESTION_WORDS = QUESTION_WORDS | _FUSED_QUESTION_WORDS | {f"{w}kah" for w in _FUSED_QUESTION_WORDS}

# Words that name the kind of answer wanted ("syarat", "lama", "jadwal") rather than the topic: the evidence often
# paraphrases them, so anchor coverage gives them little weight.
ANSWER_TYPE_WORDS = frozenset(
    """syarat persyaratan cara lama jadwal waktu biaya jumlah besar tempat lokasi letak daftar jenis macam nama
    prosedur langkah tahapan ketentuan kriteria alamat nomor kontak tanggal hari jam pukul tahun berapa
    arti maksud pengertian singkatan kepanjangan contoh tujuan fungsi manfaat kapan siapa memiliki mempunyai dimiliki dipunyai milik
    punya terdapat tersedia provinsi kota kabupaten negara daerah wilayah benua pulau lokasi""".split()
)

# "Both" and "all of them" as a reply to an ask-back ("dua-duanya", "keduanya", "semua", "semuanya"), as the stems
# the index's analyzer gives them. Grammar (Indonesian's closed class of totalising quantifiers), not fitted.
ALL_OF_THEM = frozenset({"dua", "kedua", "semua", "seluruh"})

STOPWORDS = frozenset(
    """ada adalah agar akan aku anda antara apa apakah atas atau bagaimana bagi bahkan bahwa banyak baru begitu
    belum berapa beberapa bersama bisa boleh bukan cara dalam dan dapat dari demikian dengan di dia ini itu harus
    hanya hingga ia ialah jadi jika juga jumlah kali kalau kami kamu kapan karena ke kemudian kepada ketika
    kita lagi lain lalu lebih maka masih mana maupun melalui menjadi mereka merupakan meski
    misalnya mungkin nya oleh pada para per pernah saat saja salah sama sampai sangat satu saya se sebagai setelah
    sebelum sedang sehingga sejak sekitar selain selama semua seperti serta setelah siapa suatu sudah supaya tak
    tanpa tapi telah tentang terhadap termasuk tersebut tetapi tidak untuk waktu yaitu yakni yang the of and to
    in is a an for on what who when where how which""".split()
)


# Colloquial spellings of the stopwords and question words above ("gimana", "aja", "kpn", "yg", "nanya", "gak"):
# every slang of the Colloquial Indonesian Lexicon (retrieval/data/colloquial_lexicon.csv) whose formal form
# consists only of such words, plus the lexicon's informal targets ("kalo", "enggak"); see
# retrieval.normalize.colloquial_spellings. Shorthand the glossary expands to a content word ("mk" = mata kuliah,
# although the lexicon reads it as "maka") stays a content word.
COLLOQUIAL_WORDS = colloquial_spellings(STOPWORDS | QUESTION_WORDS) - frozenset(
    short for short, long in GLOSSARY.items() if any(w not in STOPWORDS and w not in QUESTION_WORDS for w in long.split())
)


_REQUEST_NOUNS = frozenset({"info", "informasi"})
# verbs that ask for what follows ("minta info …", "butuh informasi …"); written for this project
_REQUEST_VERBS = frozenset({"minta", "butuh", "perlu", "cari", "nyari", "kasih", "beri", "berikan"})


def _function_word(word: str, raw: str) -> bool:
    """``word`` (lower case, as ``raw`` was typed) carries no topic. A colloquial spelling typed in capitals is an
    acronym ("SI" is Sistem Informasi, not "si" = "sih")."""
    if word in STOPWORDS or word in QUESTION_WORDS:
        return True
    return word in COLLOQUIAL_WORDS and not (len(raw) > 1 and raw.isupper())


def normalize(text: str) -> str:
    """Lower-case, NFKC, punctuation to spaces, collapsed whitespace: the form used for span containment."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def words(text: str) -> list[str]:
    """Lower-cased word tokens (keeps internal hyphens, dots in numbers like 3.50)."""
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def _strip_suffix(word: str) -> str:
    # light Indonesian clitic stripping so "dosennya" matches "dosen"; keep short words intact
    if word.endswith("-nya") and len(word) > 5:  # "UAS-nya"
        return word[:-4]
    for suffix in ("nya", "lah", "kah", "pun"):
        if word.endswith(suffix) and len(word) - len(suffix) >= (3 if suffix == "nya" else 4):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stopwords, no question words or fillers (also in their colloquial spellings),
    clitics stripped."""
    out = []
    previous_is_content = False
    for raw in _WORD.findall(unicodedata.normalize("NFKC", text)):
        w = raw.lower()
        # "info"/"informasi" after a content word modifies it ("Manajemen Informasi"): the topic, not a request
        if w in _REQUEST_NOUNS and previous_is_content:
            out.append(w)
            continue
        previous_is_content = not _function_word(w, raw) and w not in _REQUEST_VERBS
        if _function_word(w, raw):
            continue
        w = _strip_suffix(w)
        if _function_word(w, raw) or (len(w) < 2 and not w.isdigit()):
            continue
        out.append(w)
    return out


def anchors(question: str) -> list[str]:
    """The question's key words (the anchors of docs/answers.md): content words, numbers and capitalised names, deduplicated."""
    seen: dict[str, None] = {}
    for w in content_words(question):
        seen.setdefault(w, None)
    return list(seen)


# A sentence ends at these: the next word is capitalised by convention, not because it is a name.
_SENTENCE_END = re.compile(r"[.?!:;\n]")


def name_words(text: str) -> list[str]:
    """The content words ``text`` writes as names: capitalised ("Kádár", "White Rose") or acronyms ("TI"), except a
    sentence's first word and forms of address ("Pak Budi" → "budi"), in :func:`content_words`'s form, deduplicated.
    Names are what a paraphrase rarely changes: the support step's anchor table marks them, so a fit can see which
    missing anchors were names. A question typed in lower case has none."""
    text = unicodedata.normalize("NFKC", text)
    out: dict[str, None] = {}
    previous: str | None = None
    previous_end = 0
    for match in _WORD.finditer(text):
        raw = match.group(0)
        starts_sentence = previous is None or (bool(_SENTENCE_END.search(text, previous_end, match.start()))
                                               and previous.lower() not in _PRE_TITLES)  # "Dr. Rahmat"
        previous, previous_end = raw, match.end()
        if starts_sentence or not raw[:1].isupper() or raw.lower() in HONORIFICS:
            continue
        for w in content_words(raw):
            out.setdefault(w, None)
    return list(out)


# The words that negate a clause in formal Indonesian; the query normaliser writes the colloquial ones this way
# ("gak", "nggak", "blm", "tdk" → "tidak", "belum"). Grammar, not fitted.
NEGATIONS = frozenset("tidak tak bukan belum tanpa".split())
# A yes/no question offers the negation as the other answer rather than negating: "boleh gak ambil 2 beasiswa"
# (may one, or not), "bisa tidak", "ada tidak", "… atau tidak?", "TI sudah unggul belum?". The negation then follows
# "atau" or one of these modal and existential words, or ends its clause. Grammar, not fitted.
_POLAR_BEFORE = frozenset("atau boleh bisa dapat perlu wajib harus ada mau".split())
_CLAUSE_END = re.compile(r"[.?!,;:\n]")


def is_negated(text: str) -> bool:
    """Whether ``text`` negates: a negation word (:data:`NEGATIONS`, also with "-lah"/"-kah") that is not the other
    answer a yes/no question offers (``_POLAR_BEFORE``, or the last word of its clause apart from fillers). A negated
    question ("Mengapa X tidak dihukum?") asks about what did not happen, and its answer's evidence says so:
    evidence that negates nothing answers another question (the calibrated gate's ``negation_present``)."""
    for clause in _CLAUSE_END.split(unicodedata.normalize("NFKC", text)):
        tokens = [w.lower() for w in _WORD.findall(clause)]
        while tokens and tokens[-1] in QUESTION_WORDS:  # trailing fillers ("… belum sih", "… tidak ya kak")
            tokens.pop()
        for i, w in enumerate(tokens):
            if w not in NEGATIONS and _strip_suffix(w) not in NEGATIONS:
                continue
            if i == len(tokens) - 1 or (i > 0 and tokens[i - 1] in _POLAR_BEFORE):
                continue
            return True
    return False


# Titles before a name: a full stop after them never ends a sentence ("Dr. Rahmat", "Prof. Sari").
_PRE_TITLES = frozenset("dr drs dra prof ir h hj bpk ibu sdr yth no jl st kh".split())


def sentences(text: str) -> list[str]:
    """Split a passage into sentences (also at line breaks, which separate list items and table rows).

    A full stop does not end a sentence after a title ("Dr.", "Prof."), after an initial ("A."), or when the next
    word starts in lower case or with a digit ("M.Kom. dan", "Rp 2.500.000")."""
    out: list[str] = []
    for line in text.splitlines():
        pieces = [p for p in re.split(r"(?<=[.!?])\s+", line) if p.strip()]
        buf = ""
        for k, piece in enumerate(pieces):
            buf = f"{buf} {piece.strip()}" if buf else piece.strip()
            nxt = pieces[k + 1].lstrip() if k + 1 < len(pieces) else ""
            last = buf.split()[-1]
            core = last.rstrip(".!?").lower().strip(",;:()")
            join = False
            if nxt and last.endswith("."):
                if core in _PRE_TITLES or (len(core) == 1 and core.isalpha()):
                    join = True
                elif nxt[:1].islower() or nxt[:1].isdigit():
                    join = True
            if not join:
                out.append(" ".join(buf.split()))
                buf = ""
        if buf:
            out.append(" ".join(buf.split()))
    return [s for s in out if len(s) >= 3]


def strip_clitics(text: str) -> str:
    """The text with "-nya" / "-lah" / "-kah" clitics removed from its words ("emailnya?" → "email?")."""
    return _WORD.sub(lambda m: _strip_suffix(m.group(0)) if m.group(0).lower() not in STOPWORDS else m.group(0), text)


# --- asides: what a student says about themselves or why they ask ------------------------------------------------
# Students explain themselves around the question ("… tanggal berapa? mau mudik soalnya", "aku anak farmasi, boleh
# ikut …?"). Those words are not what the page must contain: a page that gives the date does not say "mudik". Word
# classes written for this project (Indonesian grammar: wh-words, yes/no tails, first-person pronouns, reason and
# purpose conjunctions), each with its colloquial spellings from the lexicon.
_WH = frozenset("apa apakah apaan siapa siapakah kapan kapankah dimana mana manakah bagaimana berapa berapakah "
                "mengapa kenapa".split())
_WH_WORDS = _WH | frozenset(w for w in colloquial_spellings(_WH) if len(w) >= 3)
_YES_NO = frozenset("tidak belum bukan".split())
_YES_NO_TAILS = _YES_NO | frozenset(w for w in colloquial_spellings(_YES_NO) if len(w) >= 2)
_SELF = frozenset("aku saya gue".split())
_SELF_WORDS = _SELF | frozenset(w for w in colloquial_spellings(_SELF) if len(w) >= 2)
_REASON = frozenset("karena sebab supaya agar biar soalnya mau ingin pengen pingin".split())
_REASON_WORDS = _REASON | frozenset(w for w in colloquial_spellings(_REASON) if len(w) >= 2) | {"soale", "pgn"}
_TRAILING_REASON = frozenset({"soalnya", "soale"})  # "… mau mudik soalnya": the reason word ends the clause
_CHAT_REASON = _TRAILING_REASON | {"biar"}
_PURPOSE = frozenset("buat untuk utk".split())  # "for …": an aside only after a finished question
_PARTICLES = frozenset("ya sih dong kak min aja saja nih deh kah yah gan".split())
# an acknowledgement of the previous reply before the next question ("oke sip.", "baik makasih,")
_ACK = frozenset("oke ok okay sip siap baik noted mantap makasih terima kasih thanks".split()) | FILLERS
_CLAUSE_BREAK = re.compile(r"(\s*[?!]+\s*|\s*,\s*|\.\s+|\s*\n+\s*)")


def _is_question(clause: str, separator: str) -> bool:
    ws = words(clause)
    if "?" in separator or any(w in _WH_WORDS for w in ws):
        return True
    tail = [w for w in ws if w not in _PARTICLES]
    return bool(tail) and tail[-1] in _YES_NO_TAILS


def _is_aside(clause: str, after_question: bool) -> bool:
    ws = words(clause)
    if not ws:
        return False
    first = ws[0]
    return (all(w in _ACK for w in ws) or first in _SELF_WORDS or first in _REASON_WORDS or ws[-1] in _TRAILING_REASON
            or (after_question and first in _PURPOSE))


def _split_inside(clause: str) -> tuple[str, str]:
    """A question with its reason run on without punctuation ("… apa ya mau konfirmasi …"): the reason starts at a
    reason word right after a wh-word (and its particles) that has the topic before it."""
    tokens = clause.split()
    low = [t.lower().strip("?!.,") for t in tokens]
    for i, w in enumerate(low):
        if i == 0 or w not in _WH_WORDS:
            continue
        j = i + 1
        while j < len(low) and low[j] in _PARTICLES:
            j += 1
        if j < len(low) and low[j] in _REASON_WORDS and not any(x in _WH_WORDS for x in low[j:]):
            return " ".join(tokens[:j]), " ".join(tokens[j:])
        # a chat reason word further on ("… brp persen biar aman"); the formal "karena"/"agar" may belong to the
        # question itself ("runtuh karena apa")
        for j in range(i + 1, len(low)):
            if low[j] in _CHAT_REASON and not any(x in _WH_WORDS for x in low[j:]):
                return " ".join(tokens[:j]), " ".join(tokens[j:])
        return clause, ""
    return clause, ""


def split_aside(question: str) -> tuple[str, str]:
    """(the question, the aside): the clauses in which a student says who they are ("aku anak farmasi") or why
    they ask ("mau mudik soalnya", "buat daftar beasiswa") split off the question. A clause with a question word,
    a question mark or a yes/no tail ("… gak?") is never an aside, and nothing is split off when no content word
    would be left; then the aside is empty and the question comes back unchanged."""
    parts = _CLAUSE_BREAK.split(question)
    clauses = [(parts[k], parts[k + 1] if k + 1 < len(parts) else "") for k in range(0, len(parts), 2)]
    kept: list[str] = []
    aside: list[str] = []
    seen_question = False
    for text, sep in clauses:
        if not text.strip():
            kept.append(text + sep)
            continue
        if _is_question(text, sep):
            core, rest = _split_inside(text)
            kept.append(core + (sep if not rest else ""))
            if rest:
                aside.append(rest)
            seen_question = True
        elif _is_aside(text, seen_question):
            aside.append(text.strip())
        else:
            kept.append(text + sep)
    core = "".join(kept).strip().rstrip(",").strip()
    if not aside or not content_words(core):
        return question, ""
    return core, " ".join(aside)


MAX_PARTS = 3  # more question marks than this is not a list of questions to answer one by one


def split_questions(message: str) -> list[str]:
    """The questions of a message that asks more than one ("ada klub catur? pelatihnya siapa"), each to be answered
    in turn with the ones before it as context. A part starts after a question mark or a line break, and only where
    a question with a content word of its own begins; anything else (an aside, a greeting) stays with the question
    before it. One part (the message itself) when there is only one such question, or more than MAX_PARTS."""
    pieces = [p for p in re.split(r"(?<=\?)\s+|\s*\n+\s*", message.strip()) if p.strip()]
    parts: list[str] = []
    for piece in pieces:
        starts = _is_question(piece, "?" if piece.rstrip().endswith("?") else "") and bool(content_words(piece))
        if parts and (not starts or not content_words(parts[-1])):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    if len(parts) < 2 or len(parts) > MAX_PARTS:
        return [message]
    return parts
