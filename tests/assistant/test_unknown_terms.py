"""The unknown-term rule with the bundled English word list and a real library's words."""

from __future__ import annotations

from assistant.unknown_terms import unknown_terms

LIBRARY = sorted({"lilypond", "slur", "slurs", "shortcut", "adding", "score", "scores", "muse", "import", "file", "jupiter"})


def test_a_camel_case_name_the_library_never_mentions_is_unknown_even_when_its_pieces_are_english():
    assert unknown_terms("What's the MuseScore shortcut for adding a slur?", LIBRARY) == ["musescore"]
    assert unknown_terms("what's the musescore shortcut for adding a slur?", LIBRARY) == []  # two English words joined


def test_words_the_library_holds_or_ordinary_words_are_not_terms():
    assert unknown_terms("How do I add a slur in LilyPond?", LIBRARY) == []
    assert unknown_terms("Can I import a file into Lillypond?", LIBRARY) == []  # a typo of a library word
    assert unknown_terms("How do I import a MusicXML file into LilyPond?", LIBRARY) == ["musicxml"]
