"""Generate the static sample site in ``bot/sample_site/site/`` from the facts in ``content.py``.

Run ``python -m bot.sample_site.build_site`` after changing the content, and commit the output: the server only
serves the committed static files. The markup imitates a WordPress theme (mega-menu, breadcrumbs, sidebar widgets,
cookie banner, share buttons, inline scripts and styles) so that content extraction is tested for real.
"""

from __future__ import annotations

import html
import io
import json
import shutil
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from bot.sample_site import content as C

ROOT = Path(__file__).resolve().parent / "site"

MONTHS = ("Januari", "Februari", "Maret", "April", "Mei", "Juni", "Juli", "Agustus", "September", "Oktober",
          "November", "Desember")

PDF_PATH = "/wp-content/uploads/2024/02/pedoman-skripsi-informatika-2024.pdf"
ZIP_PATH = "/wp-content/uploads/2024/02/template-proposal-skripsi.zip"
IMAGE_PATH = "/wp-content/uploads/2023/08/gedung-sains-dan-teknologi.jpg"
CSS_PATH = "/wp-content/themes/astra-child/style.css"
BROKEN_PATH = "/pengumuman-jadwal-uas-semester-ganjil-2019/"  # linked, never served: the deliberate 404
ALIAS = ("/profile/", "/undergraduate-s1/")  # one page at two URLs
REDIRECT = ("/kurikulum/", "/curriculum/")  # an old slug, 301 to the canonical one
CP1252_PATH = "/alumni-testimonials/"
EXTERNAL_URL = "https://uin-malang.ac.id/"


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def indo_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def lecturer_url(slug: str) -> str:
    return f"/{slug}/"


def lec_link(slug: str) -> str:
    lec = C.LECTURER_BY_SLUG[slug]
    return f'<a href="{lecturer_url(slug)}">{esc(lec.name)}</a>'


def course_label(code: str) -> str:
    c = C.COURSE_BY_CODE[code]
    return f"{c.code} {c.name}"


@dataclass
class Page:
    path: str
    title: str
    body: str
    crumbs: tuple[tuple[str, str], ...] = ()  # (title, path) between Beranda and this page
    kind: str = "page"  # page | post | archive | home
    date: str = "2025-01-06"
    charset: str = "utf-8"
    canonical: str | None = None
    extra_classes: str = ""
    meta: dict[str, str] = field(default_factory=dict)


# --- chrome -------------------------------------------------------------------------------------------------

MENU: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("Beranda", "/", ()),
    ("Profil", "/undergraduate-s1/", (
        ("Undergraduate (S1)", "/undergraduate-s1/"),
        ("Visi, Misi dan Tujuan", "/vision-mission/"),
        ("Sejarah dan Milestone", "/history/"),
        ("Struktur Organisasi", "/organization-structure/"),
        ("Akreditasi", "/accreditation/"),
        ("Profil Lulusan", "/graduate-profile/"),
        ("Fasilitas", "/facilities/"),
    )),
    ("Akademik", "/curriculum/", (
        ("Curriculum", "/curriculum/"),
        ("Academic Calendar", "/academic-calendar/"),
        ("Prosedur KRS", "/krs-procedure/"),
        ("Kerja Praktik (PKL)", "/kerja-praktik-pkl/"),
        ("Panduan Skripsi", "/thesis-guide/"),
        ("Unduhan", "/downloads/"),
    )),
    ("Dosen", "/lecturer-and-staff/", (
        ("Lecturer and Staff", "/lecturer-and-staff/"),
        ("Tenaga Kependidikan", "/administrative-staff/"),
    )),
    ("Laboratorium", "/laboratorium/", tuple((lab.name, f"/{lab.slug}/") for lab in C.LABS)),
    ("Kemahasiswaan", "/organization-and-community/", (
        ("Organisasi dan Komunitas", "/organization-and-community/"),
        ("HMJ Teknik Informatika", "/hmj-ti/"),
        *((c.name, f"/{c.slug}/") for c in C.COMMUNITIES),
        ("Beasiswa", "/scholarship/"),
        ("Testimoni Alumni", CP1252_PATH),
    )),
    ("Berita", "/news/", tuple((label, f"/category/{slug}/") for slug, label in C.NEWS_CATEGORIES.items())),
    ("PMB", "/admission-pmb/", ()),
    ("Kontak", "/contact/", (("Kontak", "/contact/"), ("FAQ", "/faq/"))),
)

INLINE_STYLE = """
:root{--ast-global-color-0:#0b6e4f;--ast-global-color-1:#08543c;--ast-global-color-2:#1e293b}
.ast-container{max-width:1200px;margin:0 auto;padding:0 20px}
.main-header-menu .sub-menu{display:none;position:absolute}
.main-header-menu li:hover>.sub-menu{display:block}
#cookie-law-info-bar{position:fixed;bottom:0;left:0;right:0;background:#1e293b;color:#fff;padding:12px;z-index:9999}
"""


def _menu_html() -> str:
    items = []
    for i, (label, href, children) in enumerate(MENU, start=1):
        sub = ""
        if children:
            cols = "".join(
                f'<li class="menu-item menu-item-type-post_type"><a href="{h}" class="menu-link">{esc(t)}</a></li>'
                for t, h in children
            )
            sub = f'<ul class="sub-menu astra-megamenu">{cols}</ul>'
        cls = "menu-item menu-item-has-children" if children else "menu-item"
        items.append(f'<li id="menu-item-{100 + i}" class="{cls}"><a href="{href}" class="menu-link">'
                     f'{esc(label)}</a>{sub}</li>')
    return ('<nav id="site-navigation" class="main-header-bar-navigation" aria-label="Menu Utama">'
            f'<ul id="primary-menu" class="main-header-menu ast-nav-menu">{"".join(items)}</ul></nav>')


def _sidebar(recent: list[C.NewsPost]) -> str:
    posts = "".join(f'<li><a href="/{p.slug}/">{esc(p.title)}</a> <span class="post-date">{indo_date(p.date)}'
                    "</span></li>" for p in recent)
    cats = "".join(f'<li class="cat-item"><a href="/category/{s}/">{esc(label)}</a></li>'
                   for s, label in C.NEWS_CATEGORIES.items())
    return f"""<aside id="secondary" class="widget-area secondary" role="complementary">
<section id="search-2" class="widget widget_search"><form role="search" method="get" class="search-form" action="/">
<label><span class="screen-reader-text">Cari:</span><input type="search" class="search-field" placeholder="Cari &hellip;" name="s"></label>
<input type="submit" class="search-submit" value="Cari"></form></section>
<section id="recent-posts-2" class="widget widget_recent_entries"><h2 class="widget-title">Berita Terbaru</h2><ul>{posts}</ul></section>
<section id="categories-2" class="widget widget_categories"><h2 class="widget-title">Kategori</h2><ul>{cats}</ul></section>
<section id="nav_menu-3" class="widget widget_nav_menu"><h2 class="widget-title">Tautan Penting</h2><ul class="menu">
<li><a href="{EXTERNAL_URL}" target="_blank" rel="noopener">UIN Maulana Malik Ibrahim Malang</a></li>
<li><a href="https://saintek.uin-malang.ac.id/" target="_blank" rel="noopener">Fakultas Sains dan Teknologi</a></li>
<li><a href="/admission-pmb/">Penerimaan Mahasiswa Baru</a></li></ul></section>
</aside>"""


def _footer() -> str:
    return f"""<footer id="colophon" class="site-footer" role="contentinfo">
<div class="site-primary-footer-wrap ast-builder-grid-row-container"><div class="ast-container">
<section class="footer-widget-area widget-area"><h2 class="widget-title">Program Studi Teknik Informatika</h2>
<p>Fakultas Sains dan Teknologi<br>Universitas Islam Negeri Maulana Malik Ibrahim Malang</p>
<p class="footer-address">{esc(C.ADDRESS)}</p>
<p>Telepon: {esc(C.PHONE)} &middot; Email: <a href="mailto:{C.EMAIL}">{C.EMAIL}</a></p></section>
<section class="footer-widget-area widget-area"><h2 class="widget-title">Ikuti Kami</h2>
<ul class="social-links"><li><a href="https://www.instagram.com/informatika.uinmalang/" rel="noopener">Instagram</a></li>
<li><a href="https://www.youtube.com/@informatikauinmalang" rel="noopener">YouTube</a></li></ul></section>
</div></div>
<div class="site-below-footer-wrap"><div class="ast-container"><div class="ast-footer-copyright">
<p>Copyright &copy; 2025 Teknik Informatika UIN Maulana Malik Ibrahim Malang | Situs contoh prodi-bot, data ilustratif
| Powered by <a href="https://wordpress.org/" rel="nofollow">WordPress</a></p></div></div></div>
</footer>"""


def _cookie_banner() -> str:
    return """<div id="cookie-law-info-bar" data-nosnippet="true" role="dialog" aria-label="Persetujuan cookie">
<span>Situs ini menggunakan cookie untuk meningkatkan pengalaman Anda. Dengan melanjutkan, Anda menyetujui penggunaan cookie.
<a role="button" id="cookie_action_close_header" class="cli_action_button" href="#">Terima</a>
<a href="#" id="CONSTANT_OPEN_URL" class="cli-plugin-main-link">Baca Selengkapnya</a></span></div>
<script id="cookie-law-info-js-after">
(function(){var b=document.getElementById('cookie-law-info-bar');
if(document.cookie.indexOf('viewed_cookie_policy=yes')>-1){b.style.display='none';}
document.getElementById('cookie_action_close_header').addEventListener('click',function(e){e.preventDefault();
document.cookie='viewed_cookie_policy=yes; path=/; max-age=31536000';b.style.display='none';});})();
</script>"""


def _share(path: str, title: str) -> str:
    t = esc(title)
    return f"""<div class="sharedaddy sd-sharing-enabled"><div class="robots-nocontent sd-block sd-social">
<h3 class="sd-title">Bagikan ini:</h3><div class="sd-content"><ul>
<li class="share-facebook"><a rel="nofollow noopener" data-shared="sharing-facebook" class="share-facebook sd-button" href="#share-facebook" data-title="{t}" data-path="{path}"><span>Facebook</span></a></li>
<li class="share-twitter"><a rel="nofollow noopener" data-shared="sharing-twitter" class="share-twitter sd-button" href="#share-twitter" data-title="{t}" data-path="{path}"><span>X</span></a></li>
<li class="share-jetpack-whatsapp"><a rel="nofollow noopener" data-shared="" class="share-jetpack-whatsapp sd-button" href="#share-whatsapp" data-title="{t}" data-path="{path}"><span>WhatsApp</span></a></li>
</ul></div></div></div>"""


def _post_extras(page: Page) -> str:
    """Previous/next navigation, related posts and the comment form that WordPress themes put under a post."""
    slugs = [p.slug for p in C.NEWS]
    i = slugs.index(page.path.strip("/"))
    nav = []
    if i + 1 < len(C.NEWS):
        older = C.NEWS[i + 1]
        nav.append(f'<div class="nav-previous"><a href="/{older.slug}/" rel="prev">&larr; {esc(older.title)}</a></div>')
    if i > 0:
        newer = C.NEWS[i - 1]
        nav.append(f'<div class="nav-next"><a href="/{newer.slug}/" rel="next">{esc(newer.title)} &rarr;</a></div>')
    same = [p for p in C.NEWS if p.category == page.meta["category"] and p.slug != slugs[i]][:3]
    related = "".join(f'<li><a href="/{p.slug}/">{esc(p.title)}</a></li>' for p in same)
    return f"""<nav class="navigation post-navigation" aria-label="Pos"><div class="nav-links">{"".join(nav)}</div></nav>
<div class="jp-relatedposts"><h3 class="jp-relatedposts-headline">Berita terkait</h3><ul>{related}</ul></div>
<div id="comments" class="comments-area"><div id="respond" class="comment-respond">
<h3 id="reply-title" class="comment-reply-title">Tinggalkan Balasan</h3>
<form action="/wp-comments-post.php" method="post" id="commentform" class="comment-form">
<p class="comment-notes">Alamat email Anda tidak akan dipublikasikan. Ruas yang wajib ditandai *</p>
<p class="comment-form-comment"><label for="comment">Komentar *</label><textarea id="comment" name="comment" rows="6" required></textarea></p>
<p class="comment-form-author"><label for="author">Nama *</label><input id="author" name="author" type="text" required></p>
<p class="comment-form-email"><label for="email">Email *</label><input id="email" name="email" type="email" required></p>
<p class="form-submit"><input name="submit" type="submit" id="submit" class="submit" value="Kirim Komentar"></p>
</form></div></div>"""


def _breadcrumbs(page: Page) -> str:
    if page.kind == "home":
        return ""
    parts = ['<span><a href="/">Beranda</a></span>']
    parts += [f'<span><a href="{p}">{esc(t)}</a></span>' for t, p in page.crumbs]
    parts.append(f'<span class="breadcrumb_last" aria-current="page">{esc(page.title)}</span>')
    return ('<nav class="ast-breadcrumbs-wrapper" aria-label="Breadcrumbs"><div class="ast-breadcrumbs">'
            + " &raquo; ".join(parts) + "</div></nav>")


def render(page: Page, recent: list[C.NewsPost]) -> str:
    canonical = page.canonical or page.path
    body_class = {"home": "home page-template-default page", "post": "post-template-default single single-post",
                  "archive": "archive category", "page": "page-template-default page"}[page.kind]
    crumbs_ld = [{"@type": "ListItem", "position": 1, "name": "Beranda", "item": "/"}]
    for i, (t, p) in enumerate(page.crumbs, start=2):
        crumbs_ld.append({"@type": "ListItem", "position": i, "name": t, "item": p})
    ld = json.dumps({"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": crumbs_ld},
                    ensure_ascii=False)
    if page.kind == "post":
        meta = (f'<div class="entry-meta">Diposting pada <time class="entry-date published" datetime="{page.date}">'
                f'{indo_date(page.date)}</time> oleh <span class="author vcard">Admin Informatika</span> '
                f'dalam <a href="/category/{page.meta["category"]}/" rel="category tag">'
                f'{esc(C.NEWS_CATEGORIES[page.meta["category"]])}</a></div>')
    else:
        meta = ""
    share = _share(canonical, page.title) if page.kind in ("post", "page") else ""
    if page.kind == "post":
        share += _post_extras(page)
    return f"""<!DOCTYPE html>
<html lang="id-ID">
<head>
<meta charset="{page.charset}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(page.title)} &#8211; {esc(C.SITE_NAME)}</title>
<meta name="description" content="{esc(page.title)} - Program Studi Teknik Informatika UIN Maulana Malik Ibrahim Malang">
<link rel="canonical" href="{canonical}">
<meta name="generator" content="WordPress 6.4.3">
<link rel="stylesheet" id="astra-child-css" href="{CSS_PATH}?ver=1.0.2" media="all">
<style id="astra-theme-css-inline-css">{INLINE_STYLE}</style>
<script type="application/ld+json" class="yoast-schema-graph">{ld}</script>
<script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments);}}gtag('js',new Date());gtag('config','G-PRODIBOT01');</script>
</head>
<body class="{body_class} ast-right-sidebar {page.extra_classes}">
<a class="skip-link screen-reader-text" href="#content">Lewati ke konten</a>
<div id="page" class="hfeed site">
<header id="masthead" class="site-header header-main-layout-1" role="banner">
<div class="ast-above-header-bar"><div class="ast-container"><span class="top-contact">{esc(C.PHONE)} | {C.EMAIL}</span>
<span class="lang-switch"><a href="/" hreflang="id">ID</a> | <a href="/" hreflang="en">EN</a></span></div></div>
<div class="main-header-bar"><div class="ast-container">
<div class="site-branding"><span class="site-title"><a href="/" rel="home">Teknik Informatika</a></span>
<p class="site-description">UIN Maulana Malik Ibrahim Malang</p></div>
{_menu_html()}
</div></div>
</header>
<div id="content" class="site-content"><div class="ast-container">
{_breadcrumbs(page)}
<div id="primary" class="content-area primary"><main id="main" class="site-main">
<article class="{'post' if page.kind == 'post' else 'page'} type-{'post' if page.kind == 'post' else 'page'} status-publish hentry">
<header class="entry-header"><h1 class="entry-title" itemprop="headline">{esc(page.title)}</h1>{meta}</header>
<div class="entry-content clear" itemprop="text">
{page.body}
</div>
{share}
</article>
</main></div>
{_sidebar(recent)}
</div></div>
{_footer()}
</div>
{_cookie_banner()}
<script id="astra-theme-js-js-extra">var astra={{"break_point":"921","isRtl":"","is_scroll_to_top":"1"}};</script>
</body>
</html>
"""


# --- pages --------------------------------------------------------------------------------------------------


def _p(*paragraphs: str) -> str:
    return "".join(f"<p>{esc(t)}</p>" for t in paragraphs)


def _ul(items: list[str] | tuple[str, ...], raw: bool = False) -> str:
    return "<ul>" + "".join(f"<li>{i if raw else esc(i)}</li>" for i in items) + "</ul>"


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]], cls: str = "", raw: bool = False) -> str:
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c if raw else esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<figure class="wp-block-table {cls}"><table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table></figure>'


def home_page() -> Page:
    news = "".join(
        f'<article class="post-excerpt"><h3><a href="/{p.slug}/">{esc(p.title)}</a></h3>'
        f'<p class="post-date">{indo_date(p.date)}</p><p>{esc(p.paragraphs[0])}</p>'
        f'<a class="read-more" href="/{p.slug}/">Baca selengkapnya &raquo;</a></article>'
        for p in C.NEWS[:4]
    )
    body = f"""
<div class="wp-block-cover hero"><h2>Selamat Datang di Program Studi Teknik Informatika</h2>
<p>Program sarjana (S1) di Fakultas Sains dan Teknologi UIN Maulana Malik Ibrahim Malang yang memadukan ilmu
komputer dengan nilai-nilai Islam. Terakreditasi <strong>Unggul</strong> oleh LAM INFOKOM.</p>
<p><a class="wp-block-button__link" href="{ALIAS[0]}">Profil Prodi</a> <a class="wp-block-button__link" href="/admission-pmb/">Info PMB</a></p></div>
<h2>Sambutan Ketua Program Studi</h2>
<p>Assalamu'alaikum warahmatullahi wabarakatuh. Selamat datang di laman resmi Program Studi Teknik Informatika.
Melalui laman ini kami menyampaikan informasi akademik, kegiatan mahasiswa, dan capaian program studi.
Semoga bermanfaat. &mdash; {lec_link(C.HEAD.slug)}, Ketua Program Studi</p>
<h2>Layanan Akademik</h2>
{_ul(['<a href="/curriculum/">Kurikulum 144 SKS</a>', '<a href="/academic-calendar/">Kalender Akademik</a>',
      '<a href="/krs-procedure/">Prosedur KRS</a>', '<a href="/kerja-praktik-pkl/">Kerja Praktik (PKL)</a>',
      '<a href="/thesis-guide/">Panduan Skripsi</a>', '<a href="/scholarship/">Beasiswa</a>',
      '<a href="/faq/">FAQ</a>'], raw=True)}
<h2>Berita Terbaru</h2>
{news}
<p><a href="/news/">Lihat semua berita &raquo;</a></p>
"""
    return Page("/", "Beranda", body, kind="home")


def profile_pages() -> list[Page]:
    crumbs = (("Profil", "/undergraduate-s1/"),)
    head, sec = C.HEAD, C.SECRETARY
    labs = _ul([f'<a href="/{lab.slug}/">{esc(lab.name)}</a> &ndash; {esc(lab.location)}' for lab in C.LABS], raw=True)
    comms = ", ".join(f'<a href="/{c.slug}/">{esc(c.name)}</a>' for c in C.COMMUNITIES)
    s1 = f"""
<p>Program Studi Teknik Informatika (Undergraduate S1) UIN Maulana Malik Ibrahim Malang merupakan program sarjana
di bawah Fakultas Sains dan Teknologi. Program studi ini dibuka pada tahun 2004 dan saat ini terakreditasi
<strong>Unggul</strong> oleh LAM INFOKOM.</p>
{_table(("Keterangan", "Informasi"), [
        ("Jenjang", "Sarjana (S1)"), ("Gelar lulusan", "Sarjana Komputer (S.Kom.)"),
        ("Masa studi normal", "8 semester"), ("Beban studi", f"{C.TOTAL_SKS} SKS"),
        ("Akreditasi", "Unggul (LAM INFOKOM, 2023–2028)"),
        ("Ketua Program Studi", head.name), ("Sekretaris Program Studi", sec.name),
    ], cls="profil-prodi")}
<h2>Visi</h2><p>{esc(C.VISION)}</p>
<p>Misi dan tujuan selengkapnya dapat dibaca pada halaman <a href="/vision-mission/">Visi, Misi dan Tujuan</a>.</p>
<h2>Pimpinan Program Studi</h2>
<p>Program studi dipimpin oleh Ketua Program Studi {lec_link(head.slug)} dan Sekretaris Program Studi
{lec_link(sec.slug)}. Struktur lengkap ada di halaman <a href="/organization-structure/">Struktur Organisasi</a>.</p>
<h2>Laboratorium</h2>
<p>Kegiatan praktikum dan penelitian didukung oleh enam laboratorium:</p>{labs}
<h2>Kelompok Bidang Keahlian</h2>
{_ul(list(C.FIELDS))}
<h2>Komunitas Mahasiswa</h2><p>Mahasiswa dapat bergabung dengan komunitas minat: {comms}.</p>
"""
    vm = f"""<h2>Visi</h2><p>{esc(C.VISION)}</p><h2>Misi</h2><ol>{''.join(f'<li>{esc(m)}</li>' for m in C.MISSION)}</ol>
<h2>Tujuan</h2><ol>{''.join(f'<li>{esc(m)}</li>' for m in C.OBJECTIVES)}</ol>"""
    hist = _p(
        "Program Studi Teknik Informatika berdiri pada tahun 2004, bersamaan dengan pengembangan Fakultas Sains dan "
        "Teknologi, untuk memenuhi kebutuhan tenaga ahli teknologi informasi yang berlandaskan nilai-nilai Islam.",
        "Sejak angkatan pertama, program studi terus berkembang dalam jumlah mahasiswa, dosen, laboratorium, dan "
        "capaian akreditasi.",
    ) + "<h2>Milestone</h2>" + _table(("Tahun", "Peristiwa"), list(C.MILESTONES), cls="timeline")
    org_rows = [("Dekan Fakultas Sains dan Teknologi", "Prof. Dr. Sri Harini, M.Si.")]
    org_rows += [(lec.role, lec.name) for lec in C.LECTURERS if lec.role]
    org_rows += [(s.position, s.name) for s in C.STAFF]
    org = _p("Struktur organisasi program studi terdiri dari ketua program studi, sekretaris program studi, "
             "kepala laboratorium, koordinator kegiatan akademik, dosen, serta tenaga kependidikan.") + _table(
        ("Jabatan", "Nama"), org_rows, cls="struktur-organisasi")
    acc = _p(
        "Program Studi Teknik Informatika saat ini terakreditasi Unggul oleh Lembaga Akreditasi Mandiri Informatika "
        f"dan Komputer (LAM INFOKOM) berdasarkan {C.ACCREDITATION_CERT}.",
    ) + "<h2>Riwayat Akreditasi</h2>" + _table(
        ("Tahun", "Lembaga", "Peringkat", "Masa Berlaku"), list(C.ACCREDITATION), cls="akreditasi") + (
        '<p>Berita terkait: <a href="/prodi-teknik-informatika-raih-akreditasi-unggul-lam-infokom/">'
        "Prodi Teknik Informatika Raih Akreditasi Unggul dari LAM INFOKOM</a>.</p>")
    grad = _p("Kurikulum dirancang untuk menghasilkan lulusan dengan profil berikut:") + _table(
        ("Profil Lulusan", "Deskripsi"), list(C.GRADUATE_PROFILES)) + _p(
        "Capaian pembelajaran lulusan mencakup sikap, pengetahuan, keterampilan umum, dan keterampilan khusus "
        "sesuai Kerangka Kualifikasi Nasional Indonesia (KKNI) level 6.")
    fac = f"""<figure class="wp-block-image size-large"><img src="{IMAGE_PATH}" alt="Gedung Sains dan Teknologi UIN Malang" width="640" height="360"><figcaption>Gedung Sains dan Teknologi, lokasi perkuliahan Teknik Informatika.</figcaption></figure>
<p>Perkuliahan Teknik Informatika berlangsung di Gedung Sains dan Teknologi yang memiliki ruang kelas ber-AC,
ruang seminar B.2.05, ruang baca program studi di lantai 2, jaringan Wi-Fi kampus, dan enam laboratorium.</p>
<p>Daftar laboratorium beserta lokasinya dapat dilihat pada halaman <a href="/laboratorium/">Laboratories</a>.</p>"""
    return [
        Page("/undergraduate-s1/", "Undergraduate (S1)", s1, crumbs=()),
        Page("/vision-mission/", "Visi, Misi dan Tujuan", vm, crumbs=crumbs),
        Page("/history/", "Sejarah dan Milestone", hist, crumbs=crumbs),
        Page("/organization-structure/", "Struktur Organisasi", org, crumbs=crumbs),
        Page("/accreditation/", "Akreditasi", acc, crumbs=crumbs),
        Page("/graduate-profile/", "Profil Lulusan", grad, crumbs=crumbs),
        Page("/facilities/", "Fasilitas", fac, crumbs=crumbs),
    ]


def curriculum_page() -> Page:
    rows = [(c.code, c.name, str(c.sks), str(c.semester), c.kind) for c in C.COURSES]
    wajib = sum(c.sks for c in C.COURSES if c.kind == "Wajib")
    pilihan = sum(c.sks for c in C.COURSES if c.kind == "Pilihan")
    total = sum(c.sks for c in C.COURSES)
    assert total == C.TOTAL_SKS, total
    per_sem = [(f"Semester {s}", str(sum(c.sks for c in C.COURSES if c.semester == s))) for s in range(1, 9)]
    table = _table(("Kode", "Mata Kuliah", "SKS", "Semester", "Sifat"), rows, cls="kurikulum")
    table = table.replace("</tbody>", f'</tbody><tfoot><tr><th colspan="2">Total</th><th>{total}</th>'
                                      '<th colspan="2">SKS</th></tr></tfoot>')
    body = _p(
        f"Kurikulum Program Studi Teknik Informatika (Kurikulum OBE 2020) terdiri dari {total} SKS yang ditempuh "
        f"dalam 8 semester: {wajib} SKS mata kuliah wajib dan {pilihan} SKS mata kuliah pilihan.",
        "Kode IF adalah mata kuliah program studi, sedangkan kode UIN adalah mata kuliah keislaman dan umum "
        "universitas.",
    ) + "<h2>Daftar Mata Kuliah</h2>" + table + "<h2>Beban SKS per Semester</h2>" + _table(
        ("Semester", "SKS"), per_sem) + "<h2>Persyaratan Kelulusan</h2>" + _ul([
            f"Lulus seluruh mata kuliah dengan total {total} SKS dan IPK minimal 2,00.",
            "Lulus Kerja Praktik (IF-701) dan Skripsi (IF-801).",
            "Memiliki sertifikat TOEFL minimal 450 dan TOAFL minimal 400.",
            "Memiliki sertifikat Pengembangan Kepribadian Mahasiswa dari Ma'had Al-Jami'ah.",
        ])
    return Page("/curriculum/", "Curriculum", body, crumbs=(("Akademik", "/curriculum/"),))


def lecturer_pages() -> list[Page]:
    crumbs = (("Dosen", "/lecturer-and-staff/"),)
    rows = [(lec_link(lec.slug), esc(lec.functional), esc(lec.role or "Dosen"), esc(lec.field)) for lec in C.LECTURERS]
    index = _p("Program Studi Teknik Informatika memiliki dosen tetap dengan keahlian di bidang Intelligent System, "
               "Software Engineering, Computer Network & Security, Multimedia & Game, dan Data Science.") + _table(
        ("Nama", "Jabatan Fungsional", "Jabatan", "Bidang Keahlian"), rows, cls="lecturer-list", raw=True) + (
        '<p>Daftar tenaga kependidikan ada di halaman <a href="/administrative-staff/">Tenaga Kependidikan</a>.</p>')
    pages = [Page("/lecturer-and-staff/", "Lecturer and Staff", index)]
    for lec in C.LECTURERS:
        courses = "<br>".join(esc(course_label(code)) for code in lec.courses)
        fields = [
            ("Nama", esc(lec.name)), ("NIP", esc(lec.nip)), ("NIDN", esc(lec.nidn)),
            ("Jabatan Fungsional", esc(lec.functional)), ("Jabatan", esc(lec.role or "Dosen")),
            ("Bidang Keahlian", esc(lec.field)), ("Research Fields", esc(lec.research)),
            ("Email", f'<a href="mailto:{lec.email}">{lec.email}</a>'),
            ("Pendidikan", "<br>".join(esc(e) for e in lec.education)),
            ("Mata Kuliah", courses), ("Ruang", esc(lec.room)),
            ("Working Days/Hours", "Mon - Fri / 7:30AM - 16:00PM"), ("Sinta ID", lec.sinta),
        ]
        if lec.scopus:
            fields.append(("Scopus ID", lec.scopus))
        if lec.orcid:
            fields.append(("ORCID ID", lec.orcid))
        dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in fields)
        body = (f'<div class="lecturer-profile"><h2 class="lecturer-name">{esc(lec.name)}</h2>'
                f'<dl class="lecturer-fields">{dl}</dl></div>'
                f'<p><a href="/lecturer-and-staff/">&laquo; Kembali ke daftar dosen</a></p>')
        pages.append(Page(lecturer_url(lec.slug), lec.name, body, crumbs=crumbs))
    staff = _table(("Nama", "Jabatan", "Email"), [(s.name, s.position, s.email) for s in C.STAFF]) + _p(
        f"Layanan administrasi program studi buka {C.OFFICE_HOURS} di ruang administrasi B.2.03.")
    pages.append(Page("/administrative-staff/", "Tenaga Kependidikan", staff, crumbs=crumbs))
    return pages


def lab_pages() -> list[Page]:
    rows = [(f'<a href="/{lab.slug}/">{esc(lab.name)}</a>', esc(lab.location), lec_link(lab.head)) for lab in C.LABS]
    index = _p("Program studi memiliki enam laboratorium untuk praktikum, penelitian dosen, dan skripsi mahasiswa.") + \
        _table(("Laboratorium", "Lokasi", "Kepala Laboratorium"), rows, cls="lab-list", raw=True)
    pages = [Page("/laboratorium/", "Laboratories", index)]
    for lab in C.LABS:
        courses = _ul([course_label(c) for c in lab.courses])
        body = (f"<p><strong>{esc(lab.english)}</strong></p>"
                + _p(f"{lab.name} digunakan untuk {lab.focus}.",
                     f"Lokasi: {lab.location}. Jam layanan: {lab.hours}.",
                     f"Fasilitas: {lab.equipment}.")
                + f"<p>Kepala laboratorium: {lec_link(lab.head)}.</p>"
                + "<h2>Praktikum yang dilaksanakan</h2>" + courses)
        pages.append(Page(f"/{lab.slug}/", lab.name, body, crumbs=(("Laboratorium", "/laboratorium/"),)))
    return pages


def community_pages() -> list[Page]:
    crumbs = (("Kemahasiswaan", "/organization-and-community/"),)
    rows = [(f'<a href="/{c.slug}/">{esc(c.full_name)}</a>', esc(c.focus)) for c in C.COMMUNITIES]
    index = _p(
        "Selain Himpunan Mahasiswa Jurusan (HMJ), mahasiswa Teknik Informatika dapat bergabung dengan komunitas "
        "minat dan bakat. Setiap komunitas dibina oleh seorang dosen.") + _table(
        ("Komunitas", "Fokus"), rows, cls="community-list", raw=True) + (
        '<p>Organisasi kemahasiswaan tingkat jurusan: <a href="/hmj-ti/">HMJ Teknik Informatika</a>.</p>')
    pages = [Page("/organization-and-community/", "Organisasi dan Komunitas", index)]
    hmj = _p(
        "Himpunan Mahasiswa Jurusan (HMJ) Teknik Informatika adalah organisasi kemahasiswaan intra kampus di tingkat "
        "program studi. HMJ menaungi dan mengoordinasikan komunitas-komunitas mahasiswa.",
        "Program kerja HMJ meliputi penyambutan mahasiswa baru, IT Incubation, Informatics Expo, Informatics Sport "
        "Community (ISC), dan kajian keislaman mingguan.",
        "Kepengurusan HMJ berganti setiap tahun melalui pemilihan umum mahasiswa jurusan pada bulan Desember.",
    ) + '<p>Berita: <a href="/rapat-kerja-pengurus-hmj-ti-2019/">Rapat Kerja Pengurus HMJ TI 2019</a>.</p>'
    pages.append(Page("/hmj-ti/", "HMJ Teknik Informatika", hmj, crumbs=crumbs))
    for c in C.COMMUNITIES:
        body = _p(*c.paragraphs) + _table(("Keterangan", "Informasi"), [
            ("Nama", esc(c.full_name)), ("Fokus", esc(c.focus)), ("Tahun berdiri", str(c.founded)),
            ("Dosen pembina", lec_link(c.advisor)), ("Jadwal kegiatan", esc(c.schedule)),
        ], cls="community-info", raw=True) + (
            '<p>Lihat juga: <a href="/organization-and-community/">komunitas lainnya</a> dan '
            '<a href="/coordination-with-student-communities/">agenda koordinasi komunitas</a>.</p>')
        pages.append(Page(f"/{c.slug}/", c.name if c.slug != "google-developer-student-club-dsc"
                          else "Google Developer Student Club (GDSC)", body, crumbs=crumbs))
    return pages


def news_pages() -> list[Page]:
    pages = []
    for post in C.NEWS:
        pages.append(Page(f"/{post.slug}/", post.title, _p(*post.paragraphs),
                          crumbs=(("Berita", "/news/"),), kind="post", date=post.date,
                          meta={"category": post.category}))

    def listing(posts: tuple[C.NewsPost, ...] | list[C.NewsPost]) -> str:
        return "".join(
            f'<article class="post-excerpt"><h2 class="entry-title"><a href="/{p.slug}/">{esc(p.title)}</a></h2>'
            f'<p class="post-date">{indo_date(p.date)}</p><p>{esc(p.paragraphs[0][:160])}&hellip;</p></article>'
            for p in posts)

    first, rest = C.NEWS[:10], C.NEWS[10:]
    pages.append(Page("/news/", "Berita", listing(first) + '<nav class="pagination"><a class="next page-numbers" '
                      'href="/news/page/2/">Berikutnya &raquo;</a></nav>', kind="archive"))
    pages.append(Page("/news/page/2/", "Berita – Halaman 2", listing(rest) + '<nav class="pagination">'
                      '<a class="prev page-numbers" href="/news/">&laquo; Sebelumnya</a></nav>', kind="archive",
                      crumbs=(("Berita", "/news/"),)))
    for slug, label in C.NEWS_CATEGORIES.items():
        posts = [p for p in C.NEWS if p.category == slug]
        pages.append(Page(f"/category/{slug}/", f"Kategori: {label}", listing(posts), kind="archive",
                          crumbs=(("Berita", "/news/"),)))
    return pages


def academic_pages() -> list[Page]:
    crumbs = (("Akademik", "/curriculum/"),)
    cal = _p("Berikut kalender akademik Program Studi Teknik Informatika tahun akademik 2025/2026.") + _table(
        ("Kegiatan", "Tanggal"), list(C.CALENDAR), cls="kalender") + _p(
        "Perubahan jadwal akan diumumkan melalui halaman Berita.")
    krs = _p("Kartu Rencana Studi (KRS) diisi setiap awal semester melalui SIAKAD UIN Malang. Langkah-langkahnya:") + \
        "<ol>" + "".join(f"<li>{esc(s)}</li>" for s in (
            "Lunasi pembayaran semester dan pastikan status mahasiswa aktif.",
            "Masuk ke SIAKAD menggunakan NIM dan kata sandi.",
            "Pilih menu KRS, lalu pilih mata kuliah dan kelas sesuai jadwal yang ditawarkan.",
            "Perhatikan batas SKS: maksimal 24 SKS jika IP semester sebelumnya minimal 3,00, dan maksimal 20 SKS "
            "jika di bawah 3,00.",
            "Konsultasikan rencana studi dengan dosen pembimbing akademik dan minta persetujuan (validasi) KRS.",
            "Cetak atau unduh KRS yang telah divalidasi sebagai bukti.",
        )) + "</ol>" + _p(
        "Perubahan KRS (add/drop) hanya dapat dilakukan sampai batas yang tercantum di Kalender Akademik.") + (
        '<p>Jadwal pengisian KRS: lihat <a href="/academic-calendar/">Academic Calendar</a>.</p>')
    pkl = _p(
        "Kerja Praktik atau Praktik Kerja Lapangan (PKL) adalah mata kuliah wajib IF-701 dengan bobot 3 SKS. "
        "Mahasiswa bekerja di instansi pemerintah atau perusahaan di bidang teknologi informasi minimal 1 bulan "
        "(160 jam kerja).",
    ) + "<h2>Syarat</h2>" + _ul([
        "Telah lulus minimal 100 SKS.",
        "Mengisi formulir pengajuan PKL dan mendapat persetujuan Koordinator PKL.",
        "Membawa surat pengantar resmi dari program studi ke instansi tujuan.",
    ]) + "<h2>Prosedur</h2><ol>" + "".join(f"<li>{esc(s)}</li>" for s in (
        "Cari instansi tujuan dan konsultasikan dengan Koordinator PKL.",
        "Ajukan surat pengantar melalui administrasi program studi (diproses paling lama 3 hari kerja).",
        "Laksanakan PKL dan isi logbook harian yang ditandatangani pembimbing lapangan.",
        "Susun laporan PKL dengan bimbingan dosen pembimbing.",
        "Ikuti ujian presentasi PKL paling lambat satu bulan setelah PKL selesai.",
    )) + f"</ol><p>Koordinator PKL: {lec_link('yusuf-maulana-ibrahim-m-kom')}.</p>"
    thesis = _p(
        "Skripsi (IF-801) berbobot 6 SKS dan merupakan tugas akhir mahasiswa Teknik Informatika. Tahapannya adalah "
        "pengajuan judul, Seminar Proposal Skripsi (IF-703), penelitian, seminar hasil, dan ujian skripsi.",
        "Pedoman penulisan lengkap, termasuk format naskah dan aturan sitasi, tersedia dalam dokumen PDF berikut.",
    ) + (f'<p><a class="wp-block-file__button" href="{PDF_PATH}">Unduh Pedoman Skripsi Teknik Informatika 2024 (PDF)'
         f'</a></p><p><a href="{ZIP_PATH}">Unduh template proposal skripsi (ZIP)</a></p>'
         f"<p>Koordinator Skripsi: {lec_link('dr-muhammad-ainul-yaqin-m-kom')}.</p>")
    downloads = _table(("Dokumen", "Format"), [
        (f'<a href="{PDF_PATH}">Pedoman Skripsi Teknik Informatika 2024</a>', "PDF"),
        (f'<a href="{ZIP_PATH}">Template Proposal Skripsi</a>', "ZIP"),
        (f'<a href="{BROKEN_PATH}">Pengumuman Jadwal UAS Semester Ganjil 2019 (arsip)</a>', "HTML"),
    ], raw=True)
    return [
        Page("/academic-calendar/", "Academic Calendar", cal, crumbs=crumbs),
        Page("/krs-procedure/", "Prosedur Pengisian KRS", krs, crumbs=crumbs),
        Page("/kerja-praktik-pkl/", "Panduan Kerja Praktik (PKL)", pkl, crumbs=crumbs),
        Page("/thesis-guide/", "Panduan Skripsi", thesis, crumbs=crumbs),
        Page("/downloads/", "Unduhan", downloads, crumbs=crumbs),
    ]


def service_pages() -> list[Page]:
    sch = _p("Mahasiswa Teknik Informatika dapat mengikuti berbagai program beasiswa berikut. Informasi pembukaan "
             "pendaftaran diumumkan melalui halaman Berita.") + _table(
        ("Beasiswa", "Penyelenggara", "Sasaran", "Pendaftaran"), list(C.SCHOLARSHIPS), cls="beasiswa") + _p(
        "Mahasiswa hanya boleh menerima satu beasiswa dalam periode yang sama.")
    pmb = _p(
        "Penerimaan mahasiswa baru Program Studi Teknik Informatika dilaksanakan oleh universitas melalui empat "
        "jalur seleksi.",
    ) + _table(("Jalur", "Keterangan"), [
        ("SNBP", "Seleksi Nasional Berdasarkan Prestasi, menggunakan nilai rapor"),
        ("SNBT", "Seleksi Nasional Berdasarkan Tes (UTBK)"),
        ("UM-PTKIN", "Ujian Masuk Perguruan Tinggi Keagamaan Islam Negeri"),
        ("Mandiri", "Seleksi mandiri UIN Maulana Malik Ibrahim Malang (tes tulis berbasis komputer)"),
    ]) + _p(
        "Calon mahasiswa Teknik Informatika disarankan berasal dari SMA/MA jurusan IPA atau SMK bidang teknologi "
        "informasi. Daya tampung program studi tahun 2025 adalah 160 mahasiswa.",
    ) + f'<p>Informasi jadwal dan pendaftaran: <a href="{EXTERNAL_URL}" rel="noopener">laman resmi UIN Malang</a>.</p>'
    contact = _table(("Kontak", "Informasi"), [
        ("Alamat", C.ADDRESS), ("Telepon", C.PHONE), ("WhatsApp layanan akademik", C.WHATSAPP),
        ("Email", C.EMAIL), ("Jam layanan", C.OFFICE_HOURS), ("Ruang administrasi", "B.2.03"),
    ], cls="kontak") + _p("Untuk pertanyaan tentang dosen tertentu, silakan hubungi email dosen yang tercantum pada "
                          "halaman profilnya.")
    faq = "".join(f'<div class="faq-item"><h3>{esc(q)}</h3><p>{esc(a)}</p></div>' for q, a in C.FAQ)
    faq += ('<div class="faq-item"><h3>Di mana daftar mata kuliah dan jumlah SKS-nya?</h3><p>Daftar lengkap mata '
            f'kuliah ada di halaman <a href="{REDIRECT[0]}">kurikulum</a>.</p></div>')
    return [
        Page("/scholarship/", "Beasiswa", sch, crumbs=(("Kemahasiswaan", "/organization-and-community/"),)),
        Page("/admission-pmb/", "Penerimaan Mahasiswa Baru (PMB)", pmb),
        Page("/contact/", "Kontak", contact),
        Page("/faq/", "FAQ", faq),
    ]


def alumni_page() -> Page:
    """Served as windows-1252: non-ASCII characters must survive the round trip."""
    body = _p(
        "Testimoni alumni Teknik Informatika – cerita mereka setelah lulus.",
        "“Kurikulum 144 SKS memberi bekal yang lengkap. Sekarang saya bekerja sebagai Software Engineer di Jakarta.” "
        "— Rahmat Hidayat, angkatan 2015.",
        "“Pengalaman di komunitas ETH0 membuat saya percaya diri menjadi Network Engineer.” — Dina Lestari, "
        "angkatan 2016.",
        "“Saya melanjutkan studi S2 di Université de Lyon berkat dukungan dosen pembimbing.” — Farid Ma’ruf, "
        "angkatan 2017.",
        "Setiap tahun sekitar 80% lulusan memperoleh pekerjaan pertama dalam waktu kurang dari enam bulan.",
    )
    return Page(CP1252_PATH, "Testimoni Alumni", body, crumbs=(("Kemahasiswaan", "/organization-and-community/"),),
                charset="windows-1252")


def all_pages() -> list[Page]:
    pages = [home_page(), *profile_pages(), curriculum_page(), *lecturer_pages(), *lab_pages(),
             *community_pages(), *news_pages(), *academic_pages(), *service_pages(), alumni_page()]
    paths = [p.path for p in pages]
    assert len(paths) == len(set(paths)), "duplicate page paths"
    return pages


# --- binary assets ------------------------------------------------------------------------------------------

FIXED_TIME = datetime(2024, 2, 1, 8, 0, tzinfo=UTC)

PDF_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("BAB I. Ketentuan Umum", (
        "Skripsi adalah karya ilmiah mahasiswa Program Studi Teknik Informatika yang disusun berdasarkan penelitian "
        "di bidang informatika. Skripsi (IF-801) berbobot 6 SKS.",
        "Mahasiswa dapat mengajukan skripsi setelah lulus minimal 120 SKS dan lulus mata kuliah Metodologi "
        "Penelitian (IF-507).",
        "Setiap mahasiswa dibimbing oleh dua dosen pembimbing: Pembimbing I dengan jabatan fungsional minimal Lektor "
        "dan Pembimbing II sesuai bidang keahlian topik skripsi.",
    )),
    ("BAB II. Tahapan Skripsi", (
        "1. Pengajuan judul melalui Sistem Informasi Skripsi dengan melampirkan transkrip nilai.",
        "2. Penetapan dosen pembimbing oleh Koordinator Skripsi paling lama 14 hari kerja setelah pengajuan.",
        "3. Seminar Proposal Skripsi (IF-703) di hadapan dua dosen penguji.",
        "4. Pelaksanaan penelitian dengan bimbingan minimal 8 kali yang dicatat pada kartu bimbingan.",
        "5. Seminar hasil, kemudian ujian skripsi di hadapan tiga dosen penguji.",
        "6. Revisi naskah paling lama 30 hari setelah ujian skripsi, lalu unggah naskah final ke repositori "
        "universitas.",
    )),
    ("BAB III. Format Penulisan", (
        "Naskah ditulis pada kertas A4 dengan huruf Times New Roman 12 pt dan spasi 1,5.",
        "Batas margin kiri 4 cm, margin kanan 3 cm, margin atas 3 cm, dan margin bawah 3 cm.",
        "Sitasi dan daftar pustaka menggunakan gaya APA edisi ketujuh. Minimal 80% rujukan berasal dari jurnal atau "
        "prosiding terbitan sepuluh tahun terakhir.",
        "Abstrak ditulis dalam tiga bahasa: Indonesia, Inggris, dan Arab, masing-masing paling banyak 250 kata.",
    )),
    ("BAB IV. Penilaian", (
        "Nilai skripsi terdiri dari nilai proses bimbingan (30%), nilai naskah (30%), dan nilai ujian (40%).",
        "Mahasiswa dinyatakan lulus ujian skripsi apabila memperoleh nilai akhir minimal B.",
        "Kemiripan naskah yang diperiksa dengan Turnitin paling tinggi 25%.",
    )),
)


def build_pdf() -> bytes:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_TIME)
    pdf.set_title("Pedoman Skripsi Teknik Informatika 2024")
    pdf.set_author("Program Studi Teknik Informatika UIN Maulana Malik Ibrahim Malang")
    pdf.set_margins(25, 25, 25)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 9, "PEDOMAN PENULISAN SKRIPSI", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.multi_cell(0, 9, "Program Studi Teknik Informatika", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 12)
    pdf.multi_cell(0, 7, "Fakultas Sains dan Teknologi - UIN Maulana Malik Ibrahim Malang - Edisi 2024", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(6)
    for heading, paragraphs in PDF_SECTIONS:
        pdf.set_font("Helvetica", "B", 13)
        pdf.multi_cell(0, 8, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        for para in paragraphs:
            pdf.multi_cell(0, 6, para, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        pdf.ln(3)
    pdf.set_font("Helvetica", "I", 10)
    pdf.multi_cell(0, 6, f"Koordinator Skripsi: Dr. Muhammad Ainul Yaqin, M.Kom. ({C.LECTURER_BY_SLUG['dr-muhammad-ainul-yaqin-m-kom'].email})", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def build_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        stamp = (2024, 2, 1, 8, 0, 0)
        for name, text in (
            ("template-proposal/README.txt", "Template proposal skripsi Teknik Informatika. Isi setiap bab sesuai "
                                             "Pedoman Skripsi 2024.\n"),
            ("template-proposal/proposal.md", "# Judul Proposal\n\n## BAB I Pendahuluan\n\n## BAB II Tinjauan "
                                              "Pustaka\n\n## BAB III Metodologi Penelitian\n"),
        ):
            zf.writestr(zipfile.ZipInfo(name, stamp), text)
    return buf.getvalue()


def build_image() -> bytes:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (640, 360), (11, 110, 79))
    draw = ImageDraw.Draw(img)
    draw.rectangle((120, 90, 520, 330), fill=(230, 230, 220))
    for row in range(4):
        for col in range(8):
            x, y = 140 + col * 48, 110 + row * 52
            draw.rectangle((x, y, x + 30, y + 34), fill=(60, 90, 120))
    draw.rectangle((295, 280, 345, 330), fill=(90, 60, 40))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=80)
    return buf.getvalue()


CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1e293b;line-height:1.6}
a{color:#0b6e4f}.site-header{background:#0b6e4f;color:#fff}.site-header a{color:#fff;text-decoration:none}
.ast-above-header-bar{font-size:.85em;background:#08543c;padding:4px 0}.main-header-menu{list-style:none;display:flex;gap:18px;margin:0;padding:8px 0}
.main-header-menu>li{position:relative}.sub-menu{background:#fff;list-style:none;padding:8px;min-width:240px;box-shadow:0 4px 12px #0003}
.sub-menu a{color:#1e293b!important}.site-content .ast-container{display:grid;grid-template-columns:1fr 280px;gap:32px}
.ast-breadcrumbs-wrapper{grid-column:1/-1;font-size:.9em;padding-top:12px}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #cbd5e1;padding:6px 8px;text-align:left}dl.lecturer-fields{display:grid;grid-template-columns:200px 1fr}
dt{font-weight:600}.site-footer{background:#1e293b;color:#e2e8f0;padding:24px 0;margin-top:40px}.site-footer a{color:#a7f3d0}
.sd-content ul{list-style:none;display:flex;gap:8px;padding:0}
"""

ERROR_404 = """<!DOCTYPE html>
<html lang="id-ID"><head><meta charset="utf-8"><title>Halaman tidak ditemukan &#8211; Teknik Informatika UIN Maulana Malik Ibrahim Malang</title>
<link rel="stylesheet" href="/wp-content/themes/astra-child/style.css"></head>
<body class="error404"><main><h1>404: Halaman tidak ditemukan</h1>
<p>Maaf, halaman yang Anda cari tidak tersedia. Kembali ke <a href="/">Beranda</a>.</p></main></body></html>
"""

ERROR_403 = """<!DOCTYPE html>
<html lang="id-ID"><head><meta charset="utf-8"><title>Akses ditolak</title></head>
<body><h1>403: Akses ditolak</h1><p>Anda tidak memiliki izin untuk membuka halaman ini.</p></body></html>
"""


def sitemaps(pages: list[Page]) -> dict[str, str]:
    def urlset(entries: list[Page]) -> str:
        urls = "".join(f"<url><loc>{{{{BASE_URL}}}}{p.path}</loc><lastmod>{p.date}</lastmod></url>" for p in entries)
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>\n')

    posts = [p for p in pages if p.kind == "post"]
    others = [p for p in pages if p.kind in ("page", "home")]
    index = ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             "<sitemap><loc>{{BASE_URL}}/wp-sitemap-posts-page-1.xml</loc></sitemap>"
             "<sitemap><loc>{{BASE_URL}}/wp-sitemap-posts-post-1.xml</loc></sitemap></sitemapindex>\n")
    return {"wp-sitemap.xml": index, "wp-sitemap-posts-page-1.xml": urlset(others),
            "wp-sitemap-posts-post-1.xml": urlset(posts)}


ROBOTS = """User-agent: *
Disallow: /wp-admin/
Allow: /wp-admin/admin-ajax.php

Sitemap: {{BASE_URL}}/wp-sitemap.xml
"""


def manifest() -> dict:
    return {
        "aliases": {ALIAS[0]: ALIAS[1]},
        "redirects": {REDIRECT[0]: REDIRECT[1]},
        "charsets": {CP1252_PATH: "windows-1252"},
        "forbidden": ["/wp-admin/"],
    }


def _file_for(root: Path, path: str) -> Path:
    return root.joinpath(*[p for p in path.split("/") if p], "index.html")


def build(root: Path = ROOT) -> list[Page]:
    """Write the whole site under ``root`` (replacing what was there) and return its pages."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    pages = all_pages()
    recent = sorted(C.NEWS, key=lambda p: p.date, reverse=True)[:5]
    # a couple of pages link to the old slug (301) and to the duplicate URL, so crawlers meet them
    for page in pages:
        text = render(page, recent)
        target = _file_for(root, page.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode(page.charset.replace("windows-", "cp")))
    for rel, data in ((PDF_PATH, build_pdf()), (ZIP_PATH, build_zip()), (IMAGE_PATH, build_image()),
                      (CSS_PATH, CSS.encode())):
        target = root / rel.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for name, text in sitemaps(pages).items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "robots.txt").write_text(ROBOTS, encoding="utf-8")
    (root / "404.html").write_text(ERROR_404, encoding="utf-8")
    (root / "403.html").write_text(ERROR_403, encoding="utf-8")
    (root / "_site.json").write_text(json.dumps(manifest(), indent=2) + "\n", encoding="utf-8")
    return pages


def main() -> None:
    pages = build()
    print(f"wrote {len(pages)} pages to {ROOT}")


if __name__ == "__main__":
    main()
