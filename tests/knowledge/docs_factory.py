"""Real documents for the knowledge tests, written from scratch (no fixtures checked in).

PDFs are written byte by byte (a valid xref table, Helvetica text), so the text layer is real and the
tests control exactly what it says. Scanned PDFs are images rendered by Pillow with no text layer.
"""

from __future__ import annotations

from pathlib import Path


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_text_pdf(
    path: Path, pages: list[list[str]], title: str | None = None, header: str | None = None, numbered: bool = False,
    code: frozenset[str] = frozenset(), small: frozenset[str] = frozenset(), bold: dict[str, str] | None = None,
) -> Path:  # fmt: skip
    """A PDF whose pages carry the given lines as a real text layer (with `header` above them on
    every page, lower than unstructured's page-top region, and, `numbered`, the page's number at
    its foot: page furniture). Lines in `code` are set in Courier (a code font), the rest in Helvetica;
    lines in `small` at 7 points (a footnote's size), the rest at 12; a line in `bold` opens with the
    prefix it maps to set in Helvetica-Bold (a definition list's term)."""
    bold = bold or {}
    objects: list[bytes] = []
    n_pages = len(pages)
    # 1 catalog, 2 pages, 3 font, then per page: page object, content stream; then info
    page_ids = [4 + 2 * i for i in range(n_pages)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    # WinAnsi: the Latin-1 bytes of a line are its characters ("\u00a8" is the dieresis, not "¤")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    courier = len(objects) + 2 * n_pages + 1  # after the pages' objects
    heavy = courier + 1
    for i, lines in enumerate(pages):
        content_id = page_ids[i] + 1
        objects.append(
            (
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                f"/Resources << /Font << /F1 3 0 R /F2 {courier} 0 R /F3 {heavy} 0 R >> >> >>"
            ).encode()
        )
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 690 Td" if header else "72 720 Td"]
        for line in lines:
            font = ("/F2" if line in code else "/F1") + (" 7 Tf" if line in small else " 12 Tf")
            lead = bold.get(line, "")
            if lead:
                ops.append(f"/F3 12 Tf ({_pdf_escape(lead)}) Tj")
            ops.append(f"{font} ({_pdf_escape(line[len(lead):])}) Tj T*")
        ops.append("ET")
        if header:
            ops += ["BT", "/F1 9 Tf", "72 720 Td", f"({_pdf_escape(header)}) Tj", "ET"]
        if numbered:
            ops += ["BT", "/F1 9 Tf", "300 36 Td", f"({i + 1}) Tj", "ET"]
        stream = "\n".join(ops).encode("cp1252")  # WinAnsi: "—" and "’" have a byte too
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    info_id = None
    if title:
        objects.append(f"<< /Title ({_pdf_escape(title)}) >>".encode("latin-1"))
        info_id = len(objects)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    trailer = (
        f"<< /Size {len(objects) + 1} /Root 1 0 R" + (f" /Info {info_id} 0 R" if info_id else "") + " >>"
    )
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def write_scanned_pdf(path: Path, lines: list[str]) -> Path:
    """An image-only PDF (no text layer), like a scanner's output."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", (1700, 2200), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=56)
    y = 200
    for line in lines:
        draw.text((150, y), line, fill=0, font=font)
        y += 90
    img.save(path, "PDF", resolution=200.0)
    return path


def write_encrypted_pdf(path: Path, lines: list[str], password: str = "secret") -> Path:
    import pypdf

    plain = write_text_pdf(path.with_suffix(".plain.pdf"), [lines])
    writer = pypdf.PdfWriter(clone_from=str(plain))
    writer.encrypt(user_password=password, owner_password=password)
    with open(path, "wb") as fh:
        writer.write(fh)
    plain.unlink()
    return path


def write_docx(path: Path, title: str, paragraphs: list[str], table: list[list[str]] | None = None) -> Path:
    import docx

    d = docx.Document()
    d.add_heading(title, level=1)
    for p in paragraphs:
        d.add_paragraph(p)
    if table:
        t = d.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                t.cell(r, c).text = cell
    d.save(str(path))
    return path


def words(n: int, stem: str = "word") -> str:
    """n distinct words: stem0 stem1 …"""
    return " ".join(f"{stem}{i}" for i in range(n))
