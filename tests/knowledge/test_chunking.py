"""Chunking: sizes, overlap, splitting only oversized blocks, dropped chunks, metadata, hashes."""

from __future__ import annotations

from knowledge.chunking import chunk_blocks, chunk_document, normalise_text, text_hash
from knowledge.loaders import Block, LoadedDocument
from knowledge.sentences import split_sentences
from tests.knowledge.docs_factory import words


def _words(text: str) -> list[str]:
    return text.split()


def test_small_blocks_are_aggregated_up_to_the_limit() -> None:
    blocks = [Block(words(30, f"b{i}x"), page=1) for i in range(10)]  # 300 words
    chunks = chunk_blocks(blocks, chunk_words=100, overlap_words=10)
    for text, _, _ in chunks:
        assert len(_words(text)) <= 100
    # every word of every block is in some chunk, in order
    joined = [w for text, _, _ in chunks for w in _words(text)]
    for i in range(10):
        assert f"b{i}x0" in joined and f"b{i}x29" in joined
    # blocks are never split when they fit: each block's words appear contiguously in one chunk
    for i in range(10):
        block = words(30, f"b{i}x")
        assert any(block in text for text, _, _ in chunks)


def test_overlap_carries_the_last_words_of_the_previous_chunk() -> None:
    blocks = [Block(words(60, f"p{i}w")) for i in range(4)]
    chunks = chunk_blocks(blocks, chunk_words=100, overlap_words=10)
    assert len(chunks) >= 3
    for (prev, _, _), (nxt, _, _) in zip(chunks, chunks[1:], strict=False):
        assert _words(nxt)[:10] == _words(prev)[-10:]


def test_only_an_oversized_block_is_split() -> None:
    big = Block(words(250, "big"))
    small = Block("a short closing paragraph")
    chunks = chunk_blocks([big, small], chunk_words=100, overlap_words=20)
    assert all(len(_words(t)) <= 100 for t, _, _ in chunks)
    big_words = [w for t, _, _ in chunks for w in _words(t) if w.startswith("big")]
    assert set(big_words) == {f"big{i}" for i in range(250)}
    assert "a short closing paragraph" in chunks[-1][0]


def test_pages_and_section_follow_the_blocks() -> None:
    blocks = [
        Block("Intro", "title", 1, "Intro"),
        Block(words(40, "one"), "text", 1, "Intro"),
        Block("Costs", "title", 2, "Costs"),
        Block(words(40, "two"), "text", 2, "Costs"),
        Block(words(40, "three"), "text", 3, "Costs"),
    ]
    chunks = chunk_blocks(blocks, chunk_words=60, overlap_words=5)
    assert chunks[0][1] == [1] and chunks[0][2] == "Intro"
    assert not chunks[0][0].endswith("Costs")  # a heading moves on with the text it heads
    assert "Costs\n\ntwo0" in chunks[1][0] and chunks[1][2] == "Costs"
    last_text, last_pages, last_section = chunks[-1]
    assert "three39" in last_text and 3 in last_pages and last_section == "Costs"


def test_title_only_and_empty_chunks_are_dropped_and_ids_are_stable() -> None:
    doc = LoadedDocument(
        title="Rental Agreement",
        blocks=[Block("Rental agreement!", "title"), Block("   ")],
    )
    assert chunk_document(doc, "lease.md", "h1") == []
    doc.blocks.append(Block("The notice period is three months."))
    a = chunk_document(doc, "lease.md", "h1", chunk_words=3, overlap_words=0)
    b = chunk_document(doc, "lease.md", "h1", chunk_words=3, overlap_words=0)
    assert [c.chunk_id for c in a] == [c.chunk_id for c in b]
    assert len({c.chunk_id for c in a}) == len(a)
    assert normalise_text(a[0].chunk_text) != normalise_text(doc.title)
    assert all(c.file_hash == "h1" and c.source_path == "lease.md" for c in a)
    other = chunk_document(doc, "other.md", "h1", chunk_words=3, overlap_words=0)
    assert {c.chunk_id for c in other}.isdisjoint({c.chunk_id for c in a})


def test_chunk_metadata_and_tags() -> None:
    doc = LoadedDocument(
        title="Trip", blocks=[Block("We go to Lisbon.", page=2, section="Plans")], tags=["travel"]
    )
    (c,) = chunk_document(doc, "docs/trip.pdf", "abc")
    assert (c.title, c.section, c.pages, c.tags) == ("Trip", "Plans", [2], ["travel"])
    assert c.chunk_preview == c.chunk_text[:200]
    assert c.text_hash == text_hash("we go to LISBON")


def test_normalised_hash_folds_case_whitespace_punctuation() -> None:
    assert text_hash("Hello,   World!") == text_hash("hello world")
    assert text_hash("Hello world") != text_hash("Hello word")
    assert normalise_text("  Ünïcode\u00a0TEXT — ok?") == "ünïcode text ok"


def test_default_sizes_500_and_50() -> None:
    doc = LoadedDocument(title="t", blocks=[Block(words(1200, "w"))])
    chunks = chunk_document(doc, "x.txt", "h")
    sizes = [len(_words(c.chunk_text)) for c in chunks]
    assert max(sizes) == 500
    assert _words(chunks[1].chunk_text)[:50] == _words(chunks[0].chunk_text)[-50:]


def _prose(n: int, tag: str) -> str:
    """n sentences of 9 words each: 'Tag0 w w w w w w w end.'"""
    return " ".join(f"{tag.capitalize()}{i} " + " ".join(["word"] * 7) + f" end{i}." for i in range(n))


def test_chunk_edges_fall_between_sentences() -> None:
    blocks = [Block(_prose(30, "alpha")), Block(_prose(30, "beta")), Block(_prose(25, "gamma"))]
    chunks = chunk_blocks(blocks, chunk_words=100, overlap_words=20)
    assert len(chunks) >= 3
    for text, _, _ in chunks:
        assert len(_words(text)) <= 100
        assert text[0].isupper() and text.endswith("."), text[:40] + " … " + text[-40:]
    # the overlap is whole sentences: the next chunk starts with the previous chunk's last sentences
    for (prev, _, _), (nxt, _, _) in zip(chunks, chunks[1:], strict=False):
        head = " ".join(_words(nxt)[:9])
        assert head.endswith(".") and (head in prev or head.split()[0] in ("Beta0", "Gamma0"))
        assert len(split_sentences(nxt)) == len(set(split_sentences(nxt)))  # no sentence twice


def test_a_sentence_longer_than_the_limit_is_still_cut_by_words() -> None:
    long_sentence = "Start " + " ".join(["word"] * 150) + " stop."
    chunks = chunk_blocks([Block(long_sentence)], chunk_words=60, overlap_words=10)
    assert all(len(_words(t)) <= 60 for t, _, _ in chunks)
    assert sum(t.count("word") for t, _, _ in chunks) >= 150


def test_a_heading_run_into_its_paragraph_opens_the_chunk_it_titles() -> None:
    # a PDF parser often gives a heading and its paragraph as one block ("Ending the tenancy. The …")
    blocks = [
        Block("Bins are collected every Tuesday morning from the yard."),
        Block("Ending the tenancy. The tenant may end this tenancy with a written notice period of two "
              "months, sent by post to the landlord. Keys are returned to the letting office on the last day."),
        Block("Parking"),
        Block("Residents park in bays 4 to 9 with a permit from the council, shown behind the windscreen."),
    ]
    chunks = [t for t, _, _ in chunk_blocks(blocks, chunk_words=20, overlap_words=8)]
    for text in chunks:
        first = split_sentences(text)[0]
        assert not text.endswith(("Ending the tenancy.", "Parking")), text  # a heading never ends a chunk
        if "Ending the tenancy." in text:
            assert first == "Ending the tenancy." and "written notice" in text
        if "Parking" in text:
            assert text.startswith("Parking\n\nResidents park")  # no overlap before a heading
    assert sum("Ending the tenancy." in t for t in chunks) == 1 and sum("Parking" in t for t in chunks) == 1


def test_an_abbreviation_ending_a_long_piece_still_joins_the_next():
    # only the piece's last characters are searched for an abbreviation: a long one must still join
    long = "The committee, after a great deal of discussion over many months, wrote to " * 4
    assert split_sentences(f"{long}Dr. Smith about it. Then it met again.") == [
        f"{long}Dr. Smith about it.".strip(), "Then it met again."]
    assert split_sentences("Er kam am 7. Januar 1943 an. Dann ging er.") == ["Er kam am 7. Januar 1943 an.", "Dann ging er."]
