"""Blocks → chunks of up to `chunk_words` words with `overlap_words` of overlap.

Blocks are aggregated in order; a block is split only when it alone exceeds the limit. A new chunk
starts with the last `overlap_words` words of the previous one. Empty chunks and chunks whose text is
just the document title are dropped. Each chunk carries the section heading it starts in, its pages,
the document's tags, the file hash and the hash of its normalised text (for deduplication).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from knowledge.loaders import Block, LoadedDocument
from knowledge.types import Chunk

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


def normalise_text(text: str) -> str:
    """Case, whitespace and punctuation folded: the text that deduplication compares."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCT.sub(" ", text).split())


def text_hash(text: str) -> str:
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()[:32]


def chunk_id_for(source_path: str, ordinal: int, thash: str) -> str:
    """Stable: the same file content gives the same ids on every run."""
    digest = hashlib.sha256(f"{source_path}\n{ordinal}\n{thash}".encode()).hexdigest()
    return digest[:24]


@dataclass
class _Piece:
    words: list[str]
    page: int | None
    section: str
    is_title: bool = False


def _pieces(blocks: list[Block], limit: int, overlap: int) -> list[_Piece]:
    """Blocks as word lists; only a block longer than `limit` is split (with overlap)."""
    out: list[_Piece] = []
    step = max(1, limit - overlap)
    for b in blocks:
        words = b.text.split()
        if not words:
            continue
        if len(words) <= limit:
            out.append(_Piece(words, b.page, b.section, b.kind == "title"))
            continue
        for start in range(0, len(words), step):
            out.append(_Piece(words[start : start + limit], b.page, b.section))
            if start + limit >= len(words):
                break
    return out


def chunk_blocks(
    blocks: list[Block], chunk_words: int = 500, overlap_words: int = 50
) -> list[tuple[str, list[int], str]]:
    """(text, pages, section) per chunk. Pure function of the blocks and the two sizes.

    A heading never ends a chunk: trailing headings move to the next chunk with the text they head.
    """
    overlap = min(overlap_words, chunk_words // 2)
    chunks: list[tuple[str, list[int], str]] = []
    carry: list[str] = []  # overlap words from the previous chunk
    cur: list[_Piece] = []

    def size() -> int:
        return len(carry) + sum(len(p.words) for p in cur)

    def emit() -> None:
        nonlocal carry, cur
        parts = ([" ".join(carry)] if carry else []) + [" ".join(p.words) for p in cur]
        pages = sorted({p.page for p in cur if p.page is not None})
        chunks.append(("\n\n".join(parts).strip(), pages, cur[0].section))
        all_words = carry + [w for p in cur for w in p.words]
        carry = all_words[-overlap:] if overlap else []
        cur = []

    for piece in _pieces(blocks, chunk_words, overlap):
        if cur and size() + len(piece.words) > chunk_words:
            moved: list[_Piece] = []
            while len(cur) > 1 and cur[-1].is_title:
                moved.insert(0, cur.pop())
            emit()
            cur = moved
        if size() + len(piece.words) > chunk_words:  # the overlap gives way to new text
            keep = max(0, chunk_words - len(piece.words) - sum(len(p.words) for p in cur))
            carry = carry[len(carry) - keep :] if keep else []
        if cur and size() + len(piece.words) > chunk_words:
            emit()
            carry = []
        cur.append(piece)
    if cur:
        emit()
    return chunks


def chunk_document(
    doc: LoadedDocument,
    source_path: str,
    file_hash: str,
    chunk_words: int = 500,
    overlap_words: int = 50,
) -> list[Chunk]:
    """The chunks of one loaded document, with metadata, empty and title-only chunks dropped."""
    title_norm = normalise_text(doc.title)
    out: list[Chunk] = []
    for text, pages, section in chunk_blocks(doc.blocks, chunk_words, overlap_words):
        norm = normalise_text(text)
        if not norm or norm == title_norm:
            continue
        thash = text_hash(text)
        out.append(
            Chunk(
                chunk_id=chunk_id_for(source_path, len(out), thash),
                source_path=source_path,
                chunk_text=text,
                title=doc.title,
                section=section,
                pages=pages,
                tags=list(doc.tags),
                file_hash=file_hash,
                text_hash=thash,
            )
        )
    return out
