"""The library's German share, counted from its word counts, and the note for an English-only embedder."""

from __future__ import annotations

import pyarrow as pa
import pytest

from assistant.library_language import NOTE_FROM, embedder_note, german_share
from knowledge.vector_cache import library_words

ENGLISH = "The exam is graded by two examiners and it can be repeated once if the deadline has not passed."
GERMAN = "Die Prüfung wird von zwei Prüfern bewertet, und sie kann einmal wiederholt werden, wenn die Frist noch läuft."


def _words(*texts: str):
    return library_words(pa.table({"title": [""] * len(texts), "chunk_text": list(texts)}))


def test_the_share_follows_the_texts_languages():
    assert german_share(_words(ENGLISH, ENGLISH)) == 0.0
    assert german_share(_words(GERMAN)) == 1.0
    mixed = german_share(_words(ENGLISH, GERMAN))
    assert mixed is not None and 0.3 < mixed < 0.7
    assert german_share(_words("1234 5678")) is None  # no function word of either language
    assert german_share(None) is None


@pytest.mark.parametrize("identity", ["minilm-l6-v2", "minilm-l6-v2-wmax"])
def test_the_note_is_for_a_german_or_mixed_library_and_the_english_embedder(identity):
    note = embedder_note(german_share(_words(ENGLISH, GERMAN)), identity)
    assert note is not None and "German text" in note and "embedder.text_model" in note
    assert embedder_note(german_share(_words(ENGLISH)), identity) is None
    assert embedder_note(NOTE_FROM - 0.01, identity) is None


def test_no_note_for_another_embedder():
    assert embedder_note(1.0, "st-multilingual-e5-small-p1a2b3c") is None
    assert embedder_note(1.0, None) is None


def test_a_library_whose_words_cannot_be_read_gets_no_note_and_no_error(caplog):
    from assistant.library_language import library_note

    class Unreadable:
        def view(self):
            raise OSError("the snapshot is gone")

    class Readable:
        def view(self):
            return self

        def vocabulary(self):
            return _words(GERMAN)

    assert library_note(Unreadable(), "minilm-l6-v2") is None
    assert "word counts" in caplog.text
    assert "German text" in (library_note(Readable(), "minilm-l6-v2") or "")
