"""The PDFium reader on real PDFs from Debian's documentation packages (installed by .ci/install) and
on PDFs written here with a real text layer."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from knowledge.chunking import chunk_document
from knowledge.loaders import load_document
from knowledge.pdf_reader import SECTION_SEP, fix_text, read_pdf
from tests.knowledge.docs_factory import write_text_pdf

LIBTASN1 = Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")  # installed by .ci/install
MIME_SPEC = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")


def _pdftotext_pages(path: Path) -> list[list[str]]:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return [[ln.strip() for ln in page.splitlines() if ln.strip()] for page in text.split("\f")]


def test_numbered_headings_become_the_section_path_not_words_of_a_sentence():
    doc = read_pdf(MIME_SPEC)
    version = next(b for b in doc.blocks if "This is version 0.21" in b.text)
    assert version.kind == "text"
    assert version.section.split(SECTION_SEP) == ["1. Introduction", "1.1. Version"]
    assert version.text.startswith("This is version"), version.text[:60]
    media = next(b for b in doc.blocks if "inode" in b.text and "provided for this purpose" in b.text)
    assert not re.match(r"^\d+(\.\d+)*\.? [A-Z]", media.text), media.text[:80]  # no heading glued in front
    assert media.section and media.page is not None


def test_running_headers_page_numbers_and_the_index_are_not_text():
    pages = _pdftotext_pages(LIBTASN1)
    headers = {p[0] for p in pages[4:30] if p and p[0].startswith("Chapter ")}
    assert len(headers) >= 3, headers  # the manual has them: "Chapter 2: ASN.1 structure handling 3"
    doc = read_pdf(LIBTASN1)
    texts = [b.text for b in doc.blocks]
    assert not any(h in t for h in headers for t in texts)
    assert not any(re.fullmatch(r"\d{1,3}", t.strip()) for t in texts)
    assert doc.n_pages in doc.skipped_pages  # the index page
    assert doc.title == "Libtasn1"


def test_a_chunk_carries_its_section_and_its_page():
    doc = load_document(MIME_SPEC)
    chunks = chunk_document(doc, "spec.pdf", "h", chunk_words=120, overlap_words=20)
    version = next(c for c in chunks if "This is version 0.21" in c.chunk_text)
    assert version.section.endswith("1.1. Version") and version.pages == [1]


def test_tex_accents_set_apart_are_joined_to_their_letters(tmp_path):
    pdf = write_text_pdf(tmp_path / "de.pdf", [["Diese Einstellungen k\u00a8onnen ver\u00a8andert werden.",
                                                "Kapitel 3: Ubliche Notation \u00a8"]])  # fmt: skip
    doc = read_pdf(pdf)
    text = " ".join(b.text for b in doc.blocks)
    assert "können verändert" in text and "Übliche" in text and "\u00a8" not in text
    assert fix_text("Andern \u00a8 die Datei") == "Ändern die Datei"


def test_a_contents_page_is_skipped_and_said(tmp_path):
    contents = [f"{i} Chapter number {i} . . . . . . . . {3 + i}" for i in range(1, 11)]
    body = ["The notice period is three months for either party.", "Rent is due on the first day of a month."]
    pdf = write_text_pdf(tmp_path / "lease.pdf", [contents, body])
    doc = load_document(pdf)
    assert [b.page for b in doc.blocks] == [2]
    assert any("contents or index" in n for n in doc.notes)


def test_a_corrupt_pdf_is_a_clear_failure(tmp_path):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n" + b"\x00garbage" * 50)
    try:
        load_document(bad)
    except Exception as exc:  # noqa: BLE001 - the type is asserted below
        assert type(exc).__name__ in ("LoadFailed", "LoadSkipped") and str(exc)
    else:
        raise AssertionError("a corrupt PDF loaded")


def test_a_line_opening_with_inline_code_stays_in_its_sentence():
    doc = read_pdf(LIBTASN1)  # "asn1Parser" is set in code type at the start of the sentence's line
    block = next(b for b in doc.blocks if "reads a single file with ASN.1 definitions" in b.text)
    # one sentence: the line that opens with code and the prose line after it
    assert block.text == ("asn1Parser reads a single file with ASN.1 definitions and generates a file with an "
                          "array to use with libtasn1 functions."), block.text[:200]


def test_a_link_the_layout_broke_or_set_apart_in_a_code_font_stays_in_its_sentence(tmp_path):
    """Texinfo manuals set links in a code font on lines of their own, and break long ones at a
    line end: the link is one word of its sentence, not the start of the next paragraph ("edu/php/…:
    The file asymptote.py …") nor a term that paragraph defines ("https://brew.sh/: Note that …")."""
    lines = [
        "Interactive mode is implemented with the GNU readline library. To customize the key",
        "bindings, see: https://tiswww.case.",
        "edu/php/chet/readline/readline.html",
        "",  # the space between paragraphs
        "The file asymptote.py provides an alternative way of entering commands interactively.",
        "",
        "MacOS X users can install the binary available at",
        "https://www.macports.org/",
        "or at",
        "https://brew.sh/",
        "Note that many MacOS X systems lack the GNU readline library.",
    ]
    code = frozenset({"edu/php/chet/readline/readline.html", "https://www.macports.org/", "https://brew.sh/"})
    doc = read_pdf(write_text_pdf(tmp_path / "links.pdf", [lines], code=code))
    texts = [b.text for b in doc.blocks]
    assert not any(t.startswith(("edu/php", "https://brew.sh/:")) for t in texts), texts
    assert any(t.endswith("see: https://tiswww.case.edu/php/chet/readline/readline.html") for t in texts), texts
    assert any(t.startswith("The file asymptote.py provides") for t in texts), texts
    assert any(t.endswith("available at https://www.macports.org/ or at https://brew.sh/") for t in texts), texts
    assert any(t.startswith("Note that many MacOS X systems") for t in texts), texts


def test_a_footnotes_number_is_no_word_of_it_but_a_listings_numbers_stay(tmp_path):
    """Debian Policy sets footnotes in a smaller font after their number ("4 Essential is needed in
    part …"): an answer read the number out. A numbered code listing in the same small font keeps
    its numbers (they are not footnotes)."""
    note = "4 Essential is needed in part to avoid unresolvable dependency loops on upgrade."
    listing = [f"{n} \\begin{{question}}{{q{n}}} Some choice {n}." for n in range(20, 27)]
    prose = ["Packages are tagged essential for a system using the Essential control field, and the format of",
             "that field is described in its own section. Since dpkg will not prevent upgrading of other packages",
             "while an essential package is in an unconfigured state, all essential packages must supply all of",
             "their core functionality even when unconfigured. If you are thinking of making a package essential,",
             "please ask on the mailing list first, since the set of essential packages is kept as small as it can be."]
    lines = [*prose, "", note, "", *listing]
    doc = read_pdf(write_text_pdf(tmp_path / "notes.pdf", [lines], small=frozenset([note, *listing])))
    texts = [b.text for b in doc.blocks]
    assert any(t.startswith("Essential is needed in part") for t in texts), texts
    assert any("20 \\begin{question}{q20}" in t for t in texts), texts


def test_a_page_whose_text_drops_characters_keeps_each_lines_font(tmp_path):
    """PDFium's text range leaves out some control characters (TeX's glyphs without a character: a
    third of LilyPond's manual pages have them), which shifted every later line's font and position:
    a music example's code read as prose and was glued into the sentence after it."""
    lines = [
        "Writing a melody in the treble clef involves a lot of quote marks\x02\x02\x02\x02\x02\x02.",
        "Consider this fragment from Mozart:",
        "",
        "{",
        "\\key a \\major",
        "cis''8. d''16 cis''8 e''4 e''8 |",
        "}",
        "",
        "Common octave marks can be indicated just once, using the command \\fixed.",
    ]
    code = frozenset(lines[3:7])
    doc = read_pdf(write_text_pdf(tmp_path / "drops.pdf", [lines], code=code))
    texts = [b.text for b in doc.blocks]
    assert "{\n\\key a \\major\ncis''8. d''16 cis''8 e''4 e''8 |\n}" in texts, texts
    assert texts[-1] == "Common octave marks can be indicated just once, using the command \\fixed.", texts
    assert not any("\x02" in t for t in texts)


def test_a_bold_term_opening_a_paragraph_keeps_it_apart_from_its_description(tmp_path):
    """The AMC manual sets its option lists as "**horiz** present choices horizontally …": read as
    plain text the term ran into its description ("ordered don't shuffle the choices"), so the answer
    read "horiz present choices" and the sentence was no entry of "horiz". A bold word inside a
    paragraph, or a bold line alone (a heading), gets no colon."""
    lines = ["Available options for questions:", "",
             "horiz present choices horizontally, not on separated lines.", "",
             "columns=n make n columns for the choices.", "",
             "ordered don't shuffle the choices, keep the same order as in the description file.", "",
             "Questions stuck together with the option", "next count as one single question when they are shuffled.", "",
             "Questions groups", "",
             "Groups are shuffled one by one."]  # fmt: skip
    bold = {lines[2]: "horiz", lines[4]: "columns=n", lines[6]: "ordered", lines[9]: "next", lines[11]: lines[11]}
    texts = [b.text for b in read_pdf(write_text_pdf(tmp_path / "options.pdf", [lines], bold=bold)).blocks]
    assert "horiz: present choices horizontally, not on separated lines." in texts, texts
    assert "columns=n: make n columns for the choices." in texts, texts
    assert any(t.startswith("ordered: don't shuffle the choices") for t in texts), texts
    assert any("with the option next count as one" in t for t in texts), texts
    assert not any(t.startswith(("Questions groups:", "Available options for questions::")) for t in texts), texts

