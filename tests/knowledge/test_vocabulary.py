"""The library's vocabulary (knowledge/vocabulary.py): which words are terms, and the file an ingest
keeps beside a real LanceDB library."""

from __future__ import annotations

from pathlib import Path

from knowledge.ingest import Ingestor
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore
from knowledge.vocabulary import Vocabulary, build_vocabulary, read_vocabulary, vocabulary_path
from tests.audio_data import R_MANUAL

MANUALS = """LilyPond is a music engraving program. LilyPond input uses \\relative and \\clef; in
absolute mode \\relative is not needed. The AMC-TXT format of AMC is plain text, e.g. for exams, and
AMC-TXT files are simple. Debian packages call dpkg-shlibdeps; dpkg-shlibdeps reads the symbols, and
dpkg-shlibdeps writes substvars. Edit LilyPond files with Frescobaldi. Frescobaldi is an editor.
The session ends and the package is built; the user reads the manual again. Notes: c4 d8 e8 c4.
Die Pr¨ufung beginnt; die Pr¨ufung endet."""


def _texts(vocab: Vocabulary) -> set[str]:
    return set(vocab.texts())


def test_terms_are_the_librarys_own_words_not_common_ones() -> None:
    vocab = build_vocabulary([("Manuals", "Engraving with LilyPond", MANUALS)])
    terms = _texts(vocab)
    assert {"LilyPond", "\\relative", "AMC-TXT", "dpkg-shlibdeps", "Frescobaldi"} <= terms
    for common in ("session", "package", "manual", "e.g", "c4", "Prufung", "ufung"):
        assert common not in terms  # common words, an abbreviation, a note, a split umlaut
    assert vocab.terms[0].text == "LilyPond"  # most used, and in the heading


def test_a_one_letter_name_is_a_term_where_the_library_names_it() -> None:
    r_terms = build_vocabulary([("An Introduction to R", "", R_MANUAL)])
    assert r_terms.terms[0].text == "R" and r_terms.terms[0].kind == "letter"
    assert "Rscript" in _texts(r_terms)
    other = build_vocabulary([("Manuals", "", MANUALS + " Option A is the default; I use it.")])
    assert not {"A", "I", "R"} & _texts(other)


def test_a_name_the_library_also_writes_as_its_words_is_no_term() -> None:
    text = ("Set fontSize to make notes smaller: fontSize = -2 shrinks them. The font size of "
            "fingering numbers is set apart, and a larger font size is easier to read. The paper.type "
            "parameter gives the paper type. LilyPond uses TimeSignature; the TimeSignature object prints it. ")
    terms = _texts(build_vocabulary([("Manuals", "", text * 3)]))
    assert "fontSize" not in terms  # "font size" as words in 2 of its 4 uses: heard words stay words
    assert {"TimeSignature", "LilyPond", "paper.type"} <= terms  # never apart; a mark the search splits at


def test_a_piece_of_a_word_a_line_break_cut_is_no_term() -> None:
    text = " ".join(["The paper.type parameters set the page; these parameters matter."] * 10
                    + ["Some param", "eters stay.", "Set DEB_", "BUILD_OPTIONS and DEB_BUILD_OPTIONS."] * 3
                    + ["The flonkerator runs; flonkerator runs again; the flonkerator stops."])  # fmt: skip
    terms = _texts(build_vocabulary([("Manual", "", text)]))
    assert {"paper.type", "DEB_BUILD_OPTIONS", "flonkerator"} <= terms
    assert not {"eters", "DEB_"} & terms, terms


def test_vocabulary_round_trips_through_its_file(tmp_path: Path) -> None:
    vocab = build_vocabulary([("R", "", R_MANUAL)], version=7)
    again = Vocabulary.from_json(vocab.to_json())
    assert again == vocab and again.version == 7


def test_ingest_keeps_the_vocabulary_beside_the_library(tmp_path: Path, minilm) -> None:
    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "r-intro.md").write_text(R_MANUAL, encoding="utf-8")
    uri = str(tmp_path / "data" / "lancedb")
    store = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings())
    Ingestor(store, minilm, IngestSettings()).ingest([lib])
    path = vocabulary_path(uri, store.name)
    assert path is not None and path.is_file()
    vocab = read_vocabulary(uri, store.name)
    assert vocab is not None and vocab.version == int(store.table.version)
    assert vocab.terms[0].text == "R"
    # a second file changes the library: the next ingest rebuilds the vocabulary
    (lib / "manuals.md").write_text(MANUALS, encoding="utf-8")
    Ingestor(store, minilm, IngestSettings()).ingest([lib])
    vocab = read_vocabulary(uri, store.name)
    assert vocab is not None and vocab.version == int(store.table.version)
    assert {"R", "LilyPond", "AMC-TXT"} <= _texts(vocab)
