"""The facts of the sample prodi website, kept in one place so every page states them the same way.

Modelled on the public site of Teknik Informatika UIN Maulana Malik Ibrahim Malang as the thesis that built the
first version of this bot describes it (people and roles, 144 SKS, accreditation, communities, laboratories). Apart
from those, names, numbers and events are illustrative. Some things students ask about are deliberately absent
(tuition fees, dormitories, graduation-ceremony dates, ...) so that unanswerable questions exist.
"""

from __future__ import annotations

from dataclasses import dataclass

SITE_NAME = "Teknik Informatika UIN Maulana Malik Ibrahim Malang"
PRODI = "Program Studi Teknik Informatika"
ADDRESS = "Gedung Sains dan Teknologi Lt. 2, Jl. Gajayana No. 50, Dinoyo, Lowokwaru, Kota Malang, Jawa Timur 65144"
PHONE = "(0341) 558933"
EMAIL = "informatika@uin-malang.ac.id"
WHATSAPP = "0812-3300-4455"
OFFICE_HOURS = "Senin–Jumat, 07.30–16.00 WIB"
TOTAL_SKS = 144


@dataclass(frozen=True)
class Course:
    code: str
    name: str
    sks: int
    semester: int
    kind: str  # "Wajib" or "Pilihan"


def _c(code: str, name: str, sks: int, semester: int, kind: str = "Wajib") -> Course:
    return Course(code, name, sks, semester, kind)


COURSES: tuple[Course, ...] = (
    # semester 1: 20 SKS
    _c("IF-101", "Pengantar Teknologi Informasi", 2, 1),
    _c("IF-102", "Algoritma dan Pemrograman", 4, 1),
    _c("IF-103", "Kalkulus", 3, 1),
    _c("IF-104", "Matematika Diskrit", 3, 1),
    _c("IF-105", "Logika Informatika", 2, 1),
    _c("UIN-101", "Studi Al-Qur'an", 2, 1),
    _c("UIN-102", "Bahasa Arab I", 2, 1),
    _c("UIN-103", "Pancasila", 2, 1),
    # semester 2: 21 SKS
    _c("IF-201", "Struktur Data", 4, 2),
    _c("IF-202", "Aljabar Linear", 3, 2),
    _c("IF-203", "Sistem Digital", 2, 2),
    _c("IF-204", "Pemrograman Berorientasi Objek", 3, 2),
    _c("IF-205", "Statistika dan Probabilitas", 3, 2),
    _c("UIN-201", "Studi Hadis", 2, 2),
    _c("UIN-202", "Bahasa Arab II", 2, 2),
    _c("UIN-203", "Bahasa Inggris", 2, 2),
    # semester 3: 21 SKS
    _c("IF-301", "Basis Data", 3, 3),
    _c("IF-302", "Organisasi dan Arsitektur Komputer", 3, 3),
    _c("IF-303", "Analisis dan Desain Algoritma", 3, 3),
    _c("IF-304", "Pemrograman Web", 3, 3),
    _c("IF-305", "Metode Numerik", 3, 3),
    _c("IF-306", "Interaksi Manusia dan Komputer", 3, 3),
    _c("IF-307", "Praktikum Basis Data", 1, 3),
    _c("UIN-301", "Studi Fiqih", 2, 3),
    # semester 4: 21 SKS
    _c("IF-401", "Sistem Operasi", 3, 4),
    _c("IF-402", "Jaringan Komputer", 3, 4),
    _c("IF-403", "Rekayasa Perangkat Lunak", 3, 4),
    _c("IF-404", "Kecerdasan Buatan", 3, 4),
    _c("IF-405", "Teori Bahasa dan Otomata", 3, 4),
    _c("IF-406", "Pemrograman Mobile", 3, 4),
    _c("IF-407", "Praktikum Jaringan Komputer", 1, 4),
    _c("UIN-401", "Tasawuf", 2, 4),
    # semester 5: 20 SKS
    _c("IF-501", "Pembelajaran Mesin", 3, 5),
    _c("IF-502", "Keamanan Informasi", 3, 5),
    _c("IF-503", "Manajemen Proyek Perangkat Lunak", 3, 5),
    _c("IF-504", "Komputasi Awan", 3, 5, "Pilihan"),
    _c("IF-505", "Pengolahan Citra Digital", 3, 5, "Pilihan"),
    _c("IF-506", "Grafika Komputer", 3, 5, "Pilihan"),
    _c("IF-507", "Metodologi Penelitian", 2, 5),
    # semester 6: 20 SKS
    _c("IF-601", "Sistem Terdistribusi", 3, 6),
    _c("IF-602", "Data Mining", 3, 6, "Pilihan"),
    _c("IF-603", "Pengembangan Game", 3, 6, "Pilihan"),
    _c("IF-604", "Pemrosesan Bahasa Alami", 3, 6, "Pilihan"),
    _c("IF-605", "Internet of Things", 3, 6, "Pilihan"),
    _c("IF-606", "Kewirausahaan Teknologi", 2, 6),
    _c("IF-607", "Etika Profesi dan Integrasi Sains-Islam", 3, 6),
    # semester 7: 15 SKS
    _c("IF-701", "Kerja Praktik (PKL)", 3, 7),
    _c("IF-702", "Kuliah Kerja Mahasiswa (KKM)", 4, 7),
    _c("IF-703", "Seminar Proposal Skripsi", 2, 7),
    _c("IF-704", "Deep Learning", 3, 7, "Pilihan"),
    _c("IF-705", "Forensik Digital", 3, 7, "Pilihan"),
    # semester 8: 6 SKS
    _c("IF-801", "Skripsi", 6, 8),
)

COURSE_BY_CODE = {c.code: c for c in COURSES}


@dataclass(frozen=True)
class Lecturer:
    slug: str
    name: str
    nip: str
    nidn: str
    functional: str  # Jabatan Fungsional
    role: str  # Jabatan struktural / tugas tambahan, "" if none
    field: str  # Bidang Keahlian (kelompok bidang keahlian)
    research: str
    education: tuple[str, ...]
    email: str
    courses: tuple[str, ...]
    room: str
    sinta: str
    scopus: str = ""
    orcid: str = ""


FIELDS = (
    "Intelligent System",
    "Software Engineering",
    "Computer Network & Security",
    "Multimedia & Game",
    "Data Science",
)

LECTURERS: tuple[Lecturer, ...] = (
    Lecturer(
        "supriyono-m-kom", "Supriyono, M.Kom.", "19841010 201903 1 012", "0710108401", "Lektor",
        "Ketua Program Studi", "Software Engineering",
        "Arsitektur Perangkat Lunak, Pengujian Perangkat Lunak, Sistem Informasi Akademik",
        ("S1 Teknik Informatika, UIN Maulana Malik Ibrahim Malang", "S2 Ilmu Komputer, Universitas Brawijaya"),
        "supriyono@ti.uin-malang.ac.id", ("IF-403", "IF-503"), "Ruang Prodi B.2.01", "6712345",
    ),
    Lecturer(
        "shoffin-nahwa-utama-m-t", "Shoffin Nahwa Utama, M.T.", "19860703 201903 1 004", "0703078601", "Lektor",
        "Sekretaris Program Studi", "Computer Network & Security",
        "Software Defined Networking, Keamanan Jaringan, Sistem Terdistribusi",
        ("S1 Teknik Informatika, Institut Teknologi Sepuluh Nopember", "S2 Teknik Elektro, Institut Teknologi Sepuluh Nopember"),
        "shoffin@ti.uin-malang.ac.id", ("IF-402", "IF-601"), "Ruang Prodi B.2.02", "6723456",
    ),
    Lecturer(
        "prof-dr-suhartono-s-si-m-kom", "Prof. Dr. Suhartono, S.Si., M.Kom.", "19680519 200312 1 001", "2819056801",
        "Guru Besar", "Ketua Kelompok Bidang Keahlian Intelligent System", "Intelligent System",
        "Pattern Recognition, Neural Networks, Intelligent Multimedia Networking",
        ("S1 Matematika, ITS", "S2 Informatika, ITS", "S3 Jaringan Cerdas Multimedia, ITS"),
        "suhartono@ti.uin-malang.ac.id", ("IF-404", "IF-704"), "Ruang Dosen B.3.10", "5975073",
        "56465811900", "0000-0002-4304-4279",
    ),
    Lecturer(
        "dr-totok-chamidy-m-kom", "Dr. Totok Chamidy, M.Kom.", "19691222 200604 1 001", "2022126901", "Lektor Kepala",
        "", "Software Engineering",
        "Rekayasa Kebutuhan, E-Learning, Sistem Informasi Pendidikan Islam",
        ("S1 Teknik Informatika, Institut Teknologi Sepuluh Nopember", "S2 Ilmu Komputer, Universitas Gadjah Mada",
         "S3 Manajemen Pendidikan Islam, UIN Maulana Malik Ibrahim Malang"),
        "totok.chamidy@ti.uin-malang.ac.id", ("IF-101", "IF-607"), "Ruang Dosen B.3.11", "6001234",
    ),
    Lecturer(
        "dr-muhammad-ainul-yaqin-m-kom", "Dr. Muhammad Ainul Yaqin, M.Kom.", "19761013 200604 1 004", "2013107602",
        "Lektor Kepala", "Koordinator Skripsi", "Software Engineering",
        "Business Process Management, Process Mining, Pemodelan Proses Bisnis",
        ("S1 Matematika, Universitas Brawijaya", "S2 Ilmu Komputer, Universitas Gadjah Mada",
         "S3 Teknik Informatika, Institut Teknologi Sepuluh Nopember"),
        "yaqinov@ti.uin-malang.ac.id", ("IF-306", "IF-703"), "Ruang Dosen B.3.12", "6003456",
    ),
    Lecturer(
        "fajar-rohman-hariri-m-kom", "Fajar Rohman Hariri, M.Kom.", "19890515 201801 1 001", "0715058902",
        "Asisten Ahli", "Pembina Komunitas Fun Java", "Intelligent System",
        "Sistem Pendukung Keputusan, Algoritma Genetika, Optimasi",
        ("S1 Teknik Informatika, UIN Maulana Malik Ibrahim Malang", "S2 Ilmu Komputer, Universitas Brawijaya"),
        "fajar.hariri@ti.uin-malang.ac.id", ("IF-102", "IF-204"), "Ruang Dosen B.3.13", "6198765",
    ),
    Lecturer(
        "dr-rina-kartikasari-m-t", "Dr. Rina Kartikasari, M.T.", "19820311 200912 2 003", "0711038203", "Lektor Kepala",
        "Kepala Laboratorium Intelligent System", "Intelligent System",
        "Pemrosesan Bahasa Alami, Information Retrieval, Chatbot Bahasa Indonesia",
        ("S1 Teknik Informatika, Universitas Brawijaya", "S2 Teknik Elektro, Universitas Gadjah Mada",
         "S3 Ilmu Komputer, Universitas Indonesia"),
        "rina.kartikasari@ti.uin-malang.ac.id", ("IF-604", "IF-405"), "Lab Intelligent System B.3.04", "6054321",
        "57193456700", "0000-0001-7788-1020",
    ),
    Lecturer(
        "hendra-wirawan-saputra-m-kom", "Hendra Wirawan Saputra, M.Kom.", "19880924 201903 1 007", "0724098803",
        "Asisten Ahli", "", "Intelligent System",
        "Computer Vision, Pengolahan Citra Medis, Deep Learning",
        ("S1 Teknik Informatika, Universitas Jember", "S2 Ilmu Komputer, Institut Pertanian Bogor"),
        "hendra.saputra@ti.uin-malang.ac.id", ("IF-505", "IF-103"), "Ruang Dosen B.3.14", "6254321",
    ),
    Lecturer(
        "dr-bagus-setiawan-nugroho-m-t", "Dr. Bagus Setiawan Nugroho, M.T.", "19800817 200801 1 009", "0717088004",
        "Lektor Kepala", "Kepala Laboratorium Jaringan Komputer dan Keamanan Siber", "Computer Network & Security",
        "Keamanan Siber, Intrusion Detection System, Forensik Digital",
        ("S1 Teknik Elektro, Universitas Brawijaya", "S2 Teknik Elektro, Institut Teknologi Sepuluh Nopember",
         "S3 Teknik Elektro, Institut Teknologi Sepuluh Nopember"),
        "bagus.nugroho@ti.uin-malang.ac.id", ("IF-502", "IF-705", "IF-407"), "Lab Jaringan B.3.06", "6034567",
    ),
    Lecturer(
        "yusuf-maulana-ibrahim-m-kom", "Yusuf Maulana Ibrahim, M.Kom.", "19900221 201903 1 010", "0721029005",
        "Asisten Ahli", "Koordinator Kerja Praktik (PKL)", "Computer Network & Security",
        "Internet of Things, Sistem Tertanam, Jaringan Sensor Nirkabel",
        ("S1 Teknik Informatika, Universitas Muhammadiyah Malang", "S2 Teknik Elektro, Universitas Brawijaya"),
        "yusuf.ibrahim@ti.uin-malang.ac.id", ("IF-605", "IF-401", "IF-701"), "Ruang Dosen B.3.15", "6287654",
    ),
    Lecturer(
        "dewi-anggraini-putri-m-kom", "Dewi Anggraini Putri, M.Kom.", "19870430 201503 2 005", "0730048706", "Lektor",
        "Kepala Laboratorium Multimedia dan Game", "Multimedia & Game",
        "Game Edukasi, Augmented Reality, Animasi Komputer",
        ("S1 Teknik Informatika, UIN Maulana Malik Ibrahim Malang", "S2 Teknologi Informasi, Institut Teknologi Sepuluh Nopember"),
        "dewi.putri@ti.uin-malang.ac.id", ("IF-506", "IF-603"), "Lab Multimedia B.2.11", "6123456",
    ),
    Lecturer(
        "lailatul-munawwaroh-m-kom", "Lailatul Munawwaroh, M.Kom.", "19910612 201903 2 015", "0712069107",
        "Asisten Ahli", "Kepala Laboratorium Rekayasa Perangkat Lunak", "Software Engineering",
        "Pengembangan Aplikasi Web, User Experience, Agile Software Development",
        ("S1 Sistem Informasi, Institut Teknologi Sepuluh Nopember", "S2 Ilmu Komputer, Universitas Brawijaya"),
        "lailatul.m@ti.uin-malang.ac.id", ("IF-304", "IF-406"), "Lab RPL B.3.02", "6276543",
    ),
    Lecturer(
        "ahmad-fauzan-habibi-m-cs", "Ahmad Fauzan Habibi, M.Cs.", "19850128 201101 1 006", "0728018508", "Lektor",
        "Kepala Teaching Laboratory", "Data Science",
        "Big Data Analytics, Basis Data Terdistribusi, Visualisasi Data",
        ("S1 Ilmu Komputer, Universitas Gadjah Mada", "S2 Ilmu Komputer, Universitas Gadjah Mada"),
        "fauzan.habibi@ti.uin-malang.ac.id", ("IF-301", "IF-307", "IF-201"), "Teaching Laboratory B.2.07", "6087654",
    ),
    Lecturer(
        "nur-aisyah-ramadhani-m-sc", "Nur Aisyah Ramadhani, M.Sc.", "19921105 202012 2 011", "0705119209",
        "Asisten Ahli", "Kepala Laboratorium Data Science", "Data Science",
        "Machine Learning untuk Data Kesehatan, Statistika Komputasi, Data Mining",
        ("S1 Matematika, Universitas Airlangga", "S2 Data Science, Universiti Teknologi Malaysia"),
        "aisyah.ramadhani@ti.uin-malang.ac.id", ("IF-205", "IF-602", "IF-501"), "Lab Data Science B.4.01", "6345678",
    ),
)

LECTURER_BY_SLUG = {lec.slug: lec for lec in LECTURERS}
HEAD = LECTURERS[0]
SECRETARY = LECTURERS[1]


@dataclass(frozen=True)
class Staff:
    name: str
    position: str
    email: str


STAFF: tuple[Staff, ...] = (
    Staff("Siti Maslahah, S.E.", "Kepala Urusan Administrasi Prodi", "admin@ti.uin-malang.ac.id"),
    Staff("Rizal Fahmi, A.Md.", "Laboran Teaching Laboratory", "laboran.tl@ti.uin-malang.ac.id"),
    Staff("Mochammad Iqbal, S.Kom.", "Laboran Laboratorium Jaringan Komputer", "laboran.jarkom@ti.uin-malang.ac.id"),
    Staff("Nadia Farah Azzahra, S.Kom.", "Pranata Komputer dan Pengelola Website", "web@ti.uin-malang.ac.id"),
)


@dataclass(frozen=True)
class Lab:
    slug: str
    name: str
    english: str
    location: str
    head: str  # lecturer slug
    focus: str
    equipment: str
    courses: tuple[str, ...]
    hours: str


LABS: tuple[Lab, ...] = (
    Lab(
        "intelligent-system-lab", "Laboratorium Intelligent System", "Intelligent System Laboratory",
        "Gedung Sains dan Teknologi Lt. 3, Ruang B.3.04", "dr-rina-kartikasari-m-t",
        "penelitian dan pembelajaran kecerdasan buatan, machine learning, pemrosesan bahasa alami, dan computer vision",
        "30 unit PC praktikum dan 2 server GPU NVIDIA RTX 4090 untuk pelatihan model", ("IF-404", "IF-501", "IF-704"),
        "Senin–Jumat, 08.00–16.00 WIB",
    ),
    Lab(
        "network-security-lab", "Laboratorium Jaringan Komputer dan Keamanan Siber", "Computer Network and Cyber Security Laboratory",
        "Gedung Sains dan Teknologi Lt. 3, Ruang B.3.06", "dr-bagus-setiawan-nugroho-m-t",
        "praktikum jaringan komputer, administrasi server Linux, dan latihan keamanan siber (Capture The Flag)",
        "router dan switch MikroTik serta Cisco, 32 unit PC, dan rak server untuk simulasi jaringan",
        ("IF-402", "IF-407", "IF-502", "IF-705"), "Senin–Jumat, 08.00–16.00 WIB",
    ),
    Lab(
        "multimedia-game-lab", "Laboratorium Multimedia dan Game", "Laboratory of Multimedia, Computer, and Animation",
        "Gedung Sains dan Teknologi Lt. 2, Ruang B.2.11", "dewi-anggraini-putri-m-kom",
        "riset dan pengembangan aplikasi grafis, animasi, augmented reality, dan game",
        "25 workstation grafis, pen tablet, kamera motion capture, dan perangkat VR", ("IF-506", "IF-603"),
        "Senin–Jumat, 08.00–16.00 WIB",
    ),
    Lab(
        "software-engineering-lab", "Laboratorium Rekayasa Perangkat Lunak", "Software Engineering Laboratory",
        "Gedung Sains dan Teknologi Lt. 3, Ruang B.3.02", "lailatul-munawwaroh-m-kom",
        "praktikum pemrograman web, pemrograman mobile, dan pengembangan perangkat lunak berbasis tim",
        "30 unit PC, perangkat Android untuk pengujian, dan server Git internal", ("IF-304", "IF-403", "IF-406"),
        "Senin–Jumat, 08.00–16.00 WIB",
    ),
    Lab(
        "teaching-laboratory", "Teaching Laboratory", "Teaching Laboratory (Laboratorium Komputasi Dasar)",
        "Gedung Sains dan Teknologi Lt. 2, Ruang B.2.07", "ahmad-fauzan-habibi-m-cs",
        "kegiatan praktikum pemrograman dasar dan asistensi mahasiswa tahun pertama",
        "40 unit PC dan proyektor interaktif", ("IF-102", "IF-201", "IF-204", "IF-307"),
        "Senin–Sabtu, 07.30–17.00 WIB",
    ),
    Lab(
        "data-science-lab", "Laboratorium Data Science", "Data Science Laboratory",
        "Gedung Sains dan Teknologi Lt. 4, Ruang B.4.01", "nur-aisyah-ramadhani-m-sc",
        "analisis data, data mining, dan visualisasi data untuk penelitian dosen dan skripsi mahasiswa",
        "24 unit PC dan klaster Hadoop/Spark 4 node", ("IF-205", "IF-602"), "Senin–Jumat, 08.00–16.00 WIB",
    ),
)


@dataclass(frozen=True)
class Community:
    slug: str
    name: str
    full_name: str
    focus: str
    founded: int
    advisor: str  # lecturer slug
    schedule: str
    paragraphs: tuple[str, ...]


COMMUNITIES: tuple[Community, ...] = (
    Community(
        "fun-java", "Fun Java", "Komunitas Fun Java",
        "pemrograman berorientasi objek (Object-Oriented Programming) dengan bahasa Java", 2012,
        "fajar-rohman-hariri-m-kom", "setiap Rabu pukul 15.30 WIB di Teaching Laboratory",
        (
            "Fun Java adalah komunitas mahasiswa Teknik Informatika yang berfokus pada Object-Oriented Programming "
            "menggunakan bahasa Java. Komunitas ini menjadi tempat pembinaan dasar pemrograman bagi mahasiswa baru "
            "dan menjadi dasar bagi komunitas lain seperti ETH0 dan WEBOENDER.",
            "Kegiatan rutin Fun Java adalah Java Class, yaitu kelas belajar bersama yang dipandu oleh mentor dari "
            "mahasiswa angkatan atas. Materi meliputi class dan object, inheritance, polymorphism, exception handling, "
            "hingga pembuatan aplikasi desktop dengan JavaFX.",
            "Fun Java berkoordinasi dengan Himpunan Mahasiswa Jurusan (HMJ) Teknik Informatika dalam menyusun agenda "
            "tahunan, termasuk kegiatan IT Incubation untuk mahasiswa baru dan lomba pemrograman internal Java Cup.",
        ),
    ),
    Community(
        "etho", "ETH0", "Komunitas ETH0",
        "jaringan komputer, administrasi server Linux, dan keamanan siber", 2013,
        "dr-bagus-setiawan-nugroho-m-t", "setiap Kamis pukul 16.00 WIB di Laboratorium Jaringan Komputer dan Keamanan Siber",
        (
            "ETH0 (dibaca eth-zero, diambil dari nama antarmuka jaringan pertama pada Linux) adalah komunitas yang "
            "mendalami jaringan komputer, administrasi server Linux, dan keamanan siber.",
            "Anggota ETH0 rutin berlatih Capture The Flag (CTF) dan menyiapkan diri untuk sertifikasi MikroTik MTCNA. "
            "Tim ETH0 meraih juara 1 Hackathon Nasional Bug Bounty 2022.",
            "Komunitas ini terbuka bagi mahasiswa yang telah mengikuti pembinaan dasar pemrograman di Fun Java.",
        ),
    ),
    Community(
        "google-developer-student-club-dsc", "GDSC", "Google Developer Student Club (GDSC) UIN Malang",
        "teknologi Google untuk pengembang: Flutter, Firebase, Google Cloud, dan machine learning", 2020,
        "lailatul-munawwaroh-m-kom", "Study Jam setiap Sabtu pukul 09.00 WIB (daring dan luring)",
        (
            "Google Developer Student Club (GDSC) UIN Malang adalah komunitas pengembang berbasis kampus yang "
            "didukung oleh program Google Developers. Dahulu komunitas ini bernama Developer Student Club (DSC).",
            "GDSC menyelenggarakan Study Jam tentang Flutter, Firebase, dan Google Cloud, serta mengikuti Solution "
            "Challenge setiap tahun dengan membangun solusi untuk Tujuan Pembangunan Berkelanjutan (SDGs).",
            "Keanggotaan GDSC terbuka untuk seluruh mahasiswa UIN Malang, tidak hanya mahasiswa Teknik Informatika.",
        ),
    ),
    Community(
        "science-enthusiast-dse", "DSE", "Data Science Enthusiast (DSE)",
        "data science, analisis data, dan kompetisi data mining", 2019,
        "nur-aisyah-ramadhani-m-sc", "setiap Selasa pukul 15.30 WIB di Laboratorium Data Science",
        (
            "Data Science Enthusiast (DSE) adalah komunitas bagi mahasiswa yang tertarik pada analisis data, "
            "statistika, dan machine learning.",
            "Kegiatan DSE meliputi kelas Python untuk analisis data, bedah kasus dataset Kaggle, dan persiapan tim "
            "untuk lomba data mining seperti GEMASTIK. Tim DSE meraih juara 2 GEMASTIK 2023 divisi Data Mining.",
        ),
    ),
    Community(
        "mocap", "MOCAP", "Komunitas MOCAP (Mobile Computing and Application Programming)",
        "pemrograman aplikasi mobile Android dan Flutter", 2015,
        "lailatul-munawwaroh-m-kom", "setiap Jumat pukul 13.30 WIB di Laboratorium Rekayasa Perangkat Lunak",
        (
            "MOCAP adalah komunitas Mobile Programming di Teknik Informatika yang mempelajari pengembangan aplikasi "
            "Android dengan Kotlin serta aplikasi lintas platform dengan Flutter.",
            "Setiap semester MOCAP mengadakan Mobile Bootcamp selama empat pekan dan memamerkan aplikasi karya "
            "anggotanya pada acara Informatics Expo.",
        ),
    ),
    Community(
        "weboender", "WEBOENDER", "Komunitas WEBOENDER",
        "pengembangan web front-end dan back-end", 2014,
        "supriyono-m-kom", "setiap Senin pukul 15.30 WIB di Laboratorium Rekayasa Perangkat Lunak",
        (
            "WEBOENDER adalah komunitas pengembang web yang mempelajari HTML, CSS, JavaScript, PHP dengan Laravel, "
            "serta framework front-end modern seperti React dan Vue.",
            "Anggota WEBOENDER sering terlibat dalam pembuatan website kegiatan HMJ dan unit-unit di lingkungan "
            "Fakultas Sains dan Teknologi.",
        ),
    ),
    Community(
        "uinux", "UINUX", "Komunitas UINUX",
        "Linux dan perangkat lunak open source", 2011,
        "shoffin-nahwa-utama-m-t", "setiap Kamis pukul 13.00 WIB di Teaching Laboratory",
        (
            "UINUX menampung keinginan civitas akademika UIN Malang untuk belajar dan menggunakan Linux serta "
            "perangkat lunak open source dalam kegiatan sehari-hari.",
            "UINUX mengelola mirror repositori lokal untuk distribusi Linux populer dan rutin mengadakan Install Fest "
            "pada awal semester ganjil.",
        ),
    ),
    Community(
        "ontaki", "ONTAKI", "Komunitas ONTAKI (Robotika dan Embedded System)",
        "robotika, mikrokontroler, dan Internet of Things", 2016,
        "yusuf-maulana-ibrahim-m-kom", "setiap Sabtu pukul 13.00 WIB di Laboratorium Jaringan Komputer dan Keamanan Siber",
        (
            "ONTAKI adalah komunitas robotika dan embedded system. Anggotanya merakit robot, memprogram "
            "mikrokontroler Arduino dan ESP32, serta membangun purwarupa Internet of Things.",
            "ONTAKI rutin mengirim tim ke Kontes Robot Indonesia (KRI) tingkat regional.",
        ),
    ),
)

COMMUNITY_BY_SLUG = {c.slug: c for c in COMMUNITIES}


@dataclass(frozen=True)
class NewsPost:
    slug: str
    title: str
    date: str  # ISO date
    category: str  # slug in NEWS_CATEGORIES
    paragraphs: tuple[str, ...]


NEWS_CATEGORIES = {"prestasi": "Prestasi", "kegiatan": "Kegiatan", "pengumuman": "Pengumuman"}

NEWS: tuple[NewsPost, ...] = (
    NewsPost(
        "pengumuman-jadwal-seminar-proposal-skripsi-semester-genap-2024-2025",
        "Pengumuman Jadwal Seminar Proposal Skripsi Semester Genap 2024/2025", "2025-03-10", "pengumuman",
        (
            "Seminar proposal skripsi semester genap 2024/2025 dilaksanakan pada 14–25 April 2025 di ruang seminar "
            "B.2.05 Gedung Sains dan Teknologi.",
            "Mahasiswa yang akan mengikuti seminar proposal wajib mengunggah draf proposal yang telah disetujui dosen "
            "pembimbing melalui Sistem Informasi Skripsi paling lambat 4 April 2025.",
            "Jadwal per mahasiswa beserta dosen penguji diumumkan oleh Koordinator Skripsi, Dr. Muhammad Ainul Yaqin, "
            "M.Kom., pada 9 April 2025.",
        ),
    ),
    NewsPost(
        "kuliah-tamu-large-language-model-untuk-bahasa-indonesia",
        "Kuliah Tamu: Large Language Model untuk Bahasa Indonesia", "2024-10-03", "kegiatan",
        (
            "Program Studi Teknik Informatika menyelenggarakan kuliah tamu bertema Large Language Model untuk Bahasa "
            "Indonesia pada 3 Oktober 2024 di Aula Gedung Sains dan Teknologi.",
            "Narasumber kuliah tamu adalah peneliti NLP dari industri teknologi nasional yang memaparkan cara melatih "
            "dan mengevaluasi model bahasa untuk bahasa daerah dan bahasa Indonesia.",
            "Kegiatan ini diikuti lebih dari 250 mahasiswa dan dimoderatori oleh Dr. Rina Kartikasari, M.T.",
        ),
    ),
    NewsPost(
        "yudisium-dan-pelepasan-lulusan-periode-agustus-2024",
        "Yudisium dan Pelepasan Lulusan Periode Agustus 2024", "2024-08-15", "kegiatan",
        (
            "Sebanyak 87 mahasiswa Teknik Informatika mengikuti yudisium periode Agustus 2024 yang dipimpin oleh "
            "Ketua Program Studi, Supriyono, M.Kom.",
            "Lulusan terbaik periode ini meraih IPK 3,96 dengan skripsi tentang deteksi penyakit daun tomat "
            "menggunakan convolutional neural network.",
        ),
    ),
    NewsPost(
        "pelatihan-sertifikasi-mikrotik-mtcna-bersama-etho",
        "Pelatihan Sertifikasi MikroTik MTCNA bersama ETH0", "2024-06-22", "kegiatan",
        (
            "Komunitas ETH0 bekerja sama dengan Laboratorium Jaringan Komputer dan Keamanan Siber menyelenggarakan "
            "pelatihan sertifikasi MikroTik MTCNA selama tiga hari pada 20–22 Juni 2024.",
            "Sebanyak 32 peserta mengikuti ujian sertifikasi dan 27 peserta dinyatakan lulus.",
        ),
    ),
    NewsPost(
        "gdsc-study-jam-flutter-2024", "GDSC Study Jam Flutter 2024", "2024-04-27", "kegiatan",
        (
            "GDSC UIN Malang mengadakan Study Jam Flutter selama empat pekan mulai 27 April 2024. Peserta belajar "
            "membangun aplikasi mobile lintas platform dan menghubungkannya dengan Firebase.",
            "Tiga aplikasi terbaik peserta dipamerkan pada Informatics Expo 2024.",
        ),
    ),
    NewsPost(
        "coordination-with-student-communities", "Coordination with Student Communities", "2024-02-20", "kegiatan",
        (
            "Program studi mengadakan rapat koordinasi dengan seluruh komunitas mahasiswa Teknik Informatika pada "
            "20 Februari 2024 untuk menyelaraskan agenda kegiatan komunitas satu tahun ke depan.",
            "Hadir dalam rapat ini perwakilan HMJ Teknik Informatika, Fun Java, ETH0, GDSC, DSE, MOCAP, WEBOENDER, "
            "UINUX, dan ONTAKI bersama dosen pembina masing-masing.",
            "Agenda yang disepakati antara lain IT Incubation untuk mahasiswa baru, Informatics Expo, workshop "
            "pemrograman, seminar teknologi, dan persiapan tim lomba tingkat nasional.",
        ),
    ),
    NewsPost(
        "juara-2-gemastik-2023-divisi-data-mining", "Juara 2 GEMASTIK 2023 Divisi Data Mining", "2023-11-12",
        "prestasi",
        (
            "Tim Data Science Enthusiast (DSE) yang beranggotakan Nabila Putri Maharani, Rafi Akbar Ramadhan, dan "
            "Salsabila Nur Fadhilah meraih juara 2 GEMASTIK 2023 divisi Data Mining.",
            "Tim ini membangun model prediksi kualitas udara kota Malang dan dibimbing oleh Nur Aisyah Ramadhani, M.Sc.",
        ),
    ),
    NewsPost(
        "prodi-teknik-informatika-raih-akreditasi-unggul-lam-infokom",
        "Prodi Teknik Informatika Raih Akreditasi Unggul dari LAM INFOKOM", "2023-07-04", "pengumuman",
        (
            "Program Studi Teknik Informatika UIN Maulana Malik Ibrahim Malang resmi memperoleh peringkat akreditasi "
            "Unggul dari Lembaga Akreditasi Mandiri Informatika dan Komputer (LAM INFOKOM).",
            "Akreditasi ini berlaku selama lima tahun, mulai 27 Juni 2023 hingga 27 Juni 2028.",
            "Ketua Program Studi, Supriyono, M.Kom., menyampaikan terima kasih kepada dosen, tenaga kependidikan, "
            "mahasiswa, dan alumni yang telah berkontribusi.",
        ),
    ),
    NewsPost(
        "1st-winner-of-madinah-van-java-pencak-silat-championship",
        "1st Winner of Madinah Van Java Pencak Silat Championship", "2023-02-14", "prestasi",
        (
            "Mahasiswa Teknik Informatika angkatan 2021, Ahmad Zainul Arifin, meraih juara 1 kelas D putra pada "
            "kejuaraan pencak silat Madinah Van Java Championship 2023.",
            "Prestasi ini menunjukkan bahwa mahasiswa Informatika juga berprestasi di bidang non-akademik.",
        ),
    ),
    NewsPost(
        "1st-winner-of-national-hackathon-competition-on-bug-bounty-2022",
        "1st Winner of National Hackathon Competition on Bug Bounty 2022", "2022-10-18", "prestasi",
        (
            "Tim ETH0 yang terdiri dari Muhammad Rizky Pratama, Aulia Rahmawati, dan Fikri Haikal meraih juara 1 "
            "Hackathon Nasional Bug Bounty 2022.",
            "Tim menemukan 14 celah keamanan pada aplikasi uji yang disediakan panitia, termasuk dua celah dengan "
            "tingkat kritis.",
            "Tim dibimbing oleh Dr. Bagus Setiawan Nugroho, M.T., Kepala Laboratorium Jaringan Komputer dan Keamanan "
            "Siber.",
        ),
    ),
    NewsPost(
        "informatics-sport-community-isc-launching", "Informatics Sport Community (ISC) Launching", "2019-11-09",
        "kegiatan",
        (
            "HMJ Teknik Informatika meluncurkan Informatics Sport Community (ISC) sebagai wadah kegiatan olahraga "
            "mahasiswa Informatika, meliputi futsal, bulu tangkis, dan e-sport.",
            "Perwakilan komunitas Fun Java, ETH0, dan MOCAP hadir pada acara peluncuran ISC.",
        ),
    ),
    NewsPost(
        "it-incubation-2019-helps-students-finding-passion", "IT Incubation 2019 Helps Students Finding Passion",
        "2019-09-21", "kegiatan",
        (
            "IT Incubation 2019 membantu mahasiswa baru menemukan minat di bidang teknologi informasi. Kegiatan ini "
            "bekerja sama dengan komunitas Fun Java, ONTAKI, dan MOCAP.",
            "Selama dua hari, mahasiswa baru mencoba kelas pemrograman Java, perakitan robot sederhana, dan "
            "pembuatan aplikasi mobile pertama mereka.",
        ),
    ),
    NewsPost(
        "rapat-kerja-pengurus-hmj-ti-2019", "Rapat Kerja Pengurus HMJ TI 2019", "2019-01-26", "kegiatan",
        (
            "Pengurus HMJ Teknik Informatika periode 2019 menggelar rapat kerja untuk menyusun program kerja satu "
            "tahun.",
            "Komunitas Fun Java, ETH0, MOCAP, dan UINUX hadir dalam rapat kerja untuk menyampaikan rencana "
            "kegiatan masing-masing.",
        ),
    ),
)

VISION = (
    "Menjadi program studi Teknik Informatika yang unggul dan berdaya saing internasional dalam mengintegrasikan "
    "ilmu pengetahuan, teknologi informasi, dan nilai-nilai Islam pada tahun 2030."
)
MISSION = (
    "Menyelenggarakan pendidikan informatika yang integratif untuk menghasilkan lulusan berkarakter ulul albab.",
    "Mengembangkan penelitian di bidang informatika yang relevan dengan kebutuhan masyarakat dan industri.",
    "Melaksanakan pengabdian kepada masyarakat melalui penerapan teknologi informasi.",
    "Menjalin kerja sama dengan institusi dalam dan luar negeri untuk meningkatkan mutu tridarma.",
)
OBJECTIVES = (
    "Menghasilkan lulusan yang kompeten di bidang teknologi informasi, berakhlak mulia, dan mampu bersaing di "
    "tingkat global.",
    "Menghasilkan karya penelitian informatika yang dipublikasikan pada jurnal dan konferensi bereputasi.",
    "Menghasilkan produk teknologi yang bermanfaat bagi masyarakat.",
    "Terwujudnya kerja sama yang berkelanjutan dengan pemerintah, industri, dan perguruan tinggi lain.",
)

ACCREDITATION = (
    # (year, body, grade, validity)
    ("2009", "BAN-PT", "B", "2009–2014"),
    ("2014", "BAN-PT", "A", "2014–2019"),
    ("2019", "BAN-PT", "A", "2019–2023"),
    ("2023", "LAM INFOKOM", "Unggul", "27 Juni 2023 – 27 Juni 2028"),
)
ACCREDITATION_CERT = "SK LAM INFOKOM No. 045/SK/LAM-INFOKOM/Ak/S/VI/2023"

MILESTONES = (
    ("2004", "Program Studi Teknik Informatika dibuka di bawah Fakultas Sains dan Teknologi dan menerima "
             "mahasiswa angkatan pertama."),
    ("2009", "Akreditasi pertama dari BAN-PT dengan peringkat B."),
    ("2011", "Komunitas UINUX berdiri sebagai komunitas tertua di program studi."),
    ("2014", "Akreditasi BAN-PT naik menjadi peringkat A."),
    ("2018", "Gedung Sains dan Teknologi baru mulai digunakan, termasuk enam laboratorium program studi."),
    ("2020", "Kurikulum berbasis Outcome-Based Education (OBE) dengan beban 144 SKS mulai diberlakukan."),
    ("2023", "Meraih akreditasi Unggul dari LAM INFOKOM."),
)

GRADUATE_PROFILES = (
    ("Software Engineer", "merancang, membangun, dan menguji perangkat lunak berskala besar"),
    ("Data Scientist", "mengolah dan menganalisis data untuk mendukung pengambilan keputusan"),
    ("Network Engineer", "merancang dan mengamankan infrastruktur jaringan komputer"),
    ("IT Consultant", "memberikan solusi teknologi informasi bagi organisasi"),
    ("Akademisi dan Peneliti", "melanjutkan studi dan melakukan penelitian di bidang informatika"),
)

SCHOLARSHIPS = (
    ("KIP Kuliah", "Kementerian Agama", "mahasiswa dari keluarga kurang mampu dengan prestasi akademik baik",
     "diajukan saat pendaftaran mahasiswa baru"),
    ("Beasiswa Bank Indonesia", "Bank Indonesia", "mahasiswa semester 3 sampai 6 dengan IPK minimal 3,00",
     "pendaftaran dibuka setiap bulan Maret"),
    ("Beasiswa Prestasi Rektor", "UIN Maulana Malik Ibrahim Malang",
     "mahasiswa dengan prestasi lomba tingkat nasional atau internasional", "diajukan melalui program studi"),
    ("Beasiswa Djarum Plus", "Djarum Foundation", "mahasiswa semester 4 dengan IPK minimal 3,00",
     "pendaftaran daring pada bulan April–Mei"),
    ("Beasiswa Tahfidz Al-Qur'an", "UIN Maulana Malik Ibrahim Malang",
     "mahasiswa penghafal Al-Qur'an minimal 10 juz", "seleksi hafalan oleh Ma'had Al-Jami'ah"),
)

CALENDAR = (
    ("Pengisian KRS semester ganjil", "11–22 Agustus 2025"),
    ("Awal perkuliahan semester ganjil", "1 September 2025"),
    ("Batas akhir perubahan KRS (add/drop)", "12 September 2025"),
    ("Ujian Tengah Semester (UTS) ganjil", "20–31 Oktober 2025"),
    ("Ujian Akhir Semester (UAS) ganjil", "15–26 Desember 2025"),
    ("Batas akhir input nilai semester ganjil", "9 Januari 2026"),
    ("Pengisian KRS semester genap", "26 Januari – 6 Februari 2026"),
    ("Awal perkuliahan semester genap", "16 Februari 2026"),
    ("Ujian Tengah Semester (UTS) genap", "13–24 April 2026"),
    ("Ujian Akhir Semester (UAS) genap", "8–19 Juni 2026"),
)

FAQ = (
    ("Berapa lama masa studi di Teknik Informatika?",
     "Masa studi normal adalah 8 semester (4 tahun) dengan beban 144 SKS. Batas maksimal masa studi adalah 14 "
     "semester."),
    ("Apa gelar lulusan Teknik Informatika?", "Lulusan memperoleh gelar Sarjana Komputer (S.Kom.)."),
    ("Berapa SKS minimal untuk mengambil skripsi?",
     "Mahasiswa dapat mengambil Skripsi (IF-801) setelah lulus minimal 120 SKS dan lulus Seminar Proposal Skripsi "
     "(IF-703)."),
    ("Kapan mahasiswa boleh mengikuti Kerja Praktik?",
     "Kerja Praktik (PKL) dapat diambil setelah mahasiswa lulus minimal 100 SKS, biasanya pada semester 7."),
    ("Apakah mahasiswa wajib mengikuti program Ma'had?",
     "Ya. Mahasiswa baru wajib tinggal di Ma'had Al-Jami'ah selama satu tahun pertama sesuai ketentuan "
     "universitas."),
    ("Bagaimana cara menghubungi dosen pembimbing akademik?",
     "Hubungi dosen pembimbing akademik melalui email resmi yang tercantum pada halaman profil dosen di menu "
     "Lecturer and Staff."),
    ("Berapa batas maksimal SKS per semester?",
     "Mahasiswa dengan IP semester minimal 3,00 boleh mengambil hingga 24 SKS; di bawah itu maksimal 20 SKS."),
    ("Apakah ada syarat sertifikat bahasa untuk lulus?",
     "Ya. Mahasiswa wajib memiliki sertifikat TOEFL dengan skor minimal 450 dan sertifikat TOAFL dengan skor "
     "minimal 400 sebelum yudisium."),
)
