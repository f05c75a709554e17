"""Blocks → chunks of up to `chunk_words` words with up to `overlap_words` of overlap.

Blocks are aggregated in order; a block is split only when it alone exceeds the limit, and then at
sentence ends (a single sentence longer than the limit is cut by words). A new chunk starts with the
last whole sentences of the previous one that fit in `overlap_words`, so chunk edges fall between
sentences. A heading opens the chunk it titles: a heading block, or a block's short first sentence
(a heading the PDF parser ran into its paragraph), never ends a chunk; a chunk that opens with one
carries no overlap (the heading is the boundary). Empty chunks and chunks whose text is
just the document title are dropped. Each chunk carries the section heading it starts in, its pages,
the document's tags, the file hash and the hash of its normalised text (for deduplication).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from knowledge.loaders import Block, LoadedDocument
from knowledge.sentences import sentence_spans
from knowledge.types import Chunk

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)
VERSION = 2  # how blocks become chunks: part of every file's content key (`cut_key`)
PARA = "\n\n"  # a block boundary inside the overlap carried into the next chunk
HEADING_WORDS = 8  # a block's first sentence this short, with more text after it, is taken for its heading
_MOVED_MAX = 2 * HEADING_WORDS  # trailing headings carried on to the next chunk (a heading and a sub-heading)


def cut_key(chunk_words: int, overlap_words: int) -> str:
    """The part of a file's content key that says how it was cut into chunks."""
    return f"cut{VERSION}-{chunk_words}-{overlap_words}"


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
    continues: bool = False  # a later window of a split block: it starts with its own overlap
    heads: bool = False  # it opens with a heading (a title block, or a heading run into its paragraph)


def _tail(words: list[str], budget: int) -> list[str]:
    """The last whole sentences of `words` within `budget` words (none when the last one is longer);
    text with no sentence end near its tail (tables, lists, code) gives its last `budget` words."""
    if budget <= 0 or not words:
        return []
    starts = [e + 1 for e in sentence_spans(words)[:-1]]
    if not starts or len(words) - starts[-1] > 4 * max(budget, 50):
        return words[-budget:]
    fits = [s for s in starts if len(words) - s <= budget]
    return words[fits[0] :] if fits else []


def lead_heading(words: list[str]) -> int:
    """Words of the block's heading run into its text: a first sentence of at most `HEADING_WORDS`
    words with more text after it ("Ending the tenancy. The tenant may …"); 0 when there is none."""
    ends = sentence_spans(words)
    return ends[0] + 1 if len(ends) > 1 and ends[0] + 1 <= HEADING_WORDS else 0


def _windows(words: list[str], limit: int, overlap: int) -> list[list[str]]:
    """A long block as windows of at most `limit` words that end at sentence ends, each starting
    with the previous window's last sentences (within `overlap` words). The first window keeps the
    block's heading with the sentence after it, even when that takes it past `limit`."""
    ends = sentence_spans(words)
    lead = lead_heading(words)
    out: list[list[str]] = []
    start = 0
    while start < len(words):
        inside = [e for e in ends if start <= e < start + limit]
        if start == 0 and lead and inside == [lead - 1]:  # only the heading fits: take the next sentence too
            after = [e for e in ends if e >= lead and e < lead + limit]
            inside = after[:1] or inside
        end = inside[-1] + 1 if inside and inside[-1] + 1 < len(words) else min(len(words), start + limit)
        if not inside and end < len(words):
            end = start + limit  # one sentence longer than the limit: cut by words
        out.append(words[start:end])
        if end >= len(words):
            break
        back = _tail(words[start:end], overlap)
        nxt = end - len(back)
        start = nxt if nxt > start else end
    return out


def _pieces(blocks: list[Block], limit: int, overlap: int) -> list[_Piece]:
    """Blocks as word lists; only a block longer than `limit` is split (with overlap)."""
    out: list[_Piece] = []
    for b in blocks:
        words = b.text.split()
        if not words:
            continue
        title = b.kind == "title"
        heads = title or bool(lead_heading(words))
        if len(words) <= limit:
            out.append(_Piece(words, b.page, b.section, title, heads=heads))
            continue
        for i, w in enumerate(_windows(words, limit, overlap)):
            out.append(_Piece(w, b.page, b.section, continues=i > 0, heads=heads and i == 0))
    return out


def _heading_only(piece: _Piece) -> bool:
    """A piece that is nothing but a heading: a title block, or a short one-sentence text block."""
    if piece.is_title:
        return True
    return len(piece.words) <= HEADING_WORDS and len(sentence_spans(piece.words)) == 1 and not piece.continues


def chunk_blocks(
    blocks: list[Block], chunk_words: int = 500, overlap_words: int = 50
) -> list[tuple[str, list[int], str]]:
    """(text, pages, section) per chunk. Pure function of the blocks and the two sizes.

    A heading never ends a chunk: trailing headings move to the next chunk with the text they head
    (which may then pass `chunk_words` by the heading's words).
    """
    overlap = min(overlap_words, chunk_words // 2)
    chunks: list[tuple[str, list[int], str]] = []
    carry: list[str] = []  # overlap words from the previous chunk
    cur: list[_Piece] = []

    def size() -> int:
        return len(carry) + sum(len(p.words) for p in cur)

    def emit() -> None:
        nonlocal carry, cur
        head = re.sub(r" ?\n\n ?", "\n\n", " ".join(carry)).strip()
        parts = ([head] if head else []) + [" ".join(p.words) for p in cur]
        pages = sorted({p.page for p in cur if p.page is not None})
        # the section of its first text: a chunk that opens with headings stands under the last of them
        section = next((p.section for p in cur if not p.is_title), cur[-1].section)
        chunks.append(("\n\n".join(parts).strip(), pages, section))
        # the overlap keeps its blocks apart (a heading or a footnote is not run into the sentence after it)
        all_words = carry + [w for i, p in enumerate(cur) for w in ([PARA] if i or carry else []) + p.words]
        carry = _tail(all_words, overlap)
        while carry and carry[0] == PARA:
            carry = carry[1:]
        cur = []

    for piece in _pieces(blocks, chunk_words, overlap):
        headings_only = bool(cur) and all(_heading_only(p) for p in cur)
        if cur and not headings_only and size() + len(piece.words) > chunk_words:
            moved: list[_Piece] = []
            while (
                len(cur) > 1
                and _heading_only(cur[-1])
                and sum(len(p.words) for p in moved) + len(cur[-1].words) <= _MOVED_MAX
            ):
                moved.insert(0, cur.pop())
            emit()
            cur = moved
            headings_only = bool(cur)
        if headings_only or (not cur and (piece.continues or piece.heads)):
            carry = []  # a heading is the boundary; a later window repeats its own overlap
        if size() + len(piece.words) > chunk_words:  # the overlap gives way to new text
            keep = max(0, chunk_words - len(piece.words) - sum(len(p.words) for p in cur))
            carry = _tail(carry, keep)
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
