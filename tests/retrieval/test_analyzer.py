from retrieval.analyzer import Analyzer


def test_codes_numbers_and_emails_stay_whole():
    terms = Analyzer()("Mata kuliah IF-301 (3 SKS), IPK 2.75; email: budi.s@uin.example.ac.id")
    assert "if-301" in terms and "301" in terms and "if" in terms
    assert "2.75" in terms and "2" not in terms
    assert "budi.s@uin.example.ac.id" in terms


def test_nfkc_lowercase_and_stopwords():
    terms = Analyzer()("Siapakah DOSEN yang mengajar ﬁsika di kampus?")  # 'ﬁ' ligature -> 'fi'
    assert terms == ["dosen", "mengajar", "fisika", "kampus"]


def test_stemming_is_optional():
    plain = Analyzer(stemming=False)("perancangan pembelajaran")
    stemmed = Analyzer(stemming=True)("perancangan pembelajaran IF-301")
    assert plain == ["perancangan", "pembelajaran"]
    assert stemmed[:2] == ["ancang", "ajar"] and "if-301" in stemmed
