"""A corpus of hostile and broken files, generated at test time into a folder (never committed).

`build_bad_corpus(folder)` writes every file and returns one `BadFile` per file: its path, what
the file is, and what Hark must do with it (`reject`: a failure with a clear reason; `index`: its
`marker` sentence becomes searchable; `either`: rejected with a reason or indexed, never a crash).

Nothing here writes more than a few MB: the zip bomb is a real 2 GiB deflate stream built from one
repeated, fully-flushed block (~2 MB on disk), and the "gigabyte-long line" is a line just over the
`max_file_mb` of the test config.
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Expect = Literal["reject", "index", "either"]

# Filenames that break naive shell commands, path joins and terminal output. Every command
# substitution only touches a file named PWNED_*, so a test can see whether it ran (and nothing
# harmful happens if it does).
HOSTILE_NAMES: list[str] = [
    "notes; touch PWNED_semicolon .txt",
    "$(touch PWNED_dollar).md",
    "`touch PWNED_backtick`.md",
    "it's a \"quoted\" name.txt",
    "  spaces  and\ttab .txt",
    "new\nline.txt",
    "-rf --help.txt",
    "a..b...txt",
    "naïve 文件 \u202etxt.exe.md",
    "| touch PWNED_pipe && echo.txt",
    "x" * 240 + ".txt",
    "esc \x1b[2J\x1b[31mred\x07.txt",
]

# Names a browser may send in an upload (the path part must never reach the file system).
UPLOAD_NAMES: list[str] = [
    "../../escaped_upload.txt",
    "../escaped_upload2.txt",
    "/tmp/absolute_upload.txt",
    "..\\..\\windows_escape.txt",
    "sub/dir/../../../nested_escape.txt",
]

PWNED_PREFIX = "PWNED_"


@dataclass(frozen=True)
class BadFile:
    path: Path
    kind: str  # short label used in test ids
    expect: Expect
    marker: str = ""  # a sentence that must be searchable when the file is indexed
    note: str = ""


def _marker(word: str) -> str:
    return f"The {word} codeword of this document is {word}zebra."


# ----------------------------------------------------------------------------------------- PDF


def minimal_pdf(text: str) -> bytes:
    """A valid one-page PDF with a real text layer (Helvetica), written by hand."""
    safe = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 12 Tf 72 720 Td ({safe}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def encrypted_pdf(text: str, password: str = "hunter2-pdf") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(minimal_pdf(text))))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="AES-256")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


# ----------------------------------------------------------------------------------------- zip


def _raw_deflate_repeated(prefix: bytes, block: bytes, repeats: int, suffix: bytes) -> tuple[bytes, int, int]:
    """Raw deflate of prefix + block*repeats + suffix without compressing every repeat.

    After a full flush a deflate stream carries no history, so the compressed bytes of `block`
    are identical each time and can simply be repeated. Returns (stream, crc32, uncompressed size).
    """
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = comp.compress(prefix) + comp.flush(zlib.Z_FULL_FLUSH)
    one = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
    again = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
    assert one == again, "deflate blocks are not position-independent"
    tail = comp.compress(suffix) + comp.flush(zlib.Z_FINISH)
    crc = zlib.crc32(prefix)
    for _ in range(repeats):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(suffix, crc)
    size = len(prefix) + len(block) * repeats + len(suffix)
    return head + one * repeats + tail, crc & 0xFFFFFFFF, size


def _zip(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip archive from (name, raw deflate data, crc32, uncompressed size); sizes < 4 GiB."""
    out = io.BytesIO()
    central = io.BytesIO()
    for name, data, crc, size in members:
        fname = name.encode("utf-8")
        offset = out.tell()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size, len(fname), 0))
        out.write(fname)
        out.write(data)
        central.write(
            struct.pack(
                "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, crc, len(data), size,
                len(fname), 0, 0, 0, 0, 0, offset,
            )
        )
        central.write(fname)
    cd_offset = out.tell()
    cd = central.getvalue()
    out.write(cd)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(cd), cd_offset, 0))
    return out.getvalue()


def _small_member(name: str, data: bytes) -> tuple[str, bytes, int, int]:
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    return name, comp.compress(data) + comp.flush(), zlib.crc32(data) & 0xFFFFFFFF, len(data)


def zip_bomb_docx(uncompressed_bytes: int = 2 << 30) -> bytes:
    """A structurally valid .docx whose word/document.xml inflates to `uncompressed_bytes` of text."""
    from docx import Document

    buf = io.BytesIO()
    doc = Document()
    doc.add_paragraph("placeholder")
    doc.save(buf)
    import zipfile

    real = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    members = [_small_member(i.filename, real.read(i.filename)) for i in real.infolist() if i.filename != "word/document.xml"]
    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    prefix = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document {ns}><w:body><w:p><w:r><w:t>'.encode()
    suffix = b"</w:t></w:r></w:p></w:body></w:document>"
    block = b"bomb " * (1 << 18)  # 1.25 MiB of highly compressible text per block
    repeats = max(1, (uncompressed_bytes - len(prefix) - len(suffix)) // len(block))
    data, crc, size = _raw_deflate_repeated(prefix, block, repeats, suffix)
    members.append(("word/document.xml", data, crc, size))
    return _zip(members)


def zip_slip_docx(text: str) -> bytes:
    """A valid .docx that also carries members named `../../…` (must never be extracted)."""
    from docx import Document

    buf = io.BytesIO()
    doc = Document()
    doc.add_paragraph(text)
    doc.save(buf)
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
        dst.writestr("../../zip_slip_escaped.txt", "escaped")
        dst.writestr("/tmp/zip_slip_absolute.txt", "escaped")
    return out.getvalue()


def docx_bytes(text: str) -> bytes:
    from docx import Document

    buf = io.BytesIO()
    doc = Document()
    doc.add_paragraph(text)
    doc.save(buf)
    return buf.getvalue()


# ---------------------------------------------------------------------------------- the corpus


def long_line(n_bytes: int, sentence: str = "") -> bytes:
    """One line of `n_bytes` of ordinary words (no newline), starting with `sentence`."""
    words = (
        b"river stone quiet lantern meadow copper harbor violet summit orchard ember willow "
        b"canyon thistle marble falcon juniper beacon saffron glacier "
    )
    head = (sentence + " ").encode() if sentence else b""
    body = words * (max(0, n_bytes - len(head)) // len(words) + 1)
    return (head + body)[:n_bytes]


def build_bad_corpus(
    folder: Path,
    *,
    max_file_mb: float = 1.0,
    long_line_mb: float = 0.5,
    bomb_bytes: int = 2 << 30,
    names: bool = True,
) -> list[BadFile]:
    """Write the bad-file corpus into `folder` (created) and describe each file.

    `max_file_mb` is the ingest limit of the test config: the "gigabyte-long line" is written just
    over it; `long_line_mb` (below the limit) is one line that must be chunked without hanging.
    """
    folder.mkdir(parents=True, exist_ok=True)
    files: list[BadFile] = []

    def put(name: str, data: bytes, kind: str, expect: Expect, marker: str = "", note: str = "") -> None:
        p = folder / name
        p.write_bytes(data)
        files.append(BadFile(p, kind, expect, marker, note))

    good_pdf = minimal_pdf(_marker("pdfgood"))
    put("good.pdf", good_pdf, "good_pdf", "index", _marker("pdfgood"), "control: a valid PDF")
    put("truncated.pdf", good_pdf[: len(good_pdf) * 6 // 10], "truncated_pdf", "reject", note="cut at 60%")
    put("header_only.pdf", b"%PDF-1.7\n", "header_only_pdf", "reject")
    put("empty.pdf", b"", "empty_pdf", "reject")
    put("encrypted.pdf", encrypted_pdf(_marker("pdfsecret")), "encrypted_pdf", "reject", note="AES-256, user password")
    put("png_named.pdf", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "png_named_pdf", "reject")
    put("zip_bomb.docx", zip_bomb_docx(bomb_bytes), "zip_bomb_docx", "reject", note=f"{bomb_bytes} bytes inflated")
    put("zip_slip.docx", zip_slip_docx(_marker("zipslip")), "zip_slip_docx", "either", _marker("zipslip"))
    put("random_named.docx", bytes((i * 131 + 7) % 256 for i in range(4096)), "random_docx", "reject")
    put("empty.txt", b"", "empty_txt", "reject")
    put("whitespace_only.md", b" \n\t\n   \r\n", "whitespace_md", "reject")
    put(
        "binary_named.txt",
        b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 16,
        "binary_txt",
        "reject",
        note="an ELF header and binary bytes named .txt",
    )
    too_long = int(max_file_mb * 1024 * 1024) + 64 * 1024
    put("giant_line.txt", long_line(too_long, _marker("giant")), "giant_line", "reject", note=f"{too_long} bytes, one line")
    ok_long = int(long_line_mb * 1024 * 1024)
    put("long_line.txt", long_line(ok_long, _marker("longline")), "long_line", "index", _marker("longline"))
    ctrl = (
        _marker("control") + "\n"
        "Escape \x1b[31mred\x1b[0m, bell \x07, backspace \x08, form feed \x0c, vertical tab \x0b.\n"
        "NUL in the middle \x00 of a line; DEL \x7f; C1 \x85 \x9b.\n"
        "Zero width\u200b\u200c\u200d joiners, BOM \ufeff, right-to-left \u202eoverride\u202c.\r\n"
        "Old Mac line\rends here.\n"
    )
    put("control_chars.txt", ctrl.encode("utf-8"), "control_chars", "either", _marker("control"))
    mixed = (
        _marker("mixedenc").encode("utf-8")
        + "\nUTF-8 café naïve — “quotes”.\n".encode()
        + "cp1252 café naïve — “quotes” €.\n".encode("cp1252")
        + b"Latin-1 \xe9t\xe9 and a lone continuation byte \x80 and a truncated \xe2\x82.\n"
    )
    put("mixed_encoding.txt", mixed, "mixed_encoding", "index", _marker("mixedenc"))
    put(
        "utf16.txt",
        (_marker("utfsixteen") + "\nA file saved as UTF-16 with a byte-order mark.\n").encode("utf-16"),
        "utf16_txt",
        "either",
        _marker("utfsixteen"),
    )
    html = (
        "<html><head><title>t</title><script>while(true){}</script></head><body>"
        f"<p>{_marker('htmlok')}</p>" + "<div>" * 2000 + "deep" + "</div>" * 2000 + "</body></html>"
    )
    put("deep_nesting.html", html.encode(), "deep_html", "either", _marker("htmlok"))
    put("good.docx", docx_bytes(_marker("docxgood")), "good_docx", "index", _marker("docxgood"), "control: valid DOCX")
    put("good.md", f"# Good\n\n{_marker('mdgood')}\n".encode(), "good_md", "index", _marker("mdgood"))

    if names:
        for i, name in enumerate(HOSTILE_NAMES):
            word = f"name{i}x"
            try:
                put(name, f"{_marker(word)}\n".encode(), f"name_{i}", "index", _marker(word), note=repr(name))
            except OSError as exc:  # e.g. a file system that refuses the name
                files.append(BadFile(folder / name, f"name_{i}", "either", note=f"not creatable: {exc}"))
    return files


def pwned_files(*folders: Path) -> list[Path]:
    """Files whose names show that a shell ran a command built from a hostile filename."""
    found: list[Path] = []
    for folder in folders:
        if folder.exists():
            found += [p for p in folder.rglob(f"{PWNED_PREFIX}*") if p.is_file() and p.stat().st_size == 0]
    return found


def tree_listing(root: Path, exclude: tuple[Path, ...] = ()) -> set[str]:
    """Every path under `root` (relative), except those under `exclude`: to diff before/after."""
    ex = [e.resolve() for e in exclude]
    out: set[str] = set()
    for p in root.rglob("*"):
        rp = p.resolve() if not p.is_symlink() else p
        if any(rp == e or e in rp.parents for e in ex):
            continue
        out.add(str(p.relative_to(root)))
    return out
