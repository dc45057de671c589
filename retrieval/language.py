"""The language resources of the bot in one place: the Indonesian word classes (question words, stopwords, answer-type
words, number and time words, colloquial and chat forms), the university shorthand glossary and the Colloquial
Indonesian Lexicon with its helpers. Each constant is defined once, with its provenance and where it is used.

Provenance, as each comment states it:

- *written for this project*: a list chosen by hand for the bot's questions (prodi sites, student chat);
- *grammar*: an Indonesian closed class (pronouns, negations, question words, quantifiers), not fitted;
- *the lexicon*: the Colloquial Indonesian Lexicon (Salsabila et al., IALP 2018; ``data/colloquial_lexicon.csv``,
  see ``data/README.md``), through :func:`load_lexicon` / :func:`colloquial_spellings`;
- *fitted*: chosen or checked on data, which the comment names.

To add a class: define it here as a frozenset of lower-case single tokens (or a tuple where order matters for a
regex), with a comment that names its provenance and the modules that use it, and import it from
``retrieval.language`` there. A variant of a class is the class plus or minus an explicit, commented delta, not a
second list. This module imports nothing from the rest of the project (retrieval/ and generation/ both import it).
"""

from __future__ import annotations

import csv
import functools
import re
import unicodedata
from collections.abc import Collection, Mapping
from pathlib import Path

__all__ = [
    "ACKNOWLEDGEMENTS",
    "ALL_OF_THEM",
    "COORDINATORS",
    "EACH_OF_THEM",
    "ANCHOR_STOPWORDS",
    "ANSWER_TYPE_WORDS",
    "ATTRIBUTE_WORDS",
    "CARDINALS",
    "CHAT_REASON",
    "CHAT_SUPPLEMENT",
    "CLOCK_WORDS",
    "COLLOQUIAL_WORDS",
    "DAYS",
    "FILLERS",
    "FIRST_PERSON",
    "FOLLOWUP_CONNECTORS",
    "FRACTIONS",
    "FUNCTION_WORDS",
    "FUSED_QUESTION_WORDS",
    "GLOSSARY",
    "HOURS_WORDS",
    "INDEX_STOPWORDS",
    "INFORMAL_TARGETS",
    "LEXICON_PATH",
    "MONTHS",
    "NEGATIONS",
    "NUMBER_MAGNITUDES",
    "ONE_ANSWER_QUESTION_WORDS",
    "ORDINALS",
    "PARTICLES",
    "PERSON_ASKED_WORDS",
    "POLAR_BEFORE",
    "PRE_TITLES",
    "PURPOSE_WORDS",
    "QUESTION_WORDS",
    "REASON_CHAT_SPELLINGS",
    "REASON_WORDS",
    "REFINEMENT_FILLERS",
    "RELATIVE",
    "REQUEST_NOUNS",
    "REQUEST_VERBS",
    "SHARED_STOPWORDS",
    "SWITCH_WORDS",
    "TIME_DEIXIS",
    "TIME_WORDS",
    "TRAILING_REASON",
    "TYPE_QUESTION_WORDS",
    "WHO_WORDS",
    "WH_WORDS",
    "YES_NO",
    "colloquial_spellings",
    "formal_vocabulary",
    "load_lexicon",
    "resolve_formal",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# === the colloquial lexicon and the shorthand glossary ============================================================

LEXICON_PATH = Path(__file__).with_name("data") / "colloquial_lexicon.csv"

# Generic Indonesian university shorthand → the words a prodi site spells out. Written for this project. Used by the
# query normaliser (retrieval.normalize: expansion and replacement), COLLOQUIAL_WORDS below, generation.refine
# (follow-up keys and query expansion) and generation.support (shorthand stems and document frequencies).
GLOSSARY: dict[str, str] = {
    "kaprodi": "ketua program studi",
    "sekprodi": "sekretaris program studi",
    "prodi": "program studi",
    "dospem": "dosen pembimbing",
    "dosbing": "dosen pembimbing",
    "mk": "mata kuliah",
    "matkul": "mata kuliah",
    "ta": "tugas akhir",
    "kp": "kerja praktik",
    "pkl": "praktik kerja lapangan",
    "ukt": "uang kuliah tunggal",
    "krs": "kartu rencana studi",
    "khs": "kartu hasil studi",
    "ipk": "indeks prestasi kumulatif",
    "ips": "indeks prestasi semester",
    "pmb": "penerimaan mahasiswa baru",
    "maba": "mahasiswa baru",
    "smt": "semester",
    "lab": "laboratorium",
    "mhs": "mahasiswa",
    "mhsw": "mahasiswa",
    "perpus": "perpustakaan",
    "fak": "fakultas",
    "akred": "akreditasi",
    "sempro": "seminar proposal",
    "semhas": "seminar hasil",
    "kompre": "komprehensif",
    "kkn": "kuliah kerja nyata",
    "doswal": "dosen wali",
    "sertif": "sertifikat",
    "bsw": "beasiswa",
    "proker": "program kerja",
    "ormawa": "organisasi mahasiswa",
    "ukm": "unit kegiatan mahasiswa",
    "bem": "badan eksekutif mahasiswa",
    # address shorthand pages and students both use ("Gedung B Lt. 2")
    "lt": "lantai",
    "gd": "gedung",
    "gdg": "gedung",
    "jl": "jalan",
    # English words students type where official pages write the Indonesian term
    "acc": "setuju",
    "upload": "unggah",
    "download": "unduh",
    "online": "daring",
    "offline": "luring",
    "deadline": "batas waktu",
    "max": "maksimal",
    "maks": "maksimal",
    "s1": "sarjana",
    "s2": "magister",
    "s3": "doktor",
    "sem": "semester",
    "jurusan": "program studi",
    "hp": "telepon",
    "wa": "whatsapp",
    "no": "nomor",
    "gmn": "bagaimana",
    "brp": "berapa",
    "dmn": "di mana",
    "yg": "yang",
    "dgn": "dengan",
    "utk": "untuk",
    "sy": "saya",
}

# Formal forms the lexicon gives that are informal themselves; each is mapped once more (resolve_formal, and the
# normaliser's site lexicon). Written for this project.
INFORMAL_TARGETS: dict[str, str] = {
    "enggak": "tidak", "nggak": "tidak", "ngga": "tidak", "gue": "saya", "kalo": "kalau", "kayak": "seperti",
    "gimana": "bagaimana", "entar": "nanti", "indak": "tidak", "mengasih": "memberi",
}

# Chat spellings of question and function words that the bundled lexicon has no entry for, added to it by
# :func:`load_lexicon` (its own entries win). Written for this project: the lexicon was searched for the usual chat
# forms of siapa, di mana, kenapa, agar and diberi, and these are the ones it lacks. Like every lexicon entry, one
# applies only where the site does not use the word itself ("sapa" on a page about greeting stays "sapa").
CHAT_SUPPLEMENT: dict[str, str] = {
    "sapa": "siapa", "spa": "siapa", "dimn": "di mana", "dimna": "di mana", "npa": "kenapa", "biar": "agar",
    "dikasih": "diberi", "dikasi": "diberi",
}


@functools.lru_cache(maxsize=4)
def load_lexicon(path: Path = LEXICON_PATH, supplement: bool = True) -> dict[str, str]:
    """``slang → formal`` from the bundled lexicon (lower case), plus :data:`CHAT_SUPPLEMENT` where the file has no
    entry (``supplement``); only the supplement when the file is missing."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except FileNotFoundError:
        rows = []
    out: dict[str, str] = {}
    for row in rows:
        slang = unicodedata.normalize("NFKC", row.get("slang") or "").strip().lower()
        formal = " ".join(unicodedata.normalize("NFKC", row.get("formal") or "").lower().split())
        if slang and formal and slang != formal:
            out.setdefault(slang, formal)
    if supplement:
        for slang, formal in CHAT_SUPPLEMENT.items():
            out.setdefault(slang, formal)
    return out


@functools.lru_cache(maxsize=1)
def formal_vocabulary() -> frozenset[str]:
    """The words of the bundled lexicon's formal forms: words of the language, as opposed to names (a first name
    that is one needs an honorific to name a person: ``retrieval.aliases.mine_aliases``)."""
    return frozenset(w for formal in load_lexicon(supplement=False).values() for w in formal.split() if w.isalpha())


def resolve_formal(slang: str, lexicon: Mapping[str, str]) -> str:
    """The formal form of ``slang`` after following lexicon chains (at most 3 hops, cycles stop) and the informal
    targets map; ``slang`` itself when it is not in the lexicon."""
    seen = {slang}
    current = lexicon.get(slang, slang)
    for _ in range(3):
        if current in seen or current not in lexicon:
            break
        seen.add(current)
        current = lexicon[current]
    return " ".join(INFORMAL_TARGETS.get(w, w) for w in current.split())


def colloquial_spellings(formal_words: Collection[str], lexicon: Mapping[str, str] | None = None) -> frozenset[str]:
    """Every alphabetic lexicon slang whose (resolved) formal form consists only of ``formal_words``: the
    colloquial spellings of stopwords and question words ("gmn", "aja", "kpn", "yg")."""
    lexicon = load_lexicon() if lexicon is None else lexicon
    out = set()
    for slang in lexicon:
        if not slang.isalpha():
            continue
        formal = resolve_formal(slang, lexicon).split()
        if formal and all(w in formal_words for w in formal):
            out.add(slang)
    out.update(k for k, v in INFORMAL_TARGETS.items() if v in formal_words)
    return frozenset(out)


# === chat forms ==================================================================================================

# Discourse particles, vocatives, greetings and acknowledgements that carry nothing a page could match. Written for
# this project: the chat particles and forms of address students put around a question ("min" = admin, "kak" =
# kakak), the greetings they open with ("permisi", "assalamualaikum") and the acknowledgements with which a next
# question follows a reply ("oke makasih, btw …"). Used by the query normaliser (dropped, except next to a number),
# QUESTION_WORDS and ACKNOWLEDGEMENTS below, and retrieval.topics (topic words).
FILLERS = _words(
    """dong sih deh nih kok ya yah yaa kak kakak min mimin gan sis bro halo hai hallo hi permisi punten
    assalamualaikum assalamu'alaikum oke ok okay okey oce sip btw oiya thanks thx makasih makasi"""
)

# The politeness words and particles the refinement candidate drops (generation.refine.expand_query). Written for
# this project; a smaller, older list than FILLERS (it also drops "tolong", "mohon" and the particle "kah").
REFINEMENT_FILLERS = _words("tolong mohon dong kak min gan sih ya deh nih kah")

# Chat particles and vocatives that may follow a question's last word ("… gak sih", "… apa ya kak"): skipped when
# generation.text looks for a yes/no tail or a reason word after a wh-word. Grammar (Indonesian discourse
# particles) plus the vocatives of FILLERS, written for this project.
PARTICLES = _words("ya sih dong kak min aja saja nih deh kah yah gan")

# An acknowledgement of the previous reply before the next question ("oke sip.", "baik makasih,"): a clause made of
# these is an aside (generation.text.split_aside). Written for this project, plus FILLERS.
ACKNOWLEDGEMENTS = _words("oke ok okay sip siap baik noted mantap makasih terima kasih thanks") | FILLERS


# === stopwords ===================================================================================================
# Two stopword lists grew apart: the BM25 analyzer's (INDEX_STOPWORDS) and the anchors' (ANCHOR_STOPWORDS, the
# question's key words of generation.text). Both are written for this project; what they share is defined once.

# The function words both lists hold (85 words): conjunctions, prepositions, pronouns, auxiliaries and question words.
# Grammar (Indonesian closed classes), chosen for this project.
SHARED_STOPWORDS = _words(
    """ada adalah agar akan aku anda antara apa apakah atas atau bagaimana bagi bahwa banyak beberapa begitu belum
    berapa bisa boleh bukan dalam dan dapat dari demikian dengan di dia ia ialah ini itu jadi jika juga kalau kami
    kamu kapan karena ke kepada ketika kita lagi maka mana masih melalui mereka merupakan nya oleh pada para pernah
    saat saja sama sampai saya se sebagai sebelum sedang sehingga sejak seperti serta setelah siapa sudah supaya
    tanpa telah tentang terhadap tersebut tetapi untuk yaitu yakni yang"""
)

# The BM25 analyzer's stopwords (retrieval.analyzer.Analyzer's default; retrieval.facts' content words; the base of
# FUNCTION_WORDS). Written for this project: short and conservative, domain words such as "wajib", "semester" or
# "dosen" are kept. SHARED_STOPWORDS plus the question words with "-kah", the request verbs of a question
# ("sebutkan", "jelaskan"), chat particles and a few more function words:
INDEX_STOPWORDS = SHARED_STOPWORDS | _words(
    """akankah apabila bagaimanakah berapakah berikan daripada deh dimana dong gimana jelaskan kah kapankah kenapa
    kok lah manakah mengapa menurut mohon namun nih pun sebuah sebutkan secara seorang siapakah sih tolong tuh
    tunjukkan ya"""
)

# The anchors' stopwords (generation.text: content_words, anchors, strip_clitics; generation.compose). Written for
# this project. SHARED_STOPWORDS plus more function words and adverbs ("hanya", "lebih", "tidak"), a few
# answer-type words ("cara", "jumlah", "waktu", "satu", "semua") and English function words ("the", "what"):
ANCHOR_STOPWORDS = SHARED_STOPWORDS | _words(
    """a an and bahkan baru bersama cara for hanya harus hingga how in is jumlah kali kemudian lain lalu lebih maupun
    menjadi meski misalnya mungkin of on per salah sangat satu sekitar selain selama semua suatu tak tapi termasuk
    the tidak to waktu what when where which who"""
)

# Function words: a lexicon entry mapping onto these applies even when the site does not use them (the query
# normaliser, retrieval.normalize). INDEX_STOPWORDS plus formal function words, pronouns, time deixis and question
# words written for this project:
FUNCTION_WORDS = INDEX_STOPWORDS | _words(
    """agak banget begini beliau bertanya besok bila buat cukup darimana dulu hanya harus hendak ingin kasih kemana
    kemarin kemudian kurang lalu lebih maaf mari mau memang menanyakan mungkin nanti paling perlu permisi sana
    sangat sekali sekarang sini situ tadi tak tanya tentu terima terlalu terus tidak yuk"""
)


# === question words ==============================================================================================

# Question words and polite fillers: they never carry the topic of a question (generation.text's anchors and
# is_negated, generation.refine, generation.compose). Written for this project, plus FILLERS (the chat particles and
# forms of address the query normaliser drops: "sih", "deh", "nih", "kok", "gan", ...) and FUSED_QUESTION_WORDS.
_QUESTION_WORDS_WRITTEN = _words(
    """apa apakah siapa siapakah kapan kapankah dimana di mana manakah mana bagaimana bagaimanakah berapa berapakah
    mengapa kenapa kah yang tolong mohon dong ya kak min admin bisa bisakah boleh bolehkah sebutkan jelaskan
    ceritakan tahu info informasi ingin mau saya aku ku mu kami kita tentang mengenai seputar terima kasih halo hai
    tanya bertanya menanyakan apaan tuh"""
)
# … and the forms Indonesian fuses from them: "mana" with its preposition ("darimana", "kemana") and the question
# words of degree and time ("seberapa", "bilamana"), each also with the particle "-kah". Grammar, not fitted; on the
# IDK-MRC tune split "darimana" was the 29th commonest anchor its question's passage lacked (24 answerable questions).
FUSED_QUESTION_WORDS = frozenset(f"{p}mana" for p in ("di", "ke", "dari")) | {"seberapa", "bilamana"}
QUESTION_WORDS = (_QUESTION_WORDS_WRITTEN | FILLERS | FUSED_QUESTION_WORDS
                  | {f"{w}kah" for w in FUSED_QUESTION_WORDS})

# The wh-words: a clause holding one (or a colloquial spelling of one) is a question, never an aside
# (generation.text: split_aside, split_questions). Grammar, written for this project.
WH_WORDS = _words("apa apakah apaan siapa siapakah kapan kapankah dimana mana manakah bagaimana berapa berapakah "
                  "mengapa kenapa")

# The question words asking for a person. Grammar. Used by generation.answer_type (a "siapa" question wants a
# person) and in PERSON_ASKED_WORDS below; generation.refine adds the chat spelling "sapa" (CHAT_SUPPLEMENT) to tell
# whether the previous question asked who.
WHO_WORDS = _words("siapa siapakah")

# A question about who teaches asks with one of these (retrieval.facts: the teacher lookup, role words): WHO_WORDS
# plus the lecturer nouns, bare and with "-nya". Written for this project.
PERSON_ASKED_WORDS = WHO_WORDS | _words("dosen dosennya pengampu pengampunya pengajar pengajarnya")

# Question words that ask for a kind of answer (a person, an amount, a time, a place, a way): in a follow-up they
# mark an attribute asked about the previous subject, and they end the subject of a previous question
# (generation.refine). Grammar, written for this project; "gimana" is its one chat spelling.
TYPE_QUESTION_WORDS = _words("siapa siapakah berapa kapan mana dimana bagaimana gimana apa")

# Question words that want one answer (a time, an amount, a way, a place, a condition, yes or no): with one, "daftar"
# is the verb "register", not a request for a list (generation.answer_type, which adds "-kah", "-nya" and the
# colloquial spellings). Written for this project; on the IDK-MRC tune split, both questions holding "daftar" use it
# as the noun with "kapan(kah)" and want a year.
ONE_ANSWER_QUESTION_WORDS = _words("kapan berapa bagaimana cara dimana mana syarat bisa boleh apakah")


# === answer types ================================================================================================

# Words that name the kind of answer wanted ("syarat", "lama", "jadwal") rather than the topic: the evidence often
# paraphrases them, so anchor coverage gives them little weight (generation.support's soft anchors,
# generation.refine's ATTRIBUTE_WORDS). Written for this project.
ANSWER_TYPE_WORDS = _words(
    """syarat persyaratan cara lama jadwal waktu biaya jumlah besar tempat lokasi letak daftar jenis macam nama
    prosedur langkah tahapan ketentuan kriteria alamat nomor kontak tanggal hari jam pukul tahun berapa
    arti maksud pengertian singkatan kepanjangan contoh tujuan fungsi manfaat kapan siapa memiliki mempunyai dimiliki dipunyai milik
    punya terdapat tersedia provinsi kota kabupaten negara daerah wilayah benua pulau lokasi"""
)

# What a follow-up can ask *about* a subject rather than name a new one ("emailnya?", "di gedung mana?",
# "syaratnya apa aja?"): ANSWER_TYPE_WORDS plus the contact and profile fields a prodi site lists. A follow-up made
# only of these keeps the previous subject; one that names something else replaces it (generation.refine). A
# linguistic list written for this project, checked on the dev set's follow-ups and reported on the informal
# multi-turn items (docs/answers.md).
ATTRIBUTE_WORDS = ANSWER_TYPE_WORDS | _words(
    """email e-mail surel telepon telp hp wa whatsapp nomor no ruang ruangan gedung lantai kantor gelar bidang
    keahlian penelitian jabatan pendidikan sks kode bobot website web instagram ig kuota akreditasi peringkat
    s1 s2 s3 alur mekanisme proses tahap buka tutup operasional"""
)

# "Both" and "all of them" as a reply to an ask-back ("dua-duanya", "keduanya", "semua", "semuanya"), as the stems
# the index's analyzer gives them (generation.stages.subject). Grammar (Indonesian's closed class of totalising
# quantifiers), not fitted.
ALL_OF_THEM = _words("dua kedua semua seluruh")
# The words that join two subjects of one question ("pembina klub A sama klub B", "X dan Y"), with their chat
# spellings (generation.stages.subject asks the question about each). Grammar (coordinating conjunctions), not fitted.
COORDINATORS = _words("dan serta atau sama ama sm")
# "Each of them" ("masing-masing", chat "masing2"): a follow-up asked about every item the last reply listed
# (generation.stages.subject). Grammar (the distributive quantifier), not fitted.
EACH_OF_THEM = re.compile(r"\bmasing(?:-?masing|2)?\b", re.IGNORECASE)
# The relative pronoun that opens what a list question asks its items to be ("klub yang latihannya hari Sabtu apa
# saja"; chat "yg" is normalised to it): generation.subjects.focus tells listed items apart by that clause only.
# Grammar, not fitted.
RELATIVE = re.compile(r"(?<!\w)yang(?!\w)", re.IGNORECASE)

# Number words, in order (a tuple: CARDINALS[i] is i + 1, ORDINALS[i] is the (i + 1)-th). Grammar. Used by
# generation.answer_type (a "berapa" answer may give its number in words), generation.support ("tujuh hari" meets
# "7 hari": CARDINALS) and retrieval.facts ("semester lima", "semester kelima": CARDINALS and ORDINALS up to 8).
CARDINALS = ("satu", "dua", "tiga", "empat", "lima", "enam", "tujuh", "delapan", "sembilan", "sepuluh", "sebelas")
ORDINALS = ("pertama", "kedua", "ketiga", "keempat", "kelima", "keenam", "ketujuh", "kedelapan")
# the words that build larger numbers ("dua belas", "tiga puluh", "lima ratus ribu") and the fractions
NUMBER_MAGNITUDES = ("belas", "puluh", "ratus", "ribu", "juta", "miliar")
FRACTIONS = ("setengah", "seperempat")

# Months (full and abbreviated) and days of the week, the words a date is written in (generation.answer_type: a
# "kapan" answer; generation.compose: dates in a reply). Grammar (the Indonesian calendar); a tuple, because
# compose builds a regex from it.
MONTHS = ("januari", "februari", "maret", "april", "mei", "juni", "juli", "agustus", "september", "oktober",
          "november", "desember", "jan", "feb", "mar", "apr", "jun", "jul", "agu", "agt", "sep", "okt", "nov", "des")
DAYS = ("senin", "selasa", "rabu", "kamis", "jumat", "jum'at", "sabtu", "minggu", "ahad")
# Other words a time is given in ("pagi", "akhir semester", "setiap tahun"): generation.answer_type. Written for this
# project.
TIME_WORDS = ("pagi", "siang", "sore", "malam", "awal", "akhir", "setiap", "tiap", "ganjil", "genap", "tahun", "bulan",
              "pekan", "tanggal")
# Time deixis ("kemarin", "besok"): relative to the moment of asking, so a page never holds it; a soft anchor
# (generation.support). Grammar, with the colloquial "kemaren".
TIME_DEIXIS = _words("kemarin kemaren besok lusa tadi nanti sekarang kini barusan")
# Opening hours: "buka"/"tutup" next to a clock word ("jam bukanya", "buka sampai jam berapa") name the answer, the
# service hours a page gives (generation.support.is_soft). A linguistic rule written for this project.
HOURS_WORDS = _words("buka tutup operasional")
CLOCK_WORDS = _words("jam pukul")


# === clause words: negation, requests, asides ====================================================================

# The words that negate a clause in formal Indonesian; the query normaliser writes the colloquial ones this way
# ("gak", "nggak", "blm", "tdk" → "tidak", "belum"). Grammar, not fitted. Used by generation.text.is_negated.
NEGATIONS = _words("tidak tak bukan belum tanpa")
# A yes/no question offers the negation as the other answer rather than negating: "boleh gak ambil 2 beasiswa"
# (may one, or not), "bisa tidak", "ada tidak", "… atau tidak?". The negation then follows "atau" or one of these
# modal and existential words (generation.text.is_negated). Grammar, not fitted.
POLAR_BEFORE = _words("atau boleh bisa dapat perlu wajib harus ada mau")
# A yes/no tail ("… gak?", "… belum?") makes a clause a question (generation.text, with its colloquial spellings).
# Grammar.
YES_NO = _words("tidak belum bukan")

# Titles before a name: a full stop after them never ends a sentence ("Dr. Rahmat", "Prof. Sari"); generation.text
# (sentences, name_words). Written for this project.
PRE_TITLES = _words("dr drs dra prof ir h hj bpk ibu sdr yth no jl st kh")

# "info"/"informasi": a request ("minta info …") unless a content word comes before it ("Manajemen Informasi");
# generation.text.content_words. Written for this project.
REQUEST_NOUNS = _words("info informasi")
# verbs that ask for what follows ("minta info …", "butuh informasi …"): generation.text.content_words. Written for
# this project.
REQUEST_VERBS = _words("minta butuh perlu cari nyari kasih beri berikan")

# Asides: students explain themselves around the question ("… tanggal berapa? mau mudik soalnya", "aku anak
# farmasi, boleh ikut …?"). Word classes written for this project (Indonesian grammar: first-person pronouns,
# reason and purpose conjunctions), each extended with its colloquial spellings from the lexicon in generation.text.
FIRST_PERSON = _words("aku saya gue")
REASON_WORDS = _words("karena sebab supaya agar biar soalnya mau ingin pengen pingin")
# chat spellings of reason words the lexicon lacks ("soale" = soalnya, "pgn" = pengen). Written for this project.
REASON_CHAT_SPELLINGS = _words("soale pgn")
# "… mau mudik soalnya": the reason word ends the clause
TRAILING_REASON = _words("soalnya soale")
# chat reason words that start an aside even inside a question clause ("… brp persen biar aman"); the formal
# "karena"/"agar" may belong to the question itself ("runtuh karena apa")
CHAT_REASON = TRAILING_REASON | {"biar"}
# "for …": an aside only after a finished question
PURPOSE_WORDS = _words("buat untuk utk")

# Follow-up connectives ("kalau …?", "terus …?", "itu …"): not a new subject (generation.refine). Grammar, with their
# chat spellings ("kalo", "klo", "kl", "trus"); written for this project.
FOLLOWUP_CONNECTORS = _words("kalau kalo klo kl terus trus lalu dan itu tersebut gitu begitu")
# … and the words of a "kalau X?" / "bagaimana dengan X?" switch that are not X (generation.refine._what_about)
SWITCH_WORDS = FOLLOWUP_CONNECTORS | _words("nah bagaimana gimana gmn dengan yang yg")


# === derived: colloquial spellings ===============================================================================

# Colloquial spellings of the anchors' stopwords and the question words ("gimana", "aja", "kpn", "yg", "nanya",
# "gak"): every slang of the lexicon whose formal form consists only of such words, plus the lexicon's informal
# targets ("kalo", "enggak"); see colloquial_spellings. Shorthand the glossary expands to a content word ("mk" =
# mata kuliah, although the lexicon reads it as "maka") stays a content word. Derived from the lexicon, not fitted;
# used by generation.text (content words).
COLLOQUIAL_WORDS = colloquial_spellings(ANCHOR_STOPWORDS | QUESTION_WORDS) - frozenset(
    short for short, long in GLOSSARY.items()
    if any(w not in ANCHOR_STOPWORDS and w not in QUESTION_WORDS for w in long.split())
)
